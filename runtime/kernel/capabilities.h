// Dropping every capability of the calling thread, for good.
//
// Capabilities matter under Landlock: a confined process running as root
// with CAP_SYS_PTRACE still reads another root process's /proc/<pid>/environ
// (measured on Linux 6.18); without capabilities it cannot.
#pragma once

namespace aasm::capabilities {

// Clears the ambient set, drops every capability the kernel knows from the
// bounding set (up to the first number it calls invalid, instead of reading
// /proc/sys/kernel/cap_last_cap), locks the securebits so that none can come
// back through setuid/exec (when the thread may set them), and empties the
// effective, permitted and inheritable sets. Returns 0 or the errno of the
// failing step. Async-signal-safe.
int drop_all();

}  // namespace aasm::capabilities
