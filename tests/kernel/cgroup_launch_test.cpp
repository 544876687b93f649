// The run's cgroup under the real launcher: the task ceiling, the memory
// ceiling reported from the kernel's counters, and a cleanup that leaves no
// descendant behind, even one in its own session ignoring SIGTERM. Each with
// a control that shows what the cgroup is responsible for.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

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

// On v1 the command moves itself into the run's groups, one `tasks` file a
// hierarchy, while it is its only thread: it, and what it starts, must be in
// every one of them.
TEST_CASE("cgroup: the command and its children are in each of the run's groups") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  const std::string spec = "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"/dev/null\"]}\n"
                           "    execute: {allow: [\"/usr\"]}\n";
  const std::string report = "echo $PPID; /usr/bin/cat /proc/self/cgroup";
  // hierarchy -> path, from `id:controllers:path` lines after the launcher's pid.
  const auto memberships = [](const std::string& out) {
    std::map<std::string, std::string> paths;
    std::istringstream lines(out.substr(out.find('\n') + 1));
    for (std::string line; std::getline(lines, line);) {
      const size_t first = line.find(':'), second = line.find(':', first + 1);
      paths[line.substr(first + 1, second - first - 1)] = line.substr(second + 1);
    }
    return paths;
  };
  const Run r = launch(compile_spec(dir, "placed", spec + "  resources:\n    memory: 256Mi\n    pids: 64\n    cpu: 1\n"),
                       {"/usr/bin/sh", "-c", report});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  const auto placed = memberships(r.out);
  REQUIRE(placed.count("pids") == 1);
  const std::string run_group = placed.at("pids").substr(placed.at("pids").rfind('/'));
  CHECK(run_group.rfind("/aasm-" + r.out.substr(0, r.out.find('\n')) + "-", 0) == 0);  // aasm-<launcher pid>-
  for (const char* hierarchy : {"memory", "pids", "cpu"}) {
    CAPTURE(hierarchy);
    REQUIRE(placed.count(hierarchy) == 1);
    CHECK(placed.at(hierarchy).ends_with(run_group));
  }
  // The pids group stops forks at cleanup (pids.max = 0): no freezer group.
  if (placed.count("freezer")) CHECK(placed.at("freezer").find("/aasm-") == std::string::npos);

  SUBCASE("control: without tree limits there is no run cgroup, and the command stays in the launcher's") {
    const Run c = launch(compile_spec(dir, "unplaced", spec), {"/usr/bin/sh", "-c", report});
    CHECK(c.exit_code == 0);
    for (const auto& [hierarchy, path] : memberships(c.out)) CHECK(path.find("/aasm-") == std::string::npos);
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

std::string own_pids_cgroup() { return own_v1_cgroup("pids"); }

// Those of them that are the daemon itself, `sleep MARKER`, read from their
// own command line (the launcher's and the shells' carry the marker too,
// for a while, and a shell may exec into another sleep meanwhile).
std::vector<pid_t> sleepers_with(const std::string& marker) {
  std::vector<pid_t> out;
  for (pid_t pid : processes_with(marker)) {
    const std::string cmdline = read_proc_file("/proc/" + std::to_string(pid) + "/cmdline").value_or("");
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
  std::vector<pid_t> daemon;
  for (int i = 0; i < 100 && daemon.empty(); ++i) {
    daemon = sleepers_with(marker);
    if (daemon.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE_MESSAGE(!daemon.empty(), "the daemon never started");
  const std::string run_group = run_group_of(pids_root, pid);
  REQUIRE_MESSAGE(!run_group.empty(), "no group of launcher ", pid, " beneath ", pids_root);
  const std::string run_cgroup = pids_root + run_group;
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

// A command that nests groups of its own beneath the run's: a job runner
// whose policy lets it write the pids and memory hierarchies (as root on
// cgroup v1, Landlock's write grant is all mkdir and a move need) makes
// `job` beneath the run's group in both and puts a daemon there, in its own
// session, ignoring SIGTERM. No cgroup.procs of the run's own groups lists
// the daemon any more: a cleanup that does not walk nested groups neither
// kills it nor can remove the run's groups.
struct NestedRun {
  std::string pids_root = own_v1_cgroup("pids");
  std::string memory_root = own_v1_cgroup("memory");
  // Unique to this test process: other checkouts may run the same tests.
  std::string marker = "31." + std::to_string(100000 + ::getpid() % 100000);

  bool available() const {
    return exists(pids_root + "/cgroup.procs") && exists(memory_root + "/cgroup.procs");
  }
  std::string plan(const TempDir& dir, const std::string& name, bool grant_cgroups) const {
    const std::string cgroups = grant_cgroups ? ", \"" + pids_root + "\", \"" + memory_root + "\"" : "";
    return compile_spec(dir, name,
                        "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"/dev/null\", \"" + dir.path() + "\"" +
                            cgroups + "]}\n    write: {allow: [\"/dev/null\", \"" + dir.path() + "\"" + cgroups +
                            "]}\n    execute: {allow: [\"/usr\"]}\n  resources:\n    pids: 64\n    memory: 256Mi\n");
  }
  // The command: it reads its run's group from /proc/self/cgroup, makes
  // the nested groups, starts the daemon in them, and says, per hierarchy,
  // whether job lists exactly the daemon and whether the run's own group
  // does not list it; then `tail`.
  std::string script(const std::string& tail) const {
    const std::string roots = pids_root + " " + memory_root;
    return "r=$(/usr/bin/grep :pids: /proc/self/cgroup); r=${r##*/}; for h in " + roots + "; do /usr/bin/mkdir $h/$r/job || exit 3; done; "
           "/usr/bin/setsid /usr/bin/sh -c 'for h in " + roots + "; do echo $$ > $h/'$r'/job/cgroup.procs || exit 4; "
           "done; trap \"\" TERM; exec /usr/bin/sleep " + marker + "' </dev/null >/dev/null 2>&1 & "
           "/usr/bin/sleep 0.3; for h in " + roots + "; do "
           "[ \"$(/usr/bin/cat $h/$r/job/cgroup.procs)\" = \"$!\" ] && echo in job; "
           "/usr/bin/grep -qx \"$!\" $h/$r/cgroup.procs || echo not in the run group; done; " + tail;
  }
  static constexpr const char* kReport = "in job\nnot in the run group\nin job\nnot in the run group\n";
};

TEST_CASE("cgroup: a daemon in a group the command nested beneath the run's is gone at the end, with the groups") {
  REQUIRE(::geteuid() == 0);
  NestedRun nested;
  REQUIRE_MESSAGE(nested.available(), "no v1 pids and memory hierarchies at ", nested.pids_root, ", ", nested.memory_root);
  TempDir dir;
  const Run r = launch(nested.plan(dir, "nested", true), {"/usr/bin/sh", "-c", nested.script("echo $r")});
  INFO(r.err);
  // Control: the daemon was alive in the nested groups only, out of sight of
  // the run's own cgroup.procs, when the command ended.
  REQUIRE(r.out.rfind(NestedRun::kReport, 0) == 0);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("cleanup incomplete") == std::string::npos);
  const std::string group = r.out.substr(std::string(NestedRun::kReport).size(), r.out.size() - 1 - std::string(NestedRun::kReport).size());
  REQUIRE(group.rfind("aasm-", 0) == 0);
  CHECK(sleepers_with(nested.marker).empty());
  for (const std::string& root : {nested.pids_root, nested.memory_root})
    CHECK_MESSAGE(!exists(root + "/" + group), root, "/", group, " is left");
  for (pid_t left : sleepers_with(nested.marker)) ::kill(left, SIGKILL);

  SUBCASE("control: without the policy's grant of the cgroup hierarchies, the command cannot nest a group") {
    const Run c = launch(nested.plan(dir, "not-granted", false), {"/usr/bin/sh", "-c", nested.script("")});
    CHECK(c.exit_code == 3);
    CHECK(c.err.find("Permission denied") != std::string::npos);
  }
}

// kill -9 of the launcher: the janitor empties the run's groups by the
// supervisor's rules, so the daemon in the nested groups dies too and every
// group, nested ones first, is removed.
TEST_CASE("cgroup: kill -9 of the launcher leaves no daemon in a nested group and no group behind") {
  NestedRun nested;
  REQUIRE_MESSAGE(nested.available(), "no v1 pids and memory hierarchies at ", nested.pids_root, ", ", nested.memory_root);
  TempDir dir;
  const std::string plan = nested.plan(dir, "nested-killed", true);
  const std::string script = nested.script("exec /usr/bin/sleep 30");
  const std::string report = dir / "report";
  const std::string launcher = std::getenv("AASM_LAUNCH");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int out = ::open(report.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int null = ::open("/dev/null", O_RDWR);
    if (out < 0 || null < 0 || ::dup2(out, 1) < 0 || ::dup2(null, 2) < 0) _exit(126);
    ::execl(launcher.c_str(), launcher.c_str(), plan.c_str(), "--", "/usr/bin/sh", "-c", script.c_str(), nullptr);
    _exit(127);
  }
  std::vector<pid_t> daemon;
  for (int i = 0; i < 150 && (daemon.empty() || read_file(report) != NestedRun::kReport); ++i) {
    daemon = sleepers_with(nested.marker);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string run_group = run_group_of(nested.pids_root, pid);
  REQUIRE_MESSAGE(!run_group.empty(), "no group of launcher ", pid, " beneath ", nested.pids_root);
  // Control: the daemon lives in the nested groups, which the run's own
  // cgroup.procs do not list; left alone, it and the groups stay.
  REQUIRE_MESSAGE(daemon.size() == 1, "the daemon never started");
  CHECK(read_file(report) == NestedRun::kReport);
  const std::string memberships = read_file("/proc/" + std::to_string(daemon.front()) + "/cgroup");
  CHECK(memberships.find(":pids:" + run_group + "/job\n") != std::string::npos);
  // The memory hierarchy's own cgroup may not be the root (/process_api/<id> here).
  const std::string memory_own = nested.memory_root.substr(std::string("/sys/fs/cgroup/memory").size());
  CHECK(memberships.find(":memory:" + memory_own + run_group + "/job\n") != std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK(sleepers_with(nested.marker) == daemon);
  CHECK(exists(nested.pids_root + run_group + "/job"));

  REQUIRE(::kill(pid, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  const auto left = [&] {
    return !sleepers_with(nested.marker).empty() || exists(nested.pids_root + run_group) ||
           exists(nested.memory_root + run_group);
  };
  for (int i = 0; i < 300 && left(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_MESSAGE(sleepers_with(nested.marker).empty(), "the daemon in the nested group outlived its killed launcher by 6 s");
  for (const std::string& root : {nested.pids_root, nested.memory_root}) {
    CHECK_MESSAGE(!exists(root + run_group + "/job"), root, run_group, "/job is still there 6 s after the launcher was killed");
    CHECK_MESSAGE(!exists(root + run_group), root, run_group, " is still there 6 s after the launcher was killed");
  }
  for (pid_t pid_left : sleepers_with(nested.marker)) ::kill(pid_left, SIGKILL);
}

// CONFIG_RT_GROUP_SCHED gives a new v1 cpu group no real-time runtime, so
// the kernel refuses a real-time task into it (EINVAL): the refusal says why.
TEST_CASE("cgroup: a launcher under a real-time policy is refused into a cpu group, and told why") {
  if (own_v1_cgroup("cpu").empty() || ::access("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", F_OK) != 0) {
    MESSAGE("skipped: no v1 cpu hierarchy with real-time group scheduling here");
    return;
  }
  TempDir dir;
  const std::string plan = plan_with(dir, "cpu", "  resources: {cpu: 1}\n");
  const Run refused = run({"/usr/bin/chrt", "-f", "10", binary("AASM_LAUNCH"), plan, "--", "/bin/true"});
  CHECK(refused.exit_code == 125);
  CHECK(refused.err.find("real-time scheduling policy") != std::string::npos);
  SUBCASE("control: the same launch under the normal policy runs") {
    CHECK(run({binary("AASM_LAUNCH"), plan, "--", "/bin/true"}).exit_code == 0);
  }
}

// A new cpu group competes at nice 0's weight whatever its tasks' nice
// value: the run's group takes the launcher's, so `nice` still lowers the
// command's share of the machine. The command reads its own group's weight.
TEST_CASE("cgroup: a niced launcher's cpu group keeps its weight (cpu.shares of nice 10 is 110)") {
  const std::string cpu_root = own_v1_cgroup("cpu");
  if (cpu_root.empty() || ::getpriority(PRIO_PROCESS, 0) != 0) {
    MESSAGE("skipped: no v1 cpu hierarchy here, or the test itself runs niced");
    return;
  }
  TempDir dir;
  const std::string plan = compile_spec(dir, "niced",
                                        "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"/sys/fs/cgroup\"]}\n"
                                        "    execute: {allow: [\"/usr\"]}\n  resources: {cpu: 1}\n");
  // The same hierarchy own_v1_cgroup("cpu") finds: a `N:cpu:PATH` line.
  const std::string own_shares =
      "p=$(/usr/bin/sed -n 's/^[0-9]*:cpu://p' /proc/self/cgroup); /usr/bin/cat \"/sys/fs/cgroup/cpu$p/cpu.shares\"";
  const auto shares_under = [&](const std::vector<std::string>& prefix) {
    std::vector<std::string> argv = prefix;
    for (const std::string& arg : {binary("AASM_LAUNCH"), plan, std::string("--"), std::string("/usr/bin/sh"),
                                   std::string("-c"), own_shares})
      argv.push_back(arg);
    const Run r = run(argv);
    INFO(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    return r.out;
  };
  CHECK(shares_under({"/usr/bin/nice", "-n", "10"}) == "110\n");
  SUBCASE("control: at nice 0 the group keeps the kernel's default weight, 1024") {
    CHECK(shares_under({"/usr/bin/nice", "-n", "0"}) == "1024\n");
  }
}

}  // namespace
}  // namespace aasm::ktest
