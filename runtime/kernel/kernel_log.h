// The kernel's record of a seccomp kill: with audit not running, the kernel
// prints each kill as an audit record (type=1326, AUDIT_SECCOMP) to its log,
// which /dev/kmsg reads record by record. Reading it needs CAP_SYSLOG where
// kernel.dmesg_restrict is 1; the launcher never changes what the host logs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aasm::kernel_log {

// /dev/kmsg positioned after its last record (only what comes later is
// read), close-on-exec and non-blocking; or -errno (EPERM: no CAP_SYSLOG).
int open_at_end();

// Why open_at_end() failed with -`error`, and what would let it read
// ("the kernel log cannot be read here (/dev/kmsg: EPERM; ...)").
std::string unreadable_text(int error);

struct SeccompKill {
  uint32_t arch = 0;  // AUDIT_ARCH_*
  int syscall = -1;
};

// The seccomp kill records of `pid` in `log` from where it stands, waiting
// up to `wait_ms` for the first (the kernel prints audit records from its
// own thread, a little after the kill).
std::vector<SeccompKill> seccomp_kills(int log, pid_t pid, int wait_ms);

}  // namespace aasm::kernel_log
