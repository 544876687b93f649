// Dropping every capability of the calling thread, for good.
//
// Capabilities matter under Landlock: a confined process running as root
// with CAP_SYS_PTRACE still reads another root process's /proc/<pid>/environ
// (measured on Linux 6.18); without capabilities it cannot.
#pragma once

namespace aasm::capabilities {

// The highest capability number this kernel knows (/proc/sys/kernel/cap_last_cap),
// read by the supervisor before fork; 63 when it cannot be read.
int last_capability();

// Clears the ambient set, drops every capability up to `last_cap` from the
// bounding set, locks the securebits so that none can come back through
// setuid/exec (when the thread may set them), and empties the effective,
// permitted and inheritable sets. Returns 0 or the errno of the failing
// step. Async-signal-safe.
int drop_all(int last_cap);

}  // namespace aasm::capabilities
