// The calling thread's capabilities, reduced for good to what the plan keeps
// (isolation.linux_capabilities; by default none).
//
// Capabilities matter under Landlock: a confined process running as root
// with CAP_SYS_PTRACE still reads another root process's /proc/<pid>/environ
// (measured on Linux 6.18); without capabilities it cannot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aasm::capabilities {

// The kernel's numbering: CAP_CHOWN is 0 ... CAP_CHECKPOINT_RESTORE is 40.
inline constexpr int kCount = 41;
const char* name(int number);                             // nullptr past the table
std::optional<int> number(std::string_view name);        // "CAP_NET_BIND_SERVICE" -> 10
std::string names(uint64_t set);                         // "CAP_CHOWN, CAP_KILL", or "none"

// The calling thread's permitted set (capget), for checking before fork that
// the launcher holds what the plan keeps.
uint64_t permitted();

// Leaves the thread with exactly `kept` (bit N: capability N) in its
// effective, permitted, inheritable and ambient sets (ambient, so the kept
// ones survive execve without file capabilities), drops every other
// capability the kernel knows from the bounding set (up to the first number
// it calls invalid, instead of reading /proc/sys/kernel/cap_last_cap), and
// locks the securebits so that none can come back through setuid, exec as
// root, or an ambient raise (when the thread may set them). Returns 0 or the
// errno of the failing step. Async-signal-safe.
int restrict_to(uint64_t kept);

}  // namespace aasm::capabilities
