// The run's cgroup under the real launcher: the task ceiling, the memory
// ceiling reported from the kernel's counters, and a cleanup that leaves no
// descendant behind, even one in its own session ignoring SIGTERM. Each with
// a control that shows what the cgroup is responsible for.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <chrono>
#include <thread>

#include "harness.h"

namespace aasm::ktest {
namespace {

std::string plan_with(const TempDir& dir, const std::string& name, const std::string& resources) {
  return compile_spec(dir, name,
                      "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/dev/null\", \"" + dir.path() + "\"]}\n"
                      "    write: {allow: [\"/dev/null\", \"" + dir.path() + "\"]}\n    execute: {allow: [\"/usr\"]}\n" +
                          resources);
}

// Pids of processes whose command line contains `marker` (ours: the marker
// is a unique sleep duration this test chose).
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> out;
  const Run found = run({"/usr/bin/pgrep", "-f", marker});
  size_t at = 0;
  while (at < found.out.size()) {
    const size_t end = found.out.find('\n', at);
    out.push_back(pid_t(std::stol(found.out.substr(at, end - at))));
    at = end == std::string::npos ? found.out.size() : end + 1;
  }
  return out;
}

TEST_CASE("cgroup: a fork bomb hits the task ceiling, is reported from pids.events, and nothing survives") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  const std::string marker = "30.7351";
  const std::string bomb = "i=0; while [ $i -lt 200 ]; do /usr/bin/sleep " + marker + " & i=$((i+1)); done; wait";
  const std::string plan = plan_with(dir, "pids", "  resources:\n    pids: 32\n    wall_clock: 3s\n");
  const Run r = launch(plan, {"/usr/bin/sh", "-c", bomb});
  INFO(r.err);
  CHECK(r.err.find("the task ceiling was reached") != std::string::npos);
  CHECK(r.err.find("cleanup incomplete") == std::string::npos);
  CHECK(processes_with(marker).empty());

  SUBCASE("control: without the ceiling the same loop starts all its sleeps") {
    const std::string small = "i=0; while [ $i -lt 40 ]; do /usr/bin/sleep " + marker + " & i=$((i+1)); done; "
                              "/usr/bin/sleep 1; /usr/bin/pgrep -c -f " + marker;
    const std::string open = plan_with(dir, "open", "  resources:\n    wall_clock: 10s\n");
    const Run c = launch(open, {"/usr/bin/sh", "-c", small});
    INFO(c.err);
    CHECK(c.err.find("task ceiling") == std::string::npos);
    for (pid_t pid : processes_with(marker)) ::kill(pid, SIGKILL);  // the process group kill got them already
  }
}

TEST_CASE("cgroup: a thread bomb hits the same task ceiling: threads are tasks") {
  TempDir dir;
  const std::string bomb =
      "import threading, time\n"
      "started = 0\n"
      "try:\n"
      "    for _ in range(100):\n"
      "        threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n"
      "        started += 1\n"
      "except RuntimeError:\n"
      "    pass\n"
      "print(started)\n";
  const Run r = launch(plan_with(dir, "threads", "  resources:\n    pids: 24\n"), {"/usr/bin/python3", "-c", bomb});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::stoi(r.out) < 24);
  CHECK(r.err.find("the task ceiling was reached") != std::string::npos);

  SUBCASE("control: without the ceiling all 100 threads start") {
    const Run c = launch(plan_with(dir, "threads-open", "  resources:\n    wall_clock: 20s\n"),
                         {"/usr/bin/python3", "-c", bomb});
    CHECK_RUN(c, 0, "100\n");
  }
}

TEST_CASE("cgroup: a memory bomb is killed by the kernel and reported as such") {
  TempDir dir;
  const std::string bomb = "x = bytearray(256 * 1024 * 1024); print(len(x))";
  const Run r = launch(plan_with(dir, "mem", "  resources:\n    memory: 64Mi\n    swap: 0\n"),
                       {"/usr/bin/python3", "-c", bomb});
  INFO(r.err);
  CHECK(r.exit_code == 128 + SIGKILL);
  CHECK(r.err.find("the memory ceiling was reached") != std::string::npos);

  SUBCASE("control: under a larger ceiling it completes") {
    const Run c = launch(plan_with(dir, "mem-large", "  resources:\n    memory: 1Gi\n    swap: 0\n"),
                         {"/usr/bin/python3", "-c", bomb});
    CHECK_RUN(c, 0, "268435456\n");
  }
}

TEST_CASE("cgroup: a double-forked daemon in its own session that ignores SIGTERM is gone at the end") {
  TempDir dir;
  const std::string marker = "30.7352";
  const std::string daemon = "/usr/bin/setsid /usr/bin/sh -c 'trap \"\" TERM; exec /usr/bin/sleep " + marker +
                             "' </dev/null >/dev/null 2>&1 & echo started; /usr/bin/sleep 0.3";  // time to escape
  const Run r = launch(plan_with(dir, "daemon", "  resources:\n    pids: 64\n"), {"/usr/bin/sh", "-c", daemon});
  INFO(r.err);
  CHECK_RUN(r, 0, "started\n");
  CHECK(processes_with(marker).empty());

  SUBCASE("control: without the run's cgroup, the daemon in its own session outlives the run") {
    const Run c = launch(plan_with(dir, "no-cgroup", ""), {"/usr/bin/sh", "-c", daemon});
    CHECK_RUN(c, 0, "started\n");
    std::vector<pid_t> left;
    for (int i = 0; i < 20 && left.empty(); ++i) {
      left = processes_with(marker);
      if (left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CHECK_FALSE(left.empty());  // what the cgroup is for
    for (pid_t pid : left) ::kill(pid, SIGKILL);
  }
}

// The launcher's own v1 pids cgroup directory, from /proc/self/cgroup (the
// launcher is this test's child, so it is in the same one).
std::string own_pids_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) == "pids") {
      const std::string path = line.substr(second + 1);
      return "/sys/fs/cgroup/pids" + (path == "/" ? "" : path);
    }
  }
  return "";
}

// Those of them that are the daemon itself, `sleep MARKER`, read from their
// own command line (the launcher's and the shells' carry the marker too,
// for a while, and a shell may exec into another sleep meanwhile).
std::vector<pid_t> sleepers_with(const std::string& marker) {
  std::vector<pid_t> out;
  for (pid_t pid : processes_with(marker)) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    const std::string cmdline{std::istreambuf_iterator<char>(in), {}};
    if (cmdline == std::string("/usr/bin/sleep\0", 15) + marker + '\0') out.push_back(pid);
  }
  return out;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// kill -9 of the launcher: the janitor it started before the command (it
// shares the launcher's memory and watches its pidfd) kills every task in
// the run's cgroup, also a daemon that left the command's session, and
// removes the cgroup.
TEST_CASE("cgroup: kill -9 of the launcher mid-run leaves no daemon and no cgroup behind") {
  const std::string pids_root = own_pids_cgroup();
  REQUIRE_MESSAGE(exists(pids_root + "/cgroup.procs"), "no v1 pids hierarchy at ", pids_root);
  TempDir dir;
  const std::string marker = "31.4159";
  const std::string plan = plan_with(dir, "killed", "  resources:\n    pids: 64\n");
  const std::string script = "/usr/bin/setsid /usr/bin/sh -c 'trap \"\" TERM; exec /usr/bin/sleep " + marker +
                             "' </dev/null >/dev/null 2>&1 & exec /usr/bin/sleep 30";
  const std::string launcher = std::getenv("AASM_LAUNCH");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0 || ::dup2(null, 1) < 0 || ::dup2(null, 2) < 0) _exit(126);
    ::execl(launcher.c_str(), launcher.c_str(), plan.c_str(), "--", "/usr/bin/sh", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  const std::string run_cgroup = pids_root + "/aasm-" + std::to_string(pid);
  std::vector<pid_t> daemon;
  for (int i = 0; i < 100 && daemon.empty(); ++i) {
    daemon = sleepers_with(marker);
    if (daemon.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(!daemon.empty(), "the daemon never started");
  // Control: left alone, the daemon and the run's cgroup are still there.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(sleepers_with(marker) == daemon);
  CHECK(exists(run_cgroup));

  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  bool gone = false;
  for (int i = 0; i < 150 && !gone; ++i) {
    gone = sleepers_with(marker).empty() && !exists(run_cgroup);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_MESSAGE(sleepers_with(marker).empty(), "the daemon outlived its killed launcher by 3 s");
  CHECK_MESSAGE(!exists(run_cgroup), run_cgroup, " is still there 3 s after the launcher was killed");
  for (pid_t left : sleepers_with(marker)) ::kill(left, SIGKILL);
}

}  // namespace
}  // namespace aasm::ktest
