#include "kernel/loopback.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aasm::loopback {

int bring_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  ifreq request{};
  std::memcpy(request.ifr_name, "lo", 3);
  int error = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0 ? 0 : errno;
  request.ifr_flags = short(request.ifr_flags | IFF_UP | IFF_RUNNING);
  if (!error && ::ioctl(fd, SIOCSIFFLAGS, &request) != 0) error = errno;
  ::close(fd);
  return error;
}

int listen_on(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const int error = errno;
    ::close(fd);
    return -error;
  }
  return fd;
}

}  // namespace aasm::loopback
