#include "kernel/signals.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aasm::signals {

uint64_t ignored() {
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ~uint64_t(0);
  char text[4096];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return ~uint64_t(0);
  text[n] = '\0';
  // "SigIgn:\t0000000000001000": all 64 signals in hex (the sigignore field
  // of /proc/self/stat, cheaper to produce, leaves out signals 32-64).
  const char* at = std::strstr(text, "\nSigIgn:\t");
  if (!at) return ~uint64_t(0);
  at += sizeof "\nSigIgn:\t" - 1;
  uint64_t mask = 0;
  int digits = 0;
  for (; digits < 16; ++at, ++digits) {
    const char c = *at;
    const int value = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (value < 0) break;
    mask = mask << 4 | uint64_t(value);
  }
  return digits == 16 ? mask : ~uint64_t(0);
}

int reset_to_default(uint64_t mask) {
  // The kernel's struct: glibc's sigaction() refuses its own real-time
  // signals (32, 33), which a parent may have ignored all the same.
  struct {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    uint64_t mask;
  } default_action{SIG_DFL, 0, nullptr, 0};
  for (int sig = 1; sig <= 64; ++sig) {
    if (!(mask & (uint64_t(1) << (sig - 1))) || sig == SIGKILL || sig == SIGSTOP) continue;
    if (::syscall(SYS_rt_sigaction, sig, &default_action, nullptr, sizeof default_action.mask) != 0) return errno;
  }
  return 0;
}

}  // namespace aasm::signals
