#include "kernel/spawn.h"

#include <linux/futex.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <new>

#include "kernel/raw_syscall.h"

namespace aasm::spawn {
namespace {

// The child's stack, in .bss: nothing to map per launch, pages touched only
// as used. The supervisor runs on its own stack meanwhile.
constexpr size_t kStackBytes = 128 * 1024;
alignas(64) char g_child_stack[kStackBytes];

// 1 once `alongside` is done (the child may exec); the kernel's word,
// nonzero until the child has exec'd or exited. A traced clone3 child is a
// copy of this memory: its go word is then on a shared page.
std::atomic<uint32_t> g_go_here{0};
std::atomic<uint32_t>* g_go = &g_go_here;
std::atomic<int32_t> g_child_running{0};

void futex_wait(void* word, uint32_t value) {
  raw::syscall4(SYS_futex, long(word), FUTEX_WAIT, long(value), 0);
}

void futex_wake(void* word) { raw::syscall4(SYS_futex, long(word), FUTEX_WAKE, 1, 0); }

void futex_wait_ms(void* word, uint32_t value, long ms) {
  const timespec timeout{0, ms * 1000000};
  raw::syscall4(SYS_futex, long(word), FUTEX_WAIT, long(value), long(&timeout));
}

void cpu_relax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The supervisor's side of hand_over() once the child has published:
// copies its descriptor. Raw system calls, since the child may still be
// reading the shared errno.
void copy_published(Handover& handover, pid_t pid, int32_t fd) {
  if (fd < 0) return;
  const long pidfd = raw::syscall4(SYS_pidfd_open, pid, 0);
  const long copy = pidfd < 0 ? pidfd : raw::syscall4(SYS_pidfd_getfd, pidfd, fd, 0);
  if (pidfd >= 0) raw::syscall4(SYS_close, pidfd);
  handover.copy.store(int32_t(copy));
  futex_wake(&handover.copy);
  if (copy < 0) raw::syscall4(SYS_kill, pid, SIGKILL);
}

// Sleeps until either word may have changed: the child's publication
// (woken by hand_over) or its exec or exit (woken by the kernel, which
// clears the CLONE_CHILD_CLEARTID word). futex_waitv (Linux 5.16) waits on
// both at once; shared (no FUTEX2_PRIVATE), as the kernel's wake of the
// cleared word is. Where it is missing, or the child cannot wake us (its
// filters may refuse futex: it spins instead), a look every millisecond.
void wait_for_publication(Handover& handover, int32_t running) {
  if (handover.may_wake) {
    futex_waitv words[2] = {
        {uint32_t(Handover::kPending), uint64_t(uintptr_t(&handover.child_fd)), FUTEX_32, 0},
        {uint32_t(running), uint64_t(uintptr_t(&g_child_running)), FUTEX_32, 0}};
    if (raw::syscall6(SYS_futex_waitv, long(words), 2, 0, 0, 0, 0) != -ENOSYS) return;
  }
  futex_wait_ms(&handover.child_fd, uint32_t(Handover::kPending), 1);
}

// Waits for the child to publish, or to exec or exit before it does, then
// copies.
void take(Handover& handover, pid_t pid) {
  int32_t fd;
  for (int32_t running; (fd = handover.child_fd.load()) == Handover::kPending && (running = g_child_running.load()) != 0;)
    wait_for_publication(handover, running);
  copy_published(handover, pid, fd);
}

// Lets every stop of the traced child go on until it has exec'd or ended
// (spawn.h), taking the handover meanwhile: the child may stop at a traced
// call before it publishes, so neither waits for the other alone. An end is
// only looked at (WNOWAIT): the caller reaps it.
void follow_until_exec(pid_t pid, Handover* handover) {
  for (;;) {
    if (handover) {
      const int32_t fd = handover->child_fd.load();
      if (fd != Handover::kPending) {
        copy_published(*handover, pid, fd);
        handover = nullptr;
      }
    }
    siginfo_t info{};
    const int pending = handover ? WNOHANG : 0;
    if (::waitid(P_PID, id_t(pid), &info, WEXITED | WSTOPPED | __WALL | WNOWAIT | pending) != 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (handover && info.si_pid == 0) {  // nothing to follow yet: wait for the publication a moment
      futex_wait_ms(&handover->child_fd, uint32_t(Handover::kPending), 1);
      continue;
    }
    if (info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return;
    int status = 0;
    if (::waitpid(pid, &status, __WALL) != pid) return;
    const int event = status >> 16;
    // A signal stop gets its signal delivered; the seccomp stop of its own
    // execve and the seize's first stop simply go on.
    const int signal = event == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80) ? WSTOPSIG(status) : 0;
    ::ptrace(PTRACE_CONT, pid, nullptr, reinterpret_cast<void*>(long(signal)));
    if (event == PTRACE_EVENT_EXEC) return;
  }
}

int seize(pid_t pid, unsigned options) {
  if (::ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(long(options))) == 0) return 0;
  const int error = errno;
  raw::syscall4(SYS_kill, pid, SIGKILL);
  return error;
}

pid_t start_sharing_memory(const Options& options, int (*child)(void*), void* argument,
                           const std::function<bool()>& alongside) {
  g_go = &g_go_here;
  g_go->store(0);
  g_child_running.store(1);
  int flags = CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD | options.namespaces;
  if (options.pid_slot) flags |= CLONE_PARENT_SETTID;
  const pid_t pid = ::clone(child, g_child_stack + sizeof g_child_stack, flags, argument, options.pid_slot, nullptr,
                            reinterpret_cast<pid_t*>(&g_child_running));
  if (pid < 0) return -errno;
  const int seized = options.trace_options ? seize(pid, options.trace_options) : 0;
  const bool go = seized == 0 && alongside();
  if (!go) raw::syscall4(SYS_kill, pid, SIGKILL);
  g_go->store(1);
  futex_wake(g_go);
  if (options.trace_options && seized == 0) {
    follow_until_exec(pid, go ? options.handover : nullptr);
  } else {
    if (go && options.handover) take(*options.handover, pid);
    // Cleared (and woken) by the kernel when the child execs or exits.
    for (int32_t running; (running = g_child_running.load()) != 0;) futex_wait(&g_child_running, uint32_t(running));
  }
  if (seized) return -seized;
  return go ? pid : -ECANCELED;
}

pid_t start_into_cgroup(const Options& options, int (*child)(void*), void* argument,
                        const std::function<bool()>& alongside) {
  if (!alongside()) return -ECANCELED;
  const bool traced = options.trace_options != 0;
  g_go = &g_go_here;
  if (traced) {
    void* page = ::mmap(nullptr, sizeof *g_go, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return -errno;
    g_go = new (page) std::atomic<uint32_t>{0};
  } else {
    g_go->store(1);  // copied into the child's memory
  }
  clone_args args{};
  args.flags = (traced ? 0 : CLONE_VFORK) | CLONE_INTO_CGROUP | uint64_t(unsigned(options.namespaces));
  if (options.pid_slot) {
    args.flags |= CLONE_PARENT_SETTID;
    args.parent_tid = uint64_t(uintptr_t(options.pid_slot));
  }
  args.exit_signal = SIGCHLD;
  args.cgroup = uint64_t(options.cgroup_v2_fd);
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) return -errno;
  if (pid == 0) _exit(child(argument));  // a copy of this process, as after fork
  if (!traced) return pid_t(pid);
  if (int error = seize(pid_t(pid), options.trace_options)) return -error;
  g_go->store(1);
  futex_wake(g_go);
  follow_until_exec(pid_t(pid), nullptr);
  return pid_t(pid);
}

}  // namespace

pid_t start(const Options& options, int (*child)(void*), void* argument, const std::function<bool()>& alongside) {
  if (options.handover && options.cgroup_v2_fd >= 0) return -EINVAL;
  sigset_t all, previous;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = options.cgroup_v2_fd >= 0 ? start_into_cgroup(options, child, argument, alongside)
                                              : start_sharing_memory(options, child, argument, alongside);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  return pid;
}

void await_supervisor() {
  while (g_go->load() == 0) futex_wait(g_go, 0);
}

int32_t hand_over(Handover& handover, int32_t fd) {
  handover.child_fd.store(fd);
  if (handover.may_wake) futex_wake(&handover.child_fd);
  if (fd < 0) return Handover::kNone;
  int32_t copy;
  while ((copy = handover.copy.load()) == Handover::kPending) {
    if (handover.may_wake) futex_wait(&handover.copy, uint32_t(Handover::kPending));
    else cpu_relax();
  }
  return copy;
}

int exec(const char* path, char* const argv[], char* const envp[]) {
  return int(-raw::syscall4(SYS_execve, long(path), long(argv), long(envp)));
}

int exec_descriptor(int fd, char* const argv[], char* const envp[]) {
  return int(-raw::syscall6(SYS_execveat, fd, long(""), long(argv), long(envp), AT_EMPTY_PATH));
}

}  // namespace aasm::spawn
