#include "kernel/kernel_log.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace aasm::kernel_log {
namespace {

// The value of ` key=` in an audit record, or "".
std::string_view field(std::string_view record, std::string_view key) {
  const std::string needle = " " + std::string(key) + "=";
  const size_t at = record.find(needle);
  if (at == std::string_view::npos) return {};
  const std::string_view rest = record.substr(at + needle.size());
  return rest.substr(0, rest.find_first_of(" \n"));
}

long number(std::string_view text, int base) {
  const std::string copy(text);
  char* end = nullptr;
  const long value = std::strtol(copy.c_str(), &end, base);
  return copy.empty() || *end ? -1 : value;
}

}  // namespace

int open_at_end() {
  const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -errno;
  if (::lseek(fd, 0, SEEK_END) < 0) {
    const int error = errno;
    ::close(fd);
    return -error;
  }
  return fd;
}

std::string unreadable_text(int error) {
  return std::string("the kernel log cannot be read here (/dev/kmsg: ") + strerrorname_np(error) +
         "; with kernel.dmesg_restrict it needs CAP_SYSLOG)";
}

std::vector<SeccompKill> seccomp_kills(int log, pid_t pid, int wait_ms) {
  std::vector<SeccompKill> kills;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  char buffer[8192];  // one record per read; a longer one fails with EINVAL and is skipped
  for (;;) {
    const ssize_t n = ::read(log, buffer, sizeof buffer);
    if (n < 0 && errno == EPIPE) continue;  // records overwritten meanwhile: on with the next
    if (n < 0 && errno == EINVAL) continue;
    if (n < 0 && errno == EAGAIN) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (!kills.empty() || left.count() <= 0) break;
      pollfd ready{log, POLLIN, 0};
      ::poll(&ready, 1, int(left.count()));
      continue;
    }
    if (n <= 0) break;
    const std::string_view record(buffer, size_t(n));
    // "PRIORITY,SEQUENCE,TIME,FLAGS;audit: type=1326 audit(...): ... pid=P ... sig=31 arch=HEX syscall=N ..."
    const size_t text = record.find(';');
    if (text == std::string_view::npos || record.find("audit: type=1326 ", text) != text + 1) continue;
    if (number(field(record, "pid"), 10) != pid || number(field(record, "sig"), 10) <= 0) continue;
    kills.push_back({uint32_t(number(field(record, "arch"), 16)), int(number(field(record, "syscall"), 10))});
  }
  return kills;
}

}  // namespace aasm::kernel_log
