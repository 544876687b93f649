#include "supervisor/janitor.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kernel/raw_syscall.h"

namespace aasm {

// Everything the janitor reads, with its stack; it stays valid after the
// supervisor is gone, as the janitor holds the memory.
struct Janitor::Shared {
  static constexpr int kMaxGroups = 8;
  static constexpr int kPathBytes = 512;
  pid_t command = 0;  // written by the kernel (CLONE_PARENT_SETTID)
  pid_t supervisor = -1;
  std::atomic<bool> released{false};
  int groups = 0;
  char procs[kMaxGroups][kPathBytes];  // <dir>/cgroup.procs
  char dirs[kMaxGroups][kPathBytes];
  alignas(16) char stack[32 * 1024];
};

namespace {

using Shared = Janitor::Shared;
// In .bss: nothing to map per launch, and its pages are touched only as used.
Shared g_shared;
bool g_started = false;

void pause_a_millisecond() {
  const timespec delay{0, 1000 * 1000};
  raw::syscall4(SYS_nanosleep, long(&delay), 0);
}

// Reads a cgroup.procs and SIGKILLs every pid in it; returns how many it saw
// (-1 when the file cannot be read).
int kill_listed(const char* procs) {
  const long fd = raw::syscall4(SYS_openat, AT_FDCWD, long(procs), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buffer[4096];
  int seen = 0;
  long pid = 0;
  bool in_number = false;
  for (;;) {
    const long n = raw::syscall4(SYS_read, fd, long(buffer), sizeof buffer);
    if (n <= 0) break;
    for (long i = 0; i < n; ++i) {
      const char c = buffer[i];
      if (c >= '0' && c <= '9') {
        pid = pid * 10 + (c - '0');
        in_number = true;
      } else if (in_number) {
        raw::syscall4(SYS_kill, pid, SIGKILL);
        ++seen;
        pid = 0;
        in_number = false;
      }
    }
  }
  raw::syscall4(SYS_close, fd);
  return seen;
}

// The supervisor is gone without cleaning up: end what it would have ended.
void clean_up_after(const Shared& s) {
  if (s.command > 0) raw::syscall4(SYS_kill, -long(s.command), SIGKILL);
  // Tasks may fork while being killed: repeat until every group reads empty
  // (a few seconds at most), then remove the groups; what cannot be removed
  // stays for the host's owner to see.
  for (int round = 0; round < 5000; ++round) {
    int listed = 0;
    for (int g = 0; g < s.groups; ++g)
      if (int n = kill_listed(s.procs[g]); n > 0) listed += n;
    if (listed == 0) break;
    pause_a_millisecond();
  }
  for (int g = s.groups - 1; g >= 0; --g) raw::syscall4(SYS_unlinkat, AT_FDCWD, long(s.dirs[g]), AT_REMOVEDIR);
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

Result<Janitor> Janitor::start(const std::vector<std::string>& cgroup_dirs) {
  if (g_started) return make_error("janitor: one per process");
  if (cgroup_dirs.size() > size_t(Shared::kMaxGroups)) return make_error("janitor: too many cgroup directories");
  Shared* s = &g_shared;
  for (const std::string& dir : cgroup_dirs) {
    if (dir.size() + sizeof "/cgroup.procs" > size_t(Shared::kPathBytes))
      return make_error("janitor: cgroup path too long: " + dir);
    std::memcpy(s->dirs[s->groups], dir.c_str(), dir.size() + 1);
    std::memcpy(s->procs[s->groups], dir.c_str(), dir.size());
    std::memcpy(s->procs[s->groups] + dir.size(), "/cgroup.procs", sizeof "/cgroup.procs");
    ++s->groups;
  }
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
