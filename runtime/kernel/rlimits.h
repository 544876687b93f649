// Per-process resource limits of the command (setrlimit). They bind each
// process, not the tree: the run's cgroup does that (memory, tasks, CPU).
#pragma once

#include "plan/plan.h"

namespace aasm::rlimits {

// RLIMIT_NOFILE and RLIMIT_FSIZE from the plan, RLIMIT_CORE 0 always (a
// core dump would write the command's memory, secrets included, to disk).
// Returns 0 or errno. Async-signal-safe.
int apply(const plan::ProcessSettings* settings);

}  // namespace aasm::rlimits
