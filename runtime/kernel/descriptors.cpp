#include "kernel/descriptors.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace aasm::descriptors {
namespace {

constexpr long kSysCloseRange = 436;  // the same number on x86_64 and aarch64

int close_span(unsigned first, unsigned last) {
  if (first > last) return 0;
  if (::syscall(kSysCloseRange, first, last, 0) == 0) return 0;
  if (errno != ENOSYS) return errno;
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  const unsigned top = limit.rlim_cur < last ? unsigned(limit.rlim_cur) : last;
  for (unsigned fd = first; fd <= top && fd < 1u << 20; ++fd) ::close(int(fd));
  return 0;
}

}  // namespace

int close_inherited(Kept kept) {
  for (size_t i = 1; i < kept.size(); ++i)  // ascending, without a library call
    for (size_t j = i; j > 0 && kept[j - 1] > kept[j]; --j) {
      const int t = kept[j];
      kept[j] = kept[j - 1];
      kept[j - 1] = t;
    }
  unsigned next = 3;
  for (int keep : kept) {
    if (keep < int(next)) continue;
    if (int error = close_span(next, unsigned(keep) - 1)) return error;
    next = unsigned(keep) + 1;
  }
  return close_span(next, ~0u);
}

}  // namespace aasm::descriptors
