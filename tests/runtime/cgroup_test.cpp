// The run's cgroup under the real kernel (these tests run as root): limits as
// the kernel holds them, a fork bomb stopped by the task ceiling and a memory
// bomb OOM-killed under the memory ceiling (each with its control), cleanup of
// a tree that escaped into its own session, the groups' place beneath the
// launcher's own cgroup, and refusals. Every group and process a test creates
// is removed by RAII even when a check fails; every wait is bounded.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "supervisor/cgroup.h"

using namespace aasm;
using namespace aasm::cgroup;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

bool dir_exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::vector<pid_t> procs_of(const std::string& dir) {
  std::vector<pid_t> pids;
  std::istringstream in(slurp(dir + "/cgroup.procs"));
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

std::string unique_name(const char* what) {
  static int counter = 0;
  return "aasm-test-" + std::to_string(::getpid()) + "-" + what + "-" + std::to_string(++counter);
}

// Removes the group at scope exit unless the test already did.
struct GroupGuard {
  std::optional<RunCgroup> group;
  bool cleaned = false;
  explicit GroupGuard(Result<RunCgroup> created) {
    if (created) group.emplace(std::move(*created));
    else FAIL_CHECK(created.error().message);
  }
  RunCgroup* operator->() { return &*group; }
  explicit operator bool() const { return group.has_value(); }
  Cleanup cleanup(KillOptions options = {}) {
    cleaned = true;
    if (options.reap == Reap::kNone) options.reap = Reap::kSignalled;
    return group->kill_and_remove(options);
  }
  ~GroupGuard() {
    if (group && !cleaned) {
      KillOptions options;
      options.reap = Reap::kSignalled;
      Cleanup c = group->kill_and_remove(options);
      for (const std::string& r : c.residuals) MESSAGE("guard cleanup residual: " << r);
    }
  }
};

// A child of the test that waits for `go()` before running its body, so it
// can be put into a group before it does anything. It dies with the test
// (parent-death signal) and after 30 s at most (alarm).
struct Child {
  pid_t pid = -1;
  int go_fd = -1;
  bool reaped = false;
  int status = 0;

  explicit Child(const std::function<int()>& body) {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::alarm(30);
      ::close(fds[1]);
      char byte;
      if (::read(fds[0], &byte, 1) != 1) ::_exit(100);
      ::close(fds[0]);
      ::_exit(body());
    }
    ::close(fds[0]);
    go_fd = fds[1];
  }
  void go() {
    REQUIRE(::write(go_fd, "g", 1) == 1);
    ::close(std::exchange(go_fd, -1));
  }
  // Waits at most `limit` for the child to end.
  bool wait(std::chrono::milliseconds limit = std::chrono::milliseconds(15000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!reaped) {
      const pid_t got = ::waitpid(pid, &status, WNOHANG);
      if (got == pid) reaped = true;
      else if (got < 0 || std::chrono::steady_clock::now() >= deadline) return false;
      else std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }
  ~Child() {
    if (go_fd >= 0) ::close(go_fd);
    if (pid > 0 && !reaped) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
};

// The directory of the pids (v1) or unified (v2) group: where every task of the run is listed.
std::string tracking_dir(RunCgroup& group) {
  for (const std::string& p : group.paths())
    if (group.version() == Version::kV2 || p.find("/pids/") != std::string::npos) return p;
  return group.paths().front();
}

// The version create() picks for a run that needs every controller.
Version host_version() {
  static std::optional<Version> version;
  if (!version) {
    auto probe = RunCgroup::create({uint64_t(64) << 20, 0, 64, 1000}, unique_name("probe"));
    REQUIRE_MESSAGE(probe, (probe ? "" : probe.error().message));
    version = probe->version();
    Cleanup c = probe->kill_and_remove();
    REQUIRE(c.complete);
  }
  return *version;
}

// Forks up to `count` tasks that sleep; returns 3 when a fork failed (the
// task ceiling), 0 when all were made.
int fork_bomb(int count) {
  for (int i = 0; i < count; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(20);
      for (;;) ::pause();
    }
    if (pid < 0) return errno == EAGAIN ? 3 : 4;
  }
  return 0;
}

// Allocates and touches `bytes`.
int memory_bomb(size_t bytes) {
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return 5;
  auto* bytes_ = static_cast<volatile char*>(memory);
  for (size_t offset = 0; offset < bytes; offset += 4096) bytes_[offset] = 1;
  return 0;
}

// The launcher's own cgroup directories, from /proc/self/cgroup and
// /proc/self/mountinfo (the test's own reading, independent of the code under test).
std::set<std::string> own_cgroup_dirs() {
  std::set<std::string> dirs;
  std::vector<std::pair<std::string, std::string>> memberships;  // controllers, path
  std::istringstream self(slurp("/proc/self/cgroup"));
  for (std::string line; std::getline(self, line);) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    memberships.push_back({line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  std::istringstream mounts(slurp("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    const auto dash = std::find(f.begin(), f.end(), "-");
    if (dash == f.end() || dash + 3 >= f.end() || f[3] != "/") continue;
    for (const auto& [controllers, path] : memberships) {
      bool match = false;
      if (*(dash + 1) == "cgroup2") match = controllers.empty();
      else if (*(dash + 1) == "cgroup" && !controllers.empty()) match = ("rw," + controllers) == *(dash + 3) ||
                                                                         *(dash + 3) == controllers;
      if (match) dirs.insert(f[4] + (path == "/" ? "" : path));
    }
  }
  return dirs;
}

// Creating groups needs root here; elsewhere these tests say so and stop.
bool privileged() {
  if (::geteuid() == 0) return true;
  MESSAGE("not root: the cgroup tests need to create groups and are skipped");
  return false;
}

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

}  // namespace

TEST_CASE("cgroup: the host's support is described without creating anything") {
  const std::string text = describe_host_support();
  MESSAGE(text);
  CHECK(text.find("cgroup v2") != std::string::npos);
  CHECK(text.find("v1 memory") != std::string::npos);
}

TEST_CASE("cgroup: every limit is written and the kernel holds it") {
  if (!privileged()) return;
  const std::string name = unique_name("limits");
  GroupGuard group(RunCgroup::create({uint64_t(64) << 20, 0, 32, 1500}, name));
  REQUIRE(group);
  for (const std::string& note : group->notes()) MESSAGE(note);
  for (const std::string& p : group->paths()) CHECK(dir_exists(p));
  if (group->version() == Version::kV1) {
    CHECK(group->v2_directory_fd() == -1);
    bool memory = false, pids = false, cpu = false;
    for (const std::string& p : group->paths()) {
      if (dir_exists(p + "/memory.limit_in_bytes")) {
        memory = true;
        CHECK(slurp(p + "/memory.limit_in_bytes") == "67108864");
        if (dir_exists(p + "/memory.memsw.limit_in_bytes"))  // swap 0: memory plus swap = memory
          CHECK(slurp(p + "/memory.memsw.limit_in_bytes") == "67108864");
      }
      if (dir_exists(p + "/pids.max")) {
        pids = true;
        CHECK(slurp(p + "/pids.max") == "32");
      }
      if (dir_exists(p + "/cpu.cfs_quota_us")) {
        cpu = true;
        CHECK(slurp(p + "/cpu.cfs_period_us") == "100000");
        CHECK(slurp(p + "/cpu.cfs_quota_us") == "150000");
      }
    }
    CHECK(memory);
    CHECK(pids);
    CHECK(cpu);
  } else {
    const std::string p = group->paths().front();
    CHECK(group->v2_directory_fd() >= 0);
    CHECK(slurp(p + "/memory.max") == "67108864");
    if (dir_exists(p + "/memory.swap.max")) CHECK(slurp(p + "/memory.swap.max") == "0");
    CHECK(slurp(p + "/pids.max") == "32");
    CHECK(slurp(p + "/cpu.max") == "150000 100000");
  }
  CHECK(group->knobs().size() >= 4);
  for (const Knob& k : group->knobs()) CHECK_MESSAGE(slurp(k.path) == k.read_back, k.path);

  const std::vector<std::string> paths = group->paths();
  Cleanup c = group.cleanup();
  CHECK(c.complete);
  CHECK(c.residuals.empty());
  for (const std::string& p : paths) CHECK_FALSE(dir_exists(p));
}

TEST_CASE("cgroup: a small CPU quota gets a longer period; zero quota and zero tasks are refused") {
  if (!privileged()) return;
  GroupGuard group(RunCgroup::create({std::nullopt, std::nullopt, std::nullopt, 5}, unique_name("cpu")));
  REQUIRE(group);
  bool seen = false;
  for (const Knob& k : group->knobs()) {
    if (k.path.ends_with("cpu.cfs_quota_us")) seen = (k.read_back == "5000");
    if (k.path.ends_with("cpu.max")) seen = (k.read_back == "5000 1000000");
  }
  CHECK(seen);
  CHECK(group.cleanup().complete);

  auto zero_cpu = RunCgroup::create({std::nullopt, std::nullopt, std::nullopt, 0}, unique_name("cpu0"));
  REQUIRE_FALSE(zero_cpu);
  CHECK(zero_cpu.error().message.find("0 millicores") != std::string::npos);
  auto zero_pids = RunCgroup::create({std::nullopt, std::nullopt, 0, std::nullopt}, unique_name("pids0"));
  REQUIRE_FALSE(zero_pids);
}

TEST_CASE("cgroup: the run's groups are created beneath the launcher's own cgroup, one per hierarchy") {
  if (!privileged()) return;
  const std::set<std::string> own = own_cgroup_dirs();
  REQUIRE_FALSE(own.empty());
  const std::string name = unique_name("beneath");
  GroupGuard group(RunCgroup::create({uint64_t(64) << 20, 0, 32, 1500}, name));
  REQUIRE(group);
  std::set<std::string> parents;
  for (const std::string& p : group->paths()) {
    CHECK(p.substr(p.rfind('/') + 1) == name);
    CHECK_MESSAGE(own.count(parent_of(p)) == 1, p << " is not directly beneath one of the launcher's own cgroups");
    CHECK_MESSAGE(parents.insert(parent_of(p)).second, "two groups in one hierarchy: " << p);
  }
  CHECK(group.cleanup().complete);
}

// A group left by a launcher killed with its janitor must not refuse the
// next launcher given the same pid (a CI run met exactly that once pids
// wrapped): the name has a random part beside the pid.
TEST_CASE("cgroup: two runs of one pid get different group names, each naming the pid") {
  const std::string first = cgroup::unique_run_name(), second = cgroup::unique_run_name();
  const std::string prefix = "aasm-" + std::to_string(::getpid()) + "-";
  CHECK(first.rfind(prefix, 0) == 0);
  CHECK(second.rfind(prefix, 0) == 0);
  CHECK(first.size() == prefix.size() + 16);
  CHECK(first != second);
  CHECK(first.find('/') == std::string::npos);
}

TEST_CASE("cgroup: a name that exists, or is not one path component, is refused and nothing is left behind") {
  if (!privileged()) return;
  const std::string name = unique_name("twice");
  GroupGuard first(RunCgroup::create({std::nullopt, std::nullopt, 8, std::nullopt}, name));
  REQUIRE(first);
  auto second = RunCgroup::create({std::nullopt, std::nullopt, 8, std::nullopt}, name);
  REQUIRE_FALSE(second);
  CHECK(second.error().message.find("exists already") != std::string::npos);
  for (const std::string& p : first->paths()) CHECK(dir_exists(p));  // the refusal removed nothing of the first
  CHECK(first.cleanup().complete);

  for (const char* bad : {"", ".", "..", "a/b"}) {
    auto refused = RunCgroup::create({}, bad);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("single path component") != std::string::npos);
  }
}

TEST_CASE("cgroup: a controller the launcher cannot use is refused naming what is missing and the remedy") {
  if (!privileged()) return;
  if (host_version() != Version::kV1) return;  // only a host whose v2 delegates nothing can show it
  auto refused = RunCgroup::create({std::nullopt, std::nullopt, 16, std::nullopt}, unique_name("v2pids"), Version::kV2);
  REQUIRE_FALSE(refused);
  MESSAGE(refused.error().message);
  CHECK(refused.error().message.find("pids") != std::string::npos);
  CHECK(refused.error().message.find("subtree_control") != std::string::npos);
}

TEST_CASE("cgroup: a forked child added to the run is listed in every group, and cleanup kills and reaps it") {
  if (!privileged()) return;
  GroupGuard group(RunCgroup::create({uint64_t(64) << 20, 0, 32, 1500}, unique_name("add")));
  REQUIRE(group);
  Child child([] {
    for (;;) ::pause();
    return 0;
  });
  REQUIRE_MESSAGE(group->add(child.pid), "add");
  for (const std::string& p : group->paths()) {
    const std::vector<pid_t> listed = procs_of(p);
    CHECK_MESSAGE(std::find(listed.begin(), listed.end(), child.pid) != listed.end(), p);
  }
  child.go();
  const std::vector<std::string> paths = group->paths();
  Cleanup c = group.cleanup();  // reaps what it signalled: the child is the test's own
  for (const std::string& r : c.residuals) MESSAGE(r);
  CHECK(c.complete);
  for (const std::string& p : paths) CHECK_FALSE(dir_exists(p));
  CHECK(::waitpid(child.pid, nullptr, WNOHANG) < 0);  // already reaped by the cleanup
  child.reaped = true;
}

TEST_CASE("cgroup: an unreaped child keeps the run from being proven empty, and the report says why") {
  if (!privileged()) return;
  GroupGuard group(RunCgroup::create({std::nullopt, std::nullopt, 8, std::nullopt}, unique_name("zombie")));
  REQUIRE(group);
  Child child([] { return 0; });
  REQUIRE(group->add(child.pid));
  child.go();
  // Let it exit but do not reap it: pids.current still counts it on v1.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  KillOptions options;
  options.deadline = std::chrono::milliseconds(300);
  Cleanup c = group->kill_and_remove(options);
  group.cleaned = true;
  for (const std::string& r : c.residuals) MESSAGE(r);
  if (group->version() == Version::kV1) {
    CHECK_FALSE(c.complete);
    bool named = false;
    for (const std::string& r : c.residuals) named = named || r.find("pids.current = 1") != std::string::npos;
    CHECK(named);
  }
  REQUIRE(child.wait());
  // Whatever the first cleanup could not remove, a second one, now that the child is reaped, does.
  Cleanup again = group->kill_and_remove();
  for (const std::string& r : again.residuals) MESSAGE(r);
  CHECK(again.complete);
  for (const std::string& p : group->paths()) CHECK_FALSE(dir_exists(p));
}

TEST_CASE("cgroup: a fork bomb stops at the task ceiling and pids.events counts it; without the ceiling it does not") {
  if (!privileged()) return;
  const Version version = host_version();
  SUBCASE("ceiling of 16") {
    GroupGuard group(RunCgroup::create({std::nullopt, std::nullopt, 16, std::nullopt}, unique_name("bomb"), version));
    REQUIRE(group);
    Child child([] { return fork_bomb(40); });
    REQUIRE(group->add(child.pid));
    child.go();
    REQUIRE(child.wait());
    CHECK(WIFEXITED(child.status));
    CHECK(WEXITSTATUS(child.status) == 3);  // a fork failed with EAGAIN
    const Events events = group->events();
    for (const std::string& u : events.unreadable) MESSAGE(u);
    MESSAGE("pids_max_hits = " << events.pids_max_hits << ", tasks left = " << procs_of(tracking_dir(*group.group)).size());
    CHECK(events.pids_max_hits > 0);
    CHECK(procs_of(tracking_dir(*group.group)).size() <= 15);  // the child itself has exited
    const auto start = std::chrono::steady_clock::now();
    Cleanup c = group.cleanup();
    MESSAGE("cleanup took " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count() << " ms");
    for (const std::string& r : c.residuals) MESSAGE(r);
    CHECK(c.complete);
  }
  SUBCASE("control: no ceiling") {
    GroupGuard group(RunCgroup::create({}, unique_name("nobomb"), version));
    REQUIRE(group);
    Child child([] { return fork_bomb(40); });
    REQUIRE(group->add(child.pid));
    child.go();
    REQUIRE(child.wait());
    CHECK(WIFEXITED(child.status));
    CHECK(WEXITSTATUS(child.status) == 0);  // all 40 made
    CHECK(procs_of(tracking_dir(*group.group)).size() == 40);
    const Events events = group->events();
    if (events.unreadable.empty() || version == Version::kV1) CHECK(events.pids_max_hits == 0);
    Cleanup c = group.cleanup();
    for (const std::string& r : c.residuals) MESSAGE(r);
    CHECK(c.complete);
  }
}

TEST_CASE("cgroup: a memory bomb over the ceiling is OOM-killed and the counter says so; under a larger ceiling it completes") {
  if (!privileged()) return;
  const Version version = host_version();
  SUBCASE("256 MiB under 32 MiB") {
    GroupGuard group(RunCgroup::create({uint64_t(32) << 20, 0, std::nullopt, std::nullopt}, unique_name("oom"), version));
    REQUIRE(group);
    for (const std::string& note : group->notes()) MESSAGE(note);
    Child child([] { return memory_bomb(size_t(256) << 20); });
    REQUIRE(group->add(child.pid));
    child.go();
    REQUIRE(child.wait());
    CHECK(WIFSIGNALED(child.status));
    if (WIFSIGNALED(child.status)) CHECK(WTERMSIG(child.status) == SIGKILL);
    const Events events = group->events();
    for (const std::string& u : events.unreadable) MESSAGE(u);
    MESSAGE("oom_kills = " << events.oom_kills);
    CHECK(events.oom_kills > 0);
    CHECK(group.cleanup().complete);
  }
  SUBCASE("control: 256 MiB under 512 MiB") {
    GroupGuard group(RunCgroup::create({uint64_t(512) << 20, 0, std::nullopt, std::nullopt}, unique_name("nooom"), version));
    REQUIRE(group);
    Child child([] { return memory_bomb(size_t(256) << 20); });
    REQUIRE(group->add(child.pid));
    child.go();
    REQUIRE(child.wait());
    CHECK(WIFEXITED(child.status));
    CHECK(WEXITSTATUS(child.status) == 0);
    const Events events = group->events();
    CHECK(events.oom_kills == 0);
    CHECK(group.cleanup().complete);
  }
}

// The test process is the subreaper here, as a supervisor would be: the
// escaped task is reparented to it, and the cleanup reaps it at once instead
// of waiting for init to.
struct Subreaper {
  Subreaper() { REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); }
  ~Subreaper() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
};

TEST_CASE("cgroup: cleanup kills a double-forked setsid child that ignores SIGTERM and removes every group") {
  if (!privileged()) return;
  Subreaper subreaper;
  GroupGuard group(RunCgroup::create({uint64_t(64) << 20, 0, 32, std::nullopt}, unique_name("escape")));
  REQUIRE(group);
  int ready[2];
  REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
  Child child([&] {
    const pid_t middle = ::fork();
    if (middle == 0) {
      ::setsid();
      if (::fork() == 0) {
        ::signal(SIGTERM, SIG_IGN);
        ::alarm(30);
        const pid_t self = ::getpid();
        if (::write(ready[1], &self, sizeof self) != sizeof self) ::_exit(1);
        for (;;) ::pause();
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(middle, &status, 0);
    return 0;
  });
  ::close(ready[1]);
  REQUIRE(group->add(child.pid));
  child.go();
  pollfd p{ready[0], POLLIN, 0};
  REQUIRE(::poll(&p, 1, 10000) == 1);
  pid_t escaped = -1;
  REQUIRE(::read(ready[0], &escaped, sizeof escaped) == sizeof escaped);
  ::close(ready[0]);
  REQUIRE(child.wait());
  // The escaped task is in another session, orphaned, and still in the run's groups.
  CHECK(::getsid(escaped) != ::getsid(0));
  for (const std::string& p : group->paths()) {
    const std::vector<pid_t> listed = procs_of(p);
    CHECK_MESSAGE(std::find(listed.begin(), listed.end(), escaped) != listed.end(), p);
  }
  const std::vector<std::string> paths = group->paths();
  const auto start = std::chrono::steady_clock::now();
  KillOptions options;
  options.reap = Reap::kAllChildren;
  Cleanup c = group.cleanup(options);
  MESSAGE("cleanup took " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count() << " ms");
  for (const std::string& r : c.residuals) MESSAGE(r);
  CHECK(c.complete);
  CHECK(c.residuals.empty());
  CHECK(::kill(escaped, 0) < 0);  // reaped by this process, so the pid is free (not reused this soon)
  for (const std::string& p : paths) CHECK_FALSE(dir_exists(p));
}

TEST_CASE("cgroup: on v2, a child cloned straight into the group is killed through cgroup.kill") {
  if (!privileged()) return;
  auto created = RunCgroup::create({}, unique_name("v2"), Version::kV2);
  if (!created) {
    MESSAGE("no usable cgroup v2 here: " << created.error().message);
    return;
  }
  GroupGuard group(std::move(created));
  REQUIRE(group->v2_directory_fd() >= 0);
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = uint64_t(group->v2_directory_fd());
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::alarm(30);
    for (;;) ::pause();
  }
  const std::vector<pid_t> listed = procs_of(group->paths().front());
  CHECK(std::find(listed.begin(), listed.end(), pid_t(pid)) != listed.end());
  Cleanup c = group.cleanup();
  for (const std::string& r : c.residuals) MESSAGE(r);
  CHECK(c.complete);
  CHECK_FALSE(dir_exists(group->paths().front()));
  int status = 0;
  if (::waitpid(pid_t(pid), &status, WNOHANG) == 0) {  // not reaped by the cleanup: kill and reap it here
    ::kill(pid_t(pid), SIGKILL);
    ::waitpid(pid_t(pid), &status, 0);
  }
}
