// Host names of network.outbound.hosts (docs/egress.md): the one definition
// of what a pattern is, what it matches and where two meet, for the compiler
// (parse, merge, the plan's egress section) and the launcher's broker alike.
//
//   api.example.com        that name, on the web ports (80, 443)
//   *.example.com:8443     every name beneath example.com (not example.com itself), on 8443
//   192.0.2.1:443          that IPv4 address, written as an address
//   [2001:db8::1]          that IPv6 address, on the web ports
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace aasm::plan {

// The ports of a pattern without ":PORT": the two an HTTP(S) proxy client
// asks for. Any other port is written out.
inline constexpr uint16_t kWebPorts[] = {80, 443};

struct HostPattern {
  enum class Kind : uint8_t { kName = 0, kSuffix = 1, kAddress = 2 };
  Kind kind = Kind::kName;
  // Lowercase, no trailing dot. kSuffix: the suffix without "*."; kAddress:
  // the address as inet_ntop writes it (IPv6 without brackets).
  std::string host;
  uint16_t port = 0;  // 0: kWebPorts
  bool operator==(const HostPattern&) const = default;
  auto operator<=>(const HostPattern&) const = default;
};

// The pattern `text` writes, or why it is none.
Result<HostPattern> parse_host_pattern(std::string_view text);
// The canonical spelling, which parse_host_pattern reads back to the same pattern.
std::string host_pattern_text(const HostPattern& pattern);

// What a client asked to reach, as the broker reads it: a name (lowercase,
// no trailing dot) or an address, and a port.
struct HostRequest {
  std::string host;
  bool address = false;  // host is an IPv4 or IPv6 literal, in inet_ntop's spelling
  uint16_t port = 0;
};
// "host:port" as a client writes it, an IPv6 address in brackets; without
// ":port" where port is 0.
std::string host_port_text(std::string_view host, uint16_t port);

// The request a client's "host:port" (or "[v6]:port") names, or why it names
// none. Whatever inet_aton reads as IPv4 ("127.1", "0x7f.0.0.1",
// "2130706433") is an address, in dotted form: the resolver would read it so.
Result<HostRequest> parse_host_request(std::string_view authority, uint16_t default_port);

// Whether `pattern` covers `request`. A pattern without a port covers the
// web ports in an allow-list; in a deny-list (`unwritten_port_is_any`)
// every port, so that denying a name never leaves it one port open.
bool host_matches(const HostPattern& pattern, const HostRequest& request, bool unwritten_port_is_any = false);
// The pattern allowing exactly what both allow, where that is one pattern
// (two suffixes, or a name and a suffix, nest or are disjoint).
std::optional<HostPattern> meet(const HostPattern& a, const HostPattern& b);

}  // namespace aasm::plan
