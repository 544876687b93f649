#include "supervisor/janitor.h"

#include <sched.h>
#include <signal.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/raw_syscall.h"

namespace aasm {

// Everything the janitor reads, with its stack; it stays valid after the
// supervisor is gone, as the janitor holds the memory.
struct Janitor::Shared {
  pid_t command = 0;  // written by the kernel (CLONE_PARENT_SETTID)
  pid_t supervisor = -1;
  std::atomic<bool> released{false};
  cgroup::sweep::Targets cgroups;
  // The sweep walks nested groups recursively, a directory buffer a level.
  alignas(16) char stack[128 * 1024];
};

namespace {

using Shared = Janitor::Shared;
// In .bss: nothing to map per launch, and its pages are touched only as used.
Shared g_shared;
bool g_started = false;

// The supervisor is gone without cleaning up: end what it would have ended,
// within the supervisor's own bound. What cannot be removed stays for the
// host's owner to see; there is nobody left to report it to.
void clean_up_after(const Shared& s) {
  if (s.command > 0) raw::syscall4(SYS_kill, -long(s.command), SIGKILL);
  cgroup::sweep::Observer nobody;
  cgroup::sweep::empty_and_remove(s.cgroups, 5000, nobody);
}

int janitor_main(void* argument) {
  const Shared& s = *static_cast<const Shared*>(argument);
  // Its own session and deaf to the terminal's and the supervisor's signals:
  // it must outlive the supervisor to do its one job.
  raw::syscall4(SYS_setsid);
  struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)();
    unsigned long mask;
  } ignore{SIG_IGN, 0, nullptr, 0};
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE})
    raw::syscall4(SYS_rt_sigaction, sig, long(&ignore), 0, sizeof ignore.mask);
  const unsigned long none = 0;
  raw::syscall4(SYS_rt_sigprocmask, SIG_SETMASK, long(&none), 0, sizeof none);
  // None of the supervisor's descriptors (its standard streams, a ruleset)
  // outlives it in here.
  raw::syscall4(SYS_close_range, 0, ~0u, 0);
  // A pidfd of the supervisor, which polls readable once it has exited. It
  // is this process's parent unless it has died already: then the janitor
  // was reparented, and acts at once.
  const long supervisor = raw::syscall4(SYS_pidfd_open, s.supervisor, 0);
  if (supervisor >= 0 && raw::syscall4(SYS_getppid) == s.supervisor) {
    pollfd exited{int(supervisor), POLLIN, 0};
    while (raw::syscall4(SYS_ppoll, long(&exited), 1, 0, 0) == -EINTR) {
    }
  }
  if (!s.released.load()) clean_up_after(s);
  raw::syscall4(SYS_exit, 0);
  return 0;
}

}  // namespace

Result<Janitor> Janitor::start(const cgroup::sweep::Targets& cgroups) {
  if (g_started) return make_error("janitor: one per process");
  Shared* s = &g_shared;
  // Only the groups in use: each untouched page of .bss costs a fault.
  s->cgroups.v2 = cgroups.v2;
  s->cgroups.count = cgroups.count;
  std::copy_n(cgroups.groups, cgroups.count, s->cgroups.groups);
  s->supervisor = ::getpid();
  // No exit signal: the supervisor never waits for it; whoever inherits it
  // reaps it. CLONE_FILES is not shared: the janitor closes its own copies.
  if (::clone(janitor_main, s->stack + sizeof s->stack, CLONE_VM, s) < 0) return make_error(std::string("janitor: clone: ") + std::strerror(errno));
  g_started = true;
  return Janitor(s);
}

Janitor::Janitor(Janitor&& other) noexcept : shared_(other.shared_) { other.shared_ = nullptr; }

pid_t* Janitor::pid_slot() { return &g_shared.command; }

void Janitor::release() {
  if (!shared_) return;
  // Read by the janitor once this process has exited.
  shared_->released.store(true);
  shared_ = nullptr;
}

Janitor::~Janitor() { release(); }

}  // namespace aasm
