// SOCKS5 (RFC 1928) as the egress broker speaks it: no authentication,
// CONNECT only, a name, an IPv4 or an IPv6 address. The name a client sends
// (socks5h://) is checked like a CONNECT's; an address only where the plan
// lists it. BIND and UDP ASSOCIATE are refused: one client connection, one
// upstream connection, as for HTTP.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace aasm::egress::socks5 {

inline constexpr uint8_t kVersion = 5;  // a client's first byte: how the broker tells SOCKS5 from HTTP

enum class Reply : uint8_t {
  kSucceeded = 0,
  kGeneralFailure = 1,
  kNotAllowed = 2,  // "connection not allowed by ruleset": what the plan refuses
  kHostUnreachable = 4,
  kCommandNotSupported = 7,
  kAddressTypeNotSupported = 8,
};

// Reads the greeting, answers it, and reads the request: the authority it
// names ("name:port", "a.b.c.d:port", "[v6]:port"). Where the client offers
// no method the broker takes, or asks for another command or address type,
// the answer is sent here and the error says why.
Result<std::string> read_connect(int client, int timeout_ms);

// The reply to a request, bound address unspecified.
std::string reply(Reply code);

}  // namespace aasm::egress::socks5
