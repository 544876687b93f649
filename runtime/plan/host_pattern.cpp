#include "plan/host_pattern.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace aasm::plan {
namespace {

bool is_label_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; }

// Letters, digits and '-' in dot-separated labels of 1-63, 253 in all (RFC 1123).
bool is_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  size_t start = 0;
  while (start <= name.size()) {
    const size_t end = std::min(name.find('.', start), name.size());
    const std::string_view label = name.substr(start, end - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-' ||
        !std::all_of(label.begin(), label.end(), is_label_char))
      return false;
    start = end + 1;
  }
  return true;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string> ipv6_text(const std::string& text) {
  in6_addr address{};
  if (::inet_pton(AF_INET6, text.c_str(), &address) != 1) return std::nullopt;
  char out[INET6_ADDRSTRLEN];
  return std::string(::inet_ntop(AF_INET6, &address, out, sizeof out));
}

// Every spelling the resolver takes for IPv4 (inet_aton: "127.1", octal,
// hex, one 32-bit number), in dotted form.
std::optional<std::string> ipv4_text(const std::string& text) {
  in_addr address{};
  if (text.empty() || ::inet_aton(text.c_str(), &address) == 0) return std::nullopt;
  char out[INET_ADDRSTRLEN];
  return std::string(::inet_ntop(AF_INET, &address, out, sizeof out));
}

struct Split {
  std::string host;
  bool bracketed = false;
  std::optional<uint16_t> port;
};

// "host", "host:port", "[v6]", "[v6]:port".
Result<Split> split_port(std::string_view text) {
  Split out;
  std::string_view rest;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return make_error("an IPv6 address opened with '[' is not closed with ']'");
    out.host = std::string(text.substr(1, close - 1));
    out.bracketed = true;
    rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return make_error("only ':PORT' may follow ']'");
  } else {
    const size_t colon = text.rfind(':');
    if (colon != std::string_view::npos && text.find(':') != colon)
      return make_error("an IPv6 address is written in brackets: [2001:db8::1]:443");
    out.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) rest = text.substr(colon);
  }
  if (!rest.empty()) {
    const std::string_view digits = rest.substr(1);
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port == 0 || port > 65535)
      return make_error("the port after ':' is not 1-65535");
    out.port = uint16_t(port);
  }
  return out;
}

bool ports_meet(uint16_t a, uint16_t b, uint16_t& out) {
  if (a == b) return out = a, true;
  const auto web = [](uint16_t p) { return std::find(std::begin(kWebPorts), std::end(kWebPorts), p) != std::end(kWebPorts); };
  if (a == 0 && web(b)) return out = b, true;
  if (b == 0 && web(a)) return out = a, true;
  return false;
}

bool port_allowed(uint16_t pattern_port, uint16_t port) {
  if (pattern_port != 0) return pattern_port == port;
  return std::find(std::begin(kWebPorts), std::end(kWebPorts), port) != std::end(kWebPorts);
}

// Whether `name` lies strictly beneath `suffix`: "a.example.com" beneath "example.com".
bool beneath(std::string_view name, std::string_view suffix) {
  return name.size() > suffix.size() + 1 && name.substr(name.size() - suffix.size()) == suffix &&
         name[name.size() - suffix.size() - 1] == '.';
}

}  // namespace

Result<HostPattern> parse_host_pattern(std::string_view text) {
  if (text.find('/') != std::string_view::npos)
    return make_error("'" + std::string(text) + "' is a URL or a path, not a host: write the host alone, as api.example.com or api.example.com:8443");
  auto split = split_port(text);
  if (!split) return split.error();
  HostPattern pattern;
  pattern.port = split->port.value_or(0);
  std::string host = lowercase(split->host);
  if (split->bracketed) {
    auto v6 = ipv6_text(host);
    if (!v6) return make_error("'" + host + "' in brackets is not an IPv6 address");
    pattern.kind = HostPattern::Kind::kAddress;
    pattern.host = *v6;
    return pattern;
  }
  if (auto v4 = ipv4_text(host)) {
    // Only the dotted quad: "127.1" in a policy is a typo more often than an address.
    if (*v4 != host) return make_error("'" + host + "' is an IPv4 address written short; write it as " + *v4);
    pattern.kind = HostPattern::Kind::kAddress;
    pattern.host = *v4;
    return pattern;
  }
  if (!host.empty() && host.back() == '.') host.pop_back();
  if (host.rfind("*.", 0) == 0) {
    pattern.kind = HostPattern::Kind::kSuffix;
    host.erase(0, 2);
  }
  if (host.find('*') != std::string::npos)
    return make_error("'*' stands only as the first label, as in *.example.com");
  if (!is_host_name(host))
    return make_error("'" + host + "' is not a host name (letters, digits and '-' in dot-separated labels)");
  if (pattern.kind == HostPattern::Kind::kSuffix && host.find('.') == std::string::npos)
    return make_error("'*." + host + "' would allow every name of a top-level domain; name the domain beneath it");
  pattern.host = std::move(host);
  return pattern;
}

std::string host_port_text(std::string_view host, uint16_t port) {
  std::string out = host.find(':') != std::string_view::npos ? "[" + std::string(host) + "]" : std::string(host);
  if (port) out += ":" + std::to_string(port);
  return out;
}

std::string host_pattern_text(const HostPattern& pattern) {
  return pattern.kind == HostPattern::Kind::kSuffix ? "*." + host_port_text(pattern.host, pattern.port)
                                                    : host_port_text(pattern.host, pattern.port);
}

Result<HostRequest> parse_host_request(std::string_view authority, uint16_t default_port) {
  auto split = split_port(authority);
  if (!split) return split.error();
  HostRequest request;
  request.port = split->port.value_or(default_port);
  std::string host = lowercase(split->host);
  if (split->bracketed) {
    auto v6 = ipv6_text(host);
    if (!v6) return make_error("'[" + host + "]' is not an IPv6 address");
    return HostRequest{*v6, true, request.port};
  }
  if (auto v4 = ipv4_text(host)) return HostRequest{*v4, true, request.port};
  if (!host.empty() && host.back() == '.') host.pop_back();
  if (!is_host_name(host)) return make_error("'" + host + "' is not a host name");
  request.host = std::move(host);
  return request;
}

bool host_matches(const HostPattern& pattern, const HostRequest& request, bool unwritten_port_is_any) {
  if (!(unwritten_port_is_any && pattern.port == 0) && !port_allowed(pattern.port, request.port)) return false;
  switch (pattern.kind) {
    case HostPattern::Kind::kAddress: return request.address && request.host == pattern.host;
    case HostPattern::Kind::kName: return !request.address && request.host == pattern.host;
    case HostPattern::Kind::kSuffix: return !request.address && beneath(request.host, pattern.host);
  }
  return false;
}

std::optional<HostPattern> meet(const HostPattern& a, const HostPattern& b) {
  uint16_t port = 0;
  if (!ports_meet(a.port, b.port, port)) return std::nullopt;
  using Kind = HostPattern::Kind;
  const auto with_port = [port](HostPattern p) {
    p.port = port;
    return p;
  };
  if (a.kind == Kind::kAddress || b.kind == Kind::kAddress || (a.kind == Kind::kName && b.kind == Kind::kName)) {
    if (a.kind == b.kind && a.host == b.host) return with_port(a);
    return std::nullopt;
  }
  if (a.kind == Kind::kSuffix && b.kind == Kind::kSuffix) {
    if (a.host == b.host || beneath(a.host, b.host)) return with_port(a);
    if (beneath(b.host, a.host)) return with_port(b);
    return std::nullopt;
  }
  const HostPattern& name = a.kind == Kind::kName ? a : b;
  const HostPattern& suffix = a.kind == Kind::kName ? b : a;
  if (beneath(name.host, suffix.host)) return with_port(name);
  return std::nullopt;
}

}  // namespace aasm::plan
