// Attacks of a confined command on what supervises it, under the two kinds
// of policy an adversarial review used (a coding-agent one and a tight
// allowlist), neither of which says anything about signals: every launch
// scopes them (docs/policy-language.md, spec.ipc). Each attack has its control:
// the same probe under `ipc.signals: allow` reaches its target.
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "harness.h"

using namespace aasm::ktest;

namespace {

// Reads the system, /proc and the probe; writes only `writable`; no network;
// the review's deny groups; tree limits and a deadline.
std::string agent_policy(const TempDir& dir) {
  return "  filesystem:\n"
         "    read: {allow: " + flow_list({"/usr", "/etc", "/proc", probe_dir(), dir.path()}) + "}\n"
         "    write: {allow: " + flow_list({dir.path()}) + "}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n"
         "  network:\n    outbound: none\n"
         "  syscalls:\n    deny: [\"@mount\", \"@privileged\", \"@debug\", \"@kernel\"]\n"
         "  resources:\n    pids: 64\n    wall_clock: 2s\n";
}

// An allowlist with an errno default that lets the probe make its calls.
std::string tight_policy() {
  return "  filesystem:\n"
         "    read: {allow: " + flow_list({"/usr", "/etc", "/proc", probe_dir()}) + "}\n"
         "    write: {allow: []}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n"
         "  network:\n    outbound: none\n    bind: none\n"
         "  ipc:\n    abstract_unix_sockets: deny\n"
         "  syscalls:\n    default: \"errno:EPERM\"\n"
         "    allow: [read, write, openat, close, newfstatat, exit_group, getpid, getppid, kill]\n";
}

const std::string kSignalsAllowed = "  ipc:\n    signals: allow\n";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST_CASE("attack: SIGKILL and SIGSTOP of the supervisor and the janitor are EPERM under every policy") {
  TempDir dir;
  for (const auto& [name, spec] : {std::pair{"agent", agent_policy(dir)}, std::pair{"tight", tight_policy()}}) {
    CAPTURE(name);
    const std::string plan = compile_spec(dir, name, spec);
    for (int sig : {SIGKILL, SIGSTOP, SIGTERM}) {
      CAPTURE(sig);
      // Both survive: the launch goes on to report the probe's own status.
      CHECK_RUN(probe(plan, {"kill-supervisor", std::to_string(sig)}), 1, "parent EPERM\nchild EPERM\n");
    }
  }

  SUBCASE("control: with ipc.signals: allow, signal 0 reaches the supervisor and the janitor") {
    const std::string open = compile_spec(dir, "agent-signals", agent_policy(dir) + kSignalsAllowed);
    CHECK_RUN(probe(open, {"kill-supervisor", "0"}), 0, "parent OK\nchild OK\n");
  }
}

TEST_CASE("attack: a command that tries to SIGSTOP its supervisor still ends at the deadline") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "agent", agent_policy(dir));
  const std::string attack = "kill -STOP $PPID; echo stop=$?; exec " + binary("AASM_PROBE") + " spin 30";
  const auto start = std::chrono::steady_clock::now();
  const Run r = launch(plan, {"/usr/bin/sh", "-c", attack});
  const double took = seconds_since(start);
  INFO("stderr: ", r.err, "; took ", took, " s");
  CHECK(r.out == "stop=1\n");  // the shell's kill failed
  CHECK(r.exit_code == 124);  // the deadline's status
  CHECK(r.err.find("wall-clock limit of 2s") != std::string::npos);
  CHECK(took < 6.0);

  SUBCASE("control: with ipc.signals: allow, the shell can signal its supervisor (signal 0)") {
    const std::string open = compile_spec(dir, "agent-signals", agent_policy(dir) + kSignalsAllowed);
    CHECK_RUN(launch(open, {"/usr/bin/sh", "-c", "kill -0 $PPID; echo reach=$?"}), 0, "reach=0\n");
  }
}

TEST_CASE("attack: a root command without capabilities cannot signal the host's other root processes") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  Sentinel root_process;
  for (const auto& [name, spec] : {std::pair{"agent", agent_policy(dir)}, std::pair{"tight", tight_policy()}}) {
    CAPTURE(name);
    const std::string plan = compile_spec(dir, name, spec);
    CHECK_RUN(probe(plan, {"kill", root_process.id(), std::to_string(SIGKILL)}), 1, "EPERM\n");
  }
  CHECK(root_process.alive());

  SUBCASE("control: with ipc.signals: allow, signal 0 reaches it") {
    const std::string open = compile_spec(dir, "agent-signals", agent_policy(dir) + kSignalsAllowed);
    CHECK_RUN(probe(open, {"kill", root_process.id(), "0"}), 0, "OK\n");
  }
}

// A host without Landlock's signal scope, simulated by failing
// landlock_create_ruleset: the launcher, as root, scopes signals with a new
// PID namespace instead, where nothing outside has a pid.
TEST_CASE("attack: without Landlock, signals are scoped by a PID namespace") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  Sentinel root_process;
  const std::string spec = "  syscalls:\n    deny: [\"@mount\"]\n";
  const auto without_landlock = [&](const std::string& plan, std::vector<std::string> args) {
    std::vector<std::string> argv = {probe_dir() + "/aasm-fault", "landlock_create_ruleset=EOPNOTSUPP",
                                     binary("AASM_LAUNCH"), "--receipt", dir / "receipt.json", plan, "--",
                                     binary("AASM_PROBE")};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  const std::string plan = compile_spec(dir, "no-landlock", spec);
  const Run killed = without_landlock(plan, {"kill", root_process.id(), std::to_string(SIGKILL)});
  INFO("stderr: ", killed.err);
  CHECK(killed.exit_code == 1);
  CHECK(killed.out == "ESRCH\n");
  CHECK(killed.err.find("signals are scoped by a new PID namespace") != std::string::npos);
  CHECK(read_file(dir / "receipt.json").find("created in a new PID namespace") != std::string::npos);
  CHECK_RUN(without_landlock(plan, {"kill-supervisor", std::to_string(SIGKILL)}), 1, "ESRCH\n");
  CHECK(root_process.alive());

  SUBCASE("control: with ipc.signals: allow, the same host lets signal 0 reach the root process") {
    const std::string open = compile_spec(dir, "no-landlock-signals", spec + kSignalsAllowed);
    CHECK_RUN(without_landlock(open, {"kill", root_process.id(), "0"}), 0, "OK\n");
  }
}

}  // namespace
