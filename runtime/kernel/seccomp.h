// Seccomp applier: install a precompiled classic-BPF program. No libseccomp
// here: the plan already holds the program the compiler built.
#pragma once

#include <linux/seccomp.h>

#include <linux/filter.h>

#include <vector>

#include "plan/plan.h"

namespace aasm::seccomp {

// The program in the kernel's layout, prepared before fork so the child only
// makes one system call.
struct PreparedFilter {
  std::vector<sock_filter> instructions;
  sock_fprog program{};
};

PreparedFilter prepare(const plan::SeccompProgram& program);

// Installs the filter on the calling thread; returns errno on failure.
// Async-signal-safe. Requires no_new_privs (or CAP_SYS_ADMIN).
int install(PreparedFilter& filter);

// Whether the kernel knows a filter return action (SECCOMP_RET_*), by
// SECCOMP_GET_ACTION_AVAIL: for --dry-run and doctor.
bool action_available(uint32_t action);

// The filter return actions by the kernel's names (SECCOMP_RET_KILL_PROCESS:
// "kill_process"), as --dry-run and doctor report them.
struct ActionName {
  const char* name;
  uint32_t action;
};
inline constexpr ActionName kActionNames[] = {
    {"kill_process", SECCOMP_RET_KILL_PROCESS}, {"kill_thread", SECCOMP_RET_KILL_THREAD},
    {"trap", SECCOMP_RET_TRAP},                 {"errno", SECCOMP_RET_ERRNO},
    {"user_notif", SECCOMP_RET_USER_NOTIF},     {"trace", SECCOMP_RET_TRACE},
    {"log", SECCOMP_RET_LOG},                   {"allow", SECCOMP_RET_ALLOW},
};
// `action`'s name in kActionNames ("?" for one it does not list).
constexpr const char* action_name(uint32_t action) {
  for (const ActionName& a : kActionNames)
    if (a.action == action) return a.name;
  return "?";
}

}  // namespace aasm::seccomp
