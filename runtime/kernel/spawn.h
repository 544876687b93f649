// Starting the command's process: the kernel facility behind fork, chosen
// for launch speed and for where the child starts.
//
// Without a cgroup directory: clone(CLONE_VM | CLONE_VFORK), as posix_spawn
// does. The child runs in the supervisor's memory, on a stack of its own,
// until it execs, so no page table is copied and the supervisor takes no
// copy-on-write faults afterwards; the supervisor is suspended until then.
//
// With a cgroup v2 directory: clone3(CLONE_INTO_CGROUP | CLONE_VFORK), so
// the child is never outside its cgroup and no migration happens. clone3
// with CLONE_VM would need an assembly trampoline for the new stack, so this
// child gets a copy of the supervisor's memory, as after fork.
//
// In both, `namespaces` (CLONE_NEW* flags) are created with the child: a new
// PID namespace makes it PID 1 there, and a new user namespace owns every
// other namespace created with it.
#pragma once

#include <sys/types.h>

namespace aasm::spawn {

struct Options {
  int namespaces = 0;          // CLONE_NEW* flags
  int cgroup_v2_fd = -1;       // a cgroup v2 directory for CLONE_INTO_CGROUP; -1: none
  pid_t* pid_slot = nullptr;   // where the kernel stores the child's pid before it runs (CLONE_PARENT_SETTID)
};

// Runs `child(argument)` in a new process, which must exec or _exit (its
// return value becomes its exit status). Returns the child's pid once the
// child has exec'd or exited, or -errno. Every signal is blocked across the
// clone; the child starts with all signals blocked and the caller's
// dispositions, and must set both itself.
pid_t start(const Options& options, int (*child)(void*), void* argument);

}  // namespace aasm::spawn
