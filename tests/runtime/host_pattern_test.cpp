// The one definition of a host pattern (plan/host_pattern.h): what it
// accepts and refuses, its canonical spelling, what a request names, what
// matches, and where two patterns meet.
#include <doctest/doctest.h>

#include "plan/host_pattern.h"

using aasm::plan::HostPattern;
using Kind = aasm::plan::HostPattern::Kind;

namespace {

HostPattern pattern(const char* text) {
  auto p = aasm::plan::parse_host_pattern(text);
  REQUIRE_MESSAGE(p, text, ": ", p ? "" : p.error().message);
  return *p;
}

aasm::plan::HostRequest request(const char* authority, uint16_t default_port = 443) {
  auto r = aasm::plan::parse_host_request(authority, default_port);
  REQUIRE_MESSAGE(r, authority, ": ", r ? "" : r.error().message);
  return *r;
}

}  // namespace

TEST_CASE("host patterns: each spelling parses to one canonical pattern") {
  struct {
    const char* text;
    Kind kind;
    const char* host;
    uint16_t port;
    const char* canonical;
  } const cases[] = {
      {"api.example.com", Kind::kName, "api.example.com", 0, "api.example.com"},
      {"API.Example.COM.", Kind::kName, "api.example.com", 0, "api.example.com"},
      {"*.example.com:8443", Kind::kSuffix, "example.com", 8443, "*.example.com:8443"},
      {"192.0.2.1:443", Kind::kAddress, "192.0.2.1", 443, "192.0.2.1:443"},
      {"[2001:DB8:0::1]", Kind::kAddress, "2001:db8::1", 0, "[2001:db8::1]"},
      {"[::ffff:192.0.2.1]:80", Kind::kAddress, "::ffff:192.0.2.1", 80, "[::ffff:192.0.2.1]:80"},
      {"localhost", Kind::kName, "localhost", 0, "localhost"},
  };
  for (const auto& c : cases) {
    INFO(std::string(c.text));
    const HostPattern p = pattern(c.text);
    CHECK(p.kind == c.kind);
    CHECK(p.host == c.host);
    CHECK(p.port == c.port);
    CHECK(aasm::plan::host_pattern_text(p) == c.canonical);
    CHECK(pattern(c.canonical) == p);
  }
}

TEST_CASE("host patterns: what is not one is refused, saying why") {
  struct {
    const char* text;
    const char* why;
  } const cases[] = {
      {"", "not a host name"},
      {"http://api.example.com/", "URL or a path"},
      {"api.*.example.com", "first label"},
      {"*.com", "top-level domain"},
      {"*", "first label"},
      {"127.1", "written short"},
      {"2130706433", "written short"},
      {"0x7f.0.0.1", "written short"},
      {"a.example.com:0", "1-65535"},
      {"a.example.com:65536", "1-65535"},
      {"a.example.com:", "1-65535"},
      {"a.example.com:+80", "1-65535"},
      {"2001:db8::1", "in brackets"},
      {"[2001:db8::1", "not closed"},
      {"[192.0.2.1]", "not an IPv6 address"},
      {"[::1]x", "only ':PORT'"},
      {"-a.example.com", "not a host name"},
      {"a..example.com", "not a host name"},
      {"a_b.example.com", "not a host name"},
  };
  for (const auto& c : cases) {
    INFO(std::string(c.text));
    const auto p = aasm::plan::parse_host_pattern(c.text);
    REQUIRE(!p);
    INFO(p.error().message);
    CHECK(p.error().message.find(c.why) != std::string::npos);
  }
}

TEST_CASE("host requests: every IPv4 spelling the resolver reads is an address") {
  for (const char* spelling : {"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1"}) {
    INFO(spelling);
    const auto r = request(spelling);
    CHECK(r.address);
    CHECK(r.host == "127.0.0.1");
  }
  CHECK(request("[::1]:8080").host == "::1");
  CHECK(request("[::1]:8080").port == 8080);
  CHECK(request("Example.COM.").host == "example.com");
  CHECK(request("example.com", 80).port == 80);
  CHECK(!aasm::plan::parse_host_request("exa mple.com", 443));
  // What a SOCKS5 client may put in its one-byte-length name: no port, no
  // second host, no byte a name does not have.
  for (const std::string& name : {std::string("example.com:80:443"), std::string("a\0b.com", 7), std::string("a b"),
                                  std::string("example.com/x"), std::string("[::1")}) {
    INFO(name);
    CHECK(!aasm::plan::parse_host_request(name + ":443", 443));
  }
}

TEST_CASE("host requests: written back as a client writes them, IPv6 in brackets, each read back the same") {
  using aasm::plan::host_port_text;
  CHECK(host_port_text("::1", 8080) == "[::1]:8080");
  CHECK(host_port_text("::1", 0) == "[::1]");
  CHECK(host_port_text("127.0.0.1", 443) == "127.0.0.1:443");
  CHECK(host_port_text("example.com", 0) == "example.com");
  for (const char* text : {"[2001:db8::1]:8443", "192.0.2.1:80", "api.example.com:443"})
    CHECK(host_port_text(request(text).host, request(text).port) == text);
}

TEST_CASE("host matching: names, suffixes beneath their domain, addresses as addresses, ports") {
  CHECK(host_matches(pattern("api.example.com"), request("api.example.com:443")));
  CHECK(host_matches(pattern("api.example.com"), request("api.example.com:80")));
  CHECK(!host_matches(pattern("api.example.com"), request("api.example.com:22")));
  CHECK(host_matches(pattern("api.example.com"), request("api.example.com:22"), /*unwritten_port_is_any=*/true));
  CHECK(!host_matches(pattern("api.example.com:8443"), request("api.example.com:22"), true));
  CHECK(host_matches(pattern("*.example.com"), request("a.b.example.com")));
  CHECK(!host_matches(pattern("*.example.com"), request("example.com")));
  CHECK(!host_matches(pattern("*.example.com"), request("badexample.com")));
  CHECK(!host_matches(pattern("api.example.com"), request("api.example.com.evil.test")));
  CHECK(host_matches(pattern("127.0.0.1"), request("127.1")));
  CHECK(!host_matches(pattern("localhost"), request("127.0.0.1")));  // a name never covers an address
  CHECK(!host_matches(pattern("127.0.0.1"), request("localhost")));
  CHECK(host_matches(pattern("[2001:db8::1]:443"), request("[2001:DB8::0:1]:443")));
}

TEST_CASE("host meet: what both allow, or nothing") {
  const auto meet = [](const char* a, const char* b) -> std::string {
    const auto m = aasm::plan::meet(pattern(a), pattern(b));
    return m ? aasm::plan::host_pattern_text(*m) : "-";
  };
  CHECK(meet("*.example.com", "api.example.com") == "api.example.com");
  CHECK(meet("api.example.com", "*.example.com") == "api.example.com");
  CHECK(meet("*.example.com", "*.b.example.com") == "*.b.example.com");
  CHECK(meet("*.example.com", "example.com") == "-");
  CHECK(meet("*.a.test", "*.b.test") == "-");
  CHECK(meet("a.test", "a.test:443") == "a.test:443");
  CHECK(meet("a.test:443", "a.test:8443") == "-");
  CHECK(meet("a.test", "a.test:8443") == "-");  // no port written: the web ports only
  CHECK(meet("192.0.2.1", "192.0.2.1:80") == "192.0.2.1:80");
  CHECK(meet("192.0.2.1", "*.example.com") == "-");
  // The meet is symmetric and never wider than either side.
  for (const char* a : {"a.example.com", "*.example.com", "a.example.com:8443", "192.0.2.1"})
    for (const char* b : {"a.example.com", "*.example.com", "*.x.example.com:80", "192.0.2.1:443"}) {
      INFO(a, " ", b);
      CHECK(meet(a, b) == meet(b, a));
      if (const auto m = aasm::plan::meet(pattern(a), pattern(b))) {
        for (const char* probe : {"a.example.com:443", "a.example.com:8443", "q.x.example.com:80", "192.0.2.1:443"})
          if (host_matches(*m, request(probe)))
            CHECK((host_matches(pattern(a), request(probe)) && host_matches(pattern(b), request(probe))));
      }
    }
}
