// The broker's socket writes (egress_broker.cpp, socks5.cpp): all of
// `data`, across partial sends, never SIGPIPE; false when the peer left.
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <string_view>

namespace aasm::egress {

inline bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(size_t(n));
  }
  return true;
}

}  // namespace aasm::egress
