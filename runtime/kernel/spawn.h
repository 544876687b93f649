// Starting the command's process: the kernel facility behind fork, chosen
// for launch speed and for where the child starts.
//
// Without a cgroup directory: clone(CLONE_VM), as posix_spawn does. The
// child runs in the supervisor's memory, on a stack of its own, until it
// execs, so no page table is copied and the supervisor takes no
// copy-on-write faults afterwards. Unlike vfork, the supervisor is not
// suspended at once: it first runs `alongside` (the janitor's start) on the
// other CPU while the child does its confinement steps, then waits, on a
// futex the kernel clears when the child execs or exits
// (CLONE_CHILD_CLEARTID), just as vfork would have. The child waits for
// `alongside` to be done before its last steps (await_supervisor). While
// both run they share the thread-local errno, so whatever the child decides
// on must come from raw system call results (exec() below does); errno may
// only word a failure's message.
//
// With a cgroup v2 directory: clone3(CLONE_INTO_CGROUP | CLONE_VFORK), so
// the child is never outside its cgroup and no migration happens. clone3
// with CLONE_VM would need an assembly trampoline for the new stack, so this
// child gets a copy of the supervisor's memory, as after fork; `alongside`
// runs before it.
//
// In both, `namespaces` (CLONE_NEW* flags) are created with the child: a new
// PID namespace makes it PID 1 there, and a new user namespace owns every
// other namespace made in the same call.
//
// Traced (`trace_options`, for aasm-launch --explain): the supervisor
// becomes the child's tracer (PTRACE_SEIZE) before the child may go on, so
// before it installs anything that needs a tracer (a SECCOMP_RET_TRACE
// filter answers ENOSYS without one). The clone3 child is then started
// without CLONE_VFORK, which would keep the supervisor from seizing it, and
// waits on a shared page instead. Its own calls until exec may stop for the
// tracer (its execve is one), so instead of the futex the supervisor waits
// by ptrace, letting each stop go on, until the exec (PTRACE_EVENT_EXEC) or
// the child's end, which it leaves to be reaped by the caller.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>

namespace aasm::spawn {

// A descriptor the child makes in its last steps, after which it may make no
// system call but execve: the seccomp listener, whose own filter may send
// any later call of the child to it, and only the supervisor reads it. The
// child publishes the number and waits; the supervisor, waiting for the
// exec, copies it (pidfd_getfd(2), Linux 5.6) and says so. Where the
// child's filters allow futex whatever its arguments (`may_wake`), each side
// wakes the other with it; otherwise the child spins and the supervisor
// looks every millisecond. Only while sharing memory: with a cgroup v2
// directory the supervisor is suspended until the exec (CLONE_VFORK) and
// could not copy.
struct Handover {
  static constexpr int32_t kPending = -1;
  static constexpr int32_t kNone = -2;  // the child has nothing to hand over
  bool may_wake = false;
  std::atomic<int32_t> child_fd{kPending};
  std::atomic<int32_t> copy{kPending};  // the supervisor's copy, or -errno
};

struct Options {
  int namespaces = 0;          // CLONE_NEW* flags
  int cgroup_v2_fd = -1;       // a cgroup v2 directory for CLONE_INTO_CGROUP; -1: none
  pid_t* pid_slot = nullptr;   // where the kernel stores the child's pid before it runs (CLONE_PARENT_SETTID)
  unsigned trace_options = 0;  // nonzero: the supervisor traces the child, PTRACE_SEIZE with these PTRACE_O_* options
  Handover* handover = nullptr;  // without a cgroup v2 directory only; the child must call hand_over() once
};

// Runs `child(argument)` in a new process, which must call
// await_supervisor() and then end in exec() below or _exit (its return value
// becomes its exit status). `alongside` runs in the
// supervisor meanwhile; if it returns false, the child is killed and start
// returns -ECANCELED. Returns the child's pid once the child has exec'd or
// exited, or -errno. Every signal is blocked across the start; the child
// starts with all signals blocked and the caller's dispositions, and must
// set both itself. One start at a time per process.
pid_t start(const Options& options, int (*child)(void*), void* argument, const std::function<bool()>& alongside);

// For the child: execve of an open file (a pinned executable, checked
// through this descriptor): execveat(fd, "", AT_EMPTY_PATH), through the raw
// system call. Returns errno when it fails.
int exec_descriptor(int fd, char* const argv[], char* const envp[]);

// For the child: waits (futex) until the supervisor's `alongside` is done.
// Before the child installs anything that could forbid futex.
void await_supervisor();

// For the child: publishes `fd` (Handover::kNone: nothing) and waits until
// the supervisor has copied it. Returns the supervisor's
// copy or -errno; on -errno the supervisor kills the child, which must then
// only wait (its filter may not let it exit).
int32_t hand_over(Handover& handover, int32_t fd);

// For the child: execve through the raw system call, so it writes no errno
// the supervisor might be reading. Returns errno when execve fails.
int exec(const char* path, char* const argv[], char* const envp[]);

}  // namespace aasm::spawn
