#include "supervisor/socks5.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "supervisor/socket_io.h"

namespace aasm::egress::socks5 {
namespace {

constexpr uint8_t kNoAuthentication = 0x00, kNoAcceptableMethod = 0xFF;
constexpr uint8_t kConnect = 0x01;
constexpr uint8_t kIPv4 = 0x01, kName = 0x03, kIPv6 = 0x04;

// Exactly `n` bytes, each read within `timeout_ms`; false when the client
// closed or stalled.
bool read_exact(int fd, uint8_t* out, size_t n, int timeout_ms) {
  while (n > 0) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    const ssize_t got = ::recv(fd, out, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= size_t(got);
  }
  return true;
}

Error refuse(int client, Reply code, std::string why) {
  write_all(client, reply(code));
  return make_error(std::move(why));
}

}  // namespace

std::string reply(Reply code) {
  return std::string{char(kVersion), char(code), 0, char(kIPv4), 0, 0, 0, 0, 0, 0};
}

Result<std::string> read_connect(int client, int timeout_ms) {
  uint8_t greeting[2], methods[255];
  if (!read_exact(client, greeting, 2, timeout_ms) || greeting[0] != kVersion ||
      !read_exact(client, methods, greeting[1], timeout_ms))
    return make_error("no complete SOCKS5 greeting");
  if (std::find(methods, methods + greeting[1], kNoAuthentication) == methods + greeting[1]) {
    write_all(client, std::string{char(kVersion), char(kNoAcceptableMethod)});
    return make_error("a SOCKS5 client that offers no method without authentication");
  }
  if (!write_all(client, std::string{char(kVersion), char(kNoAuthentication)})) return make_error("the client left");
  uint8_t request[4];
  if (!read_exact(client, request, 4, timeout_ms) || request[0] != kVersion)
    return make_error("no complete SOCKS5 request");
  if (request[1] != kConnect)
    return refuse(client, Reply::kCommandNotSupported, "a SOCKS5 command other than CONNECT (BIND, UDP ASSOCIATE)");
  std::string host;
  uint8_t bytes[256];
  if (request[3] == kIPv4 || request[3] == kIPv6) {
    const size_t length = request[3] == kIPv4 ? 4 : 16;
    char text[INET6_ADDRSTRLEN];
    if (!read_exact(client, bytes, length, timeout_ms)) return make_error("no complete SOCKS5 request");
    ::inet_ntop(request[3] == kIPv4 ? AF_INET : AF_INET6, bytes, text, sizeof text);
    host = request[3] == kIPv4 ? text : "[" + std::string(text) + "]";
  } else if (request[3] == kName) {
    if (!read_exact(client, bytes, 1, timeout_ms) || !read_exact(client, bytes + 1, bytes[0], timeout_ms))
      return make_error("no complete SOCKS5 request");
    host.assign(reinterpret_cast<const char*>(bytes + 1), bytes[0]);
  } else {
    return refuse(client, Reply::kAddressTypeNotSupported, "a SOCKS5 address type other than a name, IPv4 or IPv6");
  }
  uint8_t port[2];
  if (!read_exact(client, port, 2, timeout_ms)) return make_error("no complete SOCKS5 request");
  return host + ":" + std::to_string(unsigned(port[0]) << 8 | port[1]);
}

}  // namespace aasm::egress::socks5
