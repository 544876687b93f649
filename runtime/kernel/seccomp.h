// Seccomp applier: install a precompiled classic-BPF program. No libseccomp
// here: the plan already holds the program the compiler built.
#pragma once

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

}  // namespace aasm::seccomp
