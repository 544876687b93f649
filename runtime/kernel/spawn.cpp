#include "kernel/spawn.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace aasm::spawn {
namespace {

// The child runs on a buffer in this frame of the supervisor's own stack,
// as vfork's child runs on the parent's stack: the supervisor is suspended
// until the child execs, its frames lie above the buffer, and below it is
// the rest of the main stack with the kernel's guard gap. No mapping to make
// and unmake per launch.
constexpr size_t kStackBytes = 128 * 1024;

[[gnu::noinline]] pid_t start_sharing_memory(const Options& options, int (*child)(void*), void* argument) {
  alignas(64) char stack[kStackBytes];
  int flags = CLONE_VM | CLONE_VFORK | SIGCHLD | options.namespaces;
  if (options.pid_slot) flags |= CLONE_PARENT_SETTID;
  const pid_t pid = ::clone(child, stack + sizeof stack, flags, argument, options.pid_slot, nullptr, nullptr);
  return pid < 0 ? -errno : pid;
}

pid_t start_into_cgroup(const Options& options, int (*child)(void*), void* argument) {
  clone_args args{};
  args.flags = CLONE_VFORK | CLONE_INTO_CGROUP | uint64_t(unsigned(options.namespaces));
  if (options.pid_slot) {
    args.flags |= CLONE_PARENT_SETTID;
    args.parent_tid = uint64_t(uintptr_t(options.pid_slot));
  }
  args.exit_signal = SIGCHLD;
  args.cgroup = uint64_t(options.cgroup_v2_fd);
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return -errno;
  if (pid == 0) _exit(child(argument));  // a copy of this process, as after fork
  return pid_t(pid);
}

}  // namespace

pid_t start(const Options& options, int (*child)(void*), void* argument) {
  sigset_t all, previous;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = options.cgroup_v2_fd >= 0 ? start_into_cgroup(options, child, argument)
                                              : start_sharing_memory(options, child, argument);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  return pid;
}

}  // namespace aasm::spawn
