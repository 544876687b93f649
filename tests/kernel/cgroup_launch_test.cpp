// The run's cgroup under the real launcher: the task ceiling, the memory
// ceiling reported from the kernel's counters, and a cleanup that leaves no
// descendant behind, even one in its own session ignoring SIGTERM. Each with
// a control that shows what the cgroup is responsible for.
#include <signal.h>
#include <unistd.h>

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

}  // namespace
}  // namespace aasm::ktest
