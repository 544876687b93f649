// Per-process resource limits of the command (setrlimit). They bind each
// process, not the tree: the run's cgroup does that (memory, tasks, CPU).
#pragma once

#include "plan/plan.h"

namespace aasm::rlimits {

// How the tree's limits are held: by the run's cgroup, or, where no cgroup
// could be had and the plan lets `resource` degrade, by per-process rlimits
// standing in for them: RLIMIT_AS for the memory ceiling (each process, not
// the tree) and RLIMIT_NPROC for the task ceiling (every process of the
// user, and not binding root at all). Swap and CPU have no stand-in.
enum class TreeLimits { kCgroup, kPerProcessStandIns };

// RLIMIT_NOFILE and RLIMIT_FSIZE from the plan, RLIMIT_CORE 0 always (a
// core dump would write the command's memory, secrets included, to disk),
// and the stand-ins above when asked. Returns 0 or errno. Async-signal-safe.
int apply(const plan::ProcessSettings* settings, TreeLimits tree = TreeLimits::kCgroup);

}  // namespace aasm::rlimits
