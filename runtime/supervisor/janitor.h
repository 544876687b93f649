// The janitor: a small process the supervisor starts before the command. It
// waits on the supervisor's pidfd; if the supervisor exits without having
// said it is done (kill -9), the janitor kills what the supervisor would
// have killed: the command's process group, and, when the run has cgroups,
// empties and removes them by the supervisor's own rules and code
// (cgroup_sweep.h: freeze, kill every task of every group and of the groups
// beneath them, prove them empty, remove them deepest first). The
// parent-death signal covers the command itself; the janitor covers its
// descendants, including those that left its session or moved into a group
// of their own beneath the run's.
//
// It shares the supervisor's memory (clone(CLONE_VM), no page tables copied)
// and makes only raw system calls (kernel/raw_syscall.h), so it never writes
// the errno both processes see. What it needs is laid out in plain arrays
// before it starts; the command's pid arrives through its pid slot. One per
// process.
#pragma once

#include <sys/types.h>

#include <atomic>

#include "base/result.h"
#include "supervisor/cgroup_sweep.h"

namespace aasm {

class Janitor {
 public:
  // Watches the calling process. `cgroups`: the run's groups
  // (RunCgroup::sweep_targets(); none without a cgroup), copied.
  static Result<Janitor> start(const cgroup::sweep::Targets& cgroups);
  Janitor(Janitor&& other) noexcept;
  Janitor& operator=(Janitor&&) = delete;
  ~Janitor();

  // Where the command's pid goes, set by the kernel as the command is
  // created (spawn::Options::pid_slot), before or after the janitor starts;
  // its process group has the same id.
  static pid_t* pid_slot();

  // The supervisor cleaned up itself: the janitor leaves without acting.
  void release();

  struct Shared;  // what the janitor process reads (janitor.cpp)

 private:
  explicit Janitor(Shared* shared) : shared_(shared) {}
  Shared* shared_ = nullptr;
};

}  // namespace aasm
