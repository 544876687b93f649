// Seccomp denials observed at run time (supervisor/listener_answers.h,
// kernel/kernel_log.h), under the real launcher and kernel: a call the plan
// answers with an errno reaches the supervisor's listener, which answers the
// same errno and records it; a call the plan kills is recorded from the
// kernel's record of the kill, or from the exit status where the launcher
// cannot read the kernel log. The records are read from the receipt's
// denials section (docs/receipts.md#denials). Each case has a control: the same probe op under a plan that
// allows the call succeeds and records nothing.
//
// Safety: `mkdir` and `flood` only touch the test's temp dir and numbers no
// kernel table names. The launcher this file stops and kills is one it
// started (its pid from fork), and the probe it waits on is found by the
// marker path only this test uses.
#include <algorithm>
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>

#include "fixtures.h"
#include "harness.h"
#include "receipts.h"

extern char** environ;

using namespace aasm::ktest;

namespace {

constexpr int kKilled = 128 + SIGSYS;

std::string filesystem_yaml(const TempDir& dir) {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"" + probe_dir() + "\", \"" + dir.path() + "\"]}\n"
         "    write: {allow: [\"" + dir.path() + "\"]}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n";
}

// A denylist plan: `deny` (a flow list body) answered with `action`.
std::string denying(const TempDir& dir, const std::string& name, const std::string& deny, const std::string& action) {
  return compile_spec(dir, name,
                      filesystem_yaml(dir) + "  syscalls:\n    default: \"" + action + "\"\n    deny: [" + deny + "]\n");
}

// aasm-launch --receipt DIR/receipt.json PLAN -- aasm-probe ARGS; the prefix
// (setpriv ...) runs the launcher, when given.
Run probe_with_receipt(const TempDir& dir, const std::string& plan, const std::vector<std::string>& args,
                       const std::vector<std::string>& prefix = {}) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "60"};
  argv.insert(argv.end(), prefix.begin(), prefix.end());
  argv.insert(argv.end(), {binary("AASM_LAUNCH"), "--receipt", dir / "receipt.json", plan, "--", binary("AASM_PROBE")});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::vector<nlohmann::json> seccomp_entries(const TempDir& dir) { return denial_entries(dir, "seccomp"); }

// The one seccomp denial of the receipt: `syscall` (empty: unknown), its
// errno (empty: killed), how it was seen, its count.
bool recorded(const TempDir& dir, const std::string& syscall, const std::string& error, const std::string& witness) {
  const std::vector<nlohmann::json> entries = seccomp_entries(dir);
  const std::string denials_text = receipt_denials(dir).dump();  // not inside INFO: it asserts (suggest_loop_test.cpp)
  INFO("denials: ", denials_text);
  return entries.size() == 1 && entries[0].at("syscall") == syscall && entries[0].at("errno") == error &&
         entries[0].at("witness") == witness && entries[0].at("count") == 1;
}

// The pid of the aasm-probe (its argv[0], `probe`) whose command line holds
// `marker`, or -1: not the shell or the launcher, whose arguments hold it too.
pid_t process_with(const std::string& marker, const std::string& probe) {
  DIR* proc = ::opendir("/proc");
  pid_t found = -1;
  while (dirent* entry = proc ? ::readdir(proc) : nullptr) {
    const pid_t pid = pid_t(std::atol(entry->d_name));
    if (pid <= 0) continue;
    const std::string cmdline = read_proc_file("/proc/" + std::string(entry->d_name) + "/cmdline").value_or("");
    if (cmdline.find(marker) != std::string::npos && cmdline.rfind(probe + '\0', 0) == 0) found = pid;
  }
  if (proc) ::closedir(proc);
  return found;
}

// The system call `pid` is blocked in (/proc/PID/syscall's first field), or -1.
long blocked_in(pid_t pid) {
  const std::optional<std::string> text = read_proc_file("/proc/" + std::to_string(pid) + "/syscall");
  if (!text || text->empty() || !std::isdigit(static_cast<unsigned char>((*text)[0]))) return -1;
  return std::atol(text->c_str());
}

// aasm-launch PLAN -- /bin/sh -c "wait for GO; exec PROBE ARGS", forked (the
// test's own child), in `cwd` where given.
struct WaitingLaunch {
  std::string go, probe, shell;
  WaitingLaunch(const std::string& go, const std::string& probe, const std::string& args)
      : go(go), probe(probe), shell("while [ ! -e " + go + " ]; do sleep 0.02; done; exec " + probe + " " + args) {}

  pid_t start(const std::string& plan, const std::string& cwd = "") const {
    const pid_t launcher = ::fork();
    REQUIRE(launcher >= 0);
    if (launcher == 0) {
      if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) _exit(127);
      const std::string launch = binary("AASM_LAUNCH");
      const char* argv[] = {launch.c_str(), plan.c_str(), "--", "/bin/sh", "-c", shell.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), environ);
      _exit(127);
    }
    return launcher;
  }
};

bool wait_gone(pid_t pid) {
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) sleep_ms(10);
  return ::kill(pid, 0) != 0;
}

// With `command`'s launcher stopped, lets its shell exec the probe, whose
// command line holds `marker`, and checks that the probe waits in call `nr`
// on the stopped supervisor's listener; then kills the launcher and checks
// that the probe ends.
void kill_supervisor_while_waiting(const WaitingLaunch& command, pid_t launcher, const std::string& marker, long nr) {
  ReapOnExit reaper(launcher);
  sleep_ms(200);  // the shell waits for `go`
  REQUIRE(::kill(launcher, SIGSTOP) == 0);
  write_file(command.go, "");
  pid_t probe = -1;
  for (int i = 0; i < 500 && (probe < 0 || blocked_in(probe) != nr); ++i, sleep_ms(10))
    probe = process_with(marker, command.probe);
  INFO("probe pid ", probe);
  CHECK(blocked_in(probe) == nr);  // waiting on the stopped supervisor's listener
  CHECK_FALSE(exists(marker));
  REQUIRE(::kill(launcher, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  reaper.release();
  if (probe > 0) CHECK(wait_gone(probe));
  sleep_ms(100);
}

// The coding-agent profile narrowed by an allowlist tier of `allow` (a
// flow list body), compiled in `dir`.
std::string profile_with_tier(const TempDir& dir, const std::string& allow) {
  write_file(dir / "tier.yaml", "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: my-agent, tier: agent}\n"
                                "spec:\n  syscalls:\n    allow: [" + allow + "]\n");
  const Run c = run({binary("AASMC"), "compile", binary("AASM_PROFILES") + "/coding-agent.yaml", "tier.yaml", "-o",
                     "plan.bin"},
                    dir.path());
  INFO("aasmc stderr: ", c.err);
  REQUIRE(c.exit_code == 0);
  return dir / "plan.bin";
}

}  // namespace

TEST_CASE("denials: a call the plan answers with an errno is recorded with its errno, and the command still gets it") {
  TempDir dir;
  const std::string marker = dir / "made";
  CHECK_RUN(probe_with_receipt(dir, denying(dir, "deny", "mkdirat", "errno:EACCES"), {"mkdir", marker}), 1, "EACCES\n");
  CHECK_FALSE(exists(marker));
  CHECK(recorded(dir, "mkdirat", "EACCES", "listener"));

  SUBCASE("control: under a plan that allows it the call succeeds and nothing is recorded") {
    CHECK_RUN(probe_with_receipt(dir, denying(dir, "allow", "unlinkat", "errno:EACCES"), {"mkdir", marker}), 0, "OK\n");
    CHECK(exists(marker));
    CHECK(seccomp_entries(dir).empty());
  }
}

TEST_CASE("denials: a call the plan kills is recorded from the kernel's record, else from the exit status") {
  TempDir dir;
  const std::string plan = denying(dir, "kill", "mkdirat", "kill");
  const std::string marker = dir / "made";
  // Without auditd the kernel prints audit records under printk_ratelimit()
  // (10 per 5 s): after a burst of kills (the seccomp tests) a record may be
  // lost, and the launcher says "exit status". Up to three tries, 5.5 s apart.
  bool from_kernel = false;
  for (int attempt = 0; attempt < 3 && !from_kernel; ++attempt) {
    if (attempt) sleep_ms(5500);
    CHECK_RUN(probe_with_receipt(dir, plan, {"mkdir", marker}), kKilled, "");
    from_kernel = recorded(dir, "mkdirat", "", "kernel_record");
    if (!from_kernel) CHECK(recorded(dir, "", "", "exit_status"));
  }
  CHECK(from_kernel);

  SUBCASE("without CAP_SYSLOG the kernel log is closed to the launcher: the exit status says only that") {
    // kernel.dmesg_restrict: reading /dev/kmsg needs CAP_SYSLOG (or CAP_SYS_ADMIN).
    std::ifstream restrict_file("/proc/sys/kernel/dmesg_restrict");
    int restricted = 0;
    restrict_file >> restricted;
    REQUIRE_MESSAGE(restricted == 1, "kernel.dmesg_restrict is 0 here: every launcher may read the kernel log");
    const std::vector<std::string> no_syslog = {"/usr/bin/setpriv", "--bounding-set", "-syslog,-sys_admin"};
    CHECK_RUN(probe_with_receipt(dir, plan, {"mkdir", marker}, no_syslog), kKilled, "");
    CHECK(recorded(dir, "", "", "exit_status"));
  }
  SUBCASE("control: under a plan that allows it the call succeeds and nothing is recorded") {
    CHECK_RUN(probe_with_receipt(dir, denying(dir, "allow", "unlinkat", "kill"), {"mkdir", marker}), 0, "OK\n");
    CHECK(seccomp_entries(dir).empty());
  }
}

// A flood of distinct refusals: the log keeps 256 and counts the rest, and
// the command gets every answer (the last one printed).
TEST_CASE("denials: a command flooding refusals is capped at 256 distinct denials with the dropped ones counted") {
  TempDir dir;
  const std::string plan = denying(dir, "deny", "mkdirat", "errno:EPERM");
  CHECK_RUN(probe_with_receipt(dir, plan, {"flood", "1000", "3000"}), 1, "ENOSYS\n");
  CHECK(seccomp_entries(dir).size() == 256);
  CHECK(receipt_denials(dir).at("dropped") == 2744);

  SUBCASE("control: a few calls are each recorded, nothing dropped") {
    CHECK_RUN(probe_with_receipt(dir, plan, {"flood", "1000", "3"}), 1, "ENOSYS\n");
    const std::vector<nlohmann::json> entries = seccomp_entries(dir);
    REQUIRE(entries.size() == 3);
    CHECK(entries[2].at("syscall_number") == 1002);
    CHECK(entries[2].at("errno") == "ENOSYS");
    CHECK(receipt_denials(dir).at("dropped") == 0);
  }
}

// The observation never allows: with the supervisor stopped, the refused
// call waits on its listener; with the supervisor killed, the kernel
// answers it ENOSYS (no listener) and the parent-death signal ends the
// command. The directory is never made.
TEST_CASE("denials: killing the supervisor while a refused call waits on its listener never lets the call through") {
  TempDir dir;
  const std::string marker = dir / "made-while-waiting";
  const WaitingLaunch command(dir / "go", binary("AASM_PROBE"), "mkdir " + marker);
  const std::string plan = compile_spec(dir, "deny", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [mkdirat]\n");
  kill_supervisor_while_waiting(command, command.start(plan), marker, SYS_mkdirat);
  CHECK_FALSE(exists(marker));

  SUBCASE("control: under a plan that allows mkdirat the same command makes the directory") {
    ::unlink(command.go.c_str());
    const pid_t allowed =
        command.start(compile_spec(dir, "allow", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [unlinkat]\n"));
    sleep_ms(200);
    write_file(command.go, "");
    int status = 0;
    REQUIRE(::waitpid(allowed, &status, 0) == allowed);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(exists(marker));
  }
}

// Under a shipped profile narrowed by an allowlist tier, the main program
// answers socket() with an errno and so does the profile's unix-socket rule
// (ipc.unix_sockets: deny), in a filter installed before the main one: both
// go in notifying (seccomp::notifying_rule, notifying_main), so
// socket(AF_UNIX) reaches the listener and gets the kernel's answer of the
// two as written, the main
// program's EPERM (the newer filter's among equal actions), recorded with
// the tier's line. mkdirat, which the tier's allowlist omits, is recorded
// too; nothing is named unseen for being refused by both.
TEST_CASE("denials: under a shipped profile with a unix-socket rule, a call both programs refuse with an errno is recorded") {
  TempDir dir("/var/tmp");  // the profile's view makes /tmp private: the launch directory is outside it
  const std::string probe = dir / "aasm-probe";  // under ${CWD}, which the profile reads and executes
  REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), probe}).exit_code == 0);
  const std::string calls = "\"@startup\", \"@file-read\", \"@process\", \"@memory\", \"@signal\", write, futex";
  const auto launch = [&](const std::string& plan, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH"), "--denials=full",
                                     "--receipt", dir / "receipt.json", plan, "--", probe};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, dir.path());
  };
  const std::string plan = profile_with_tier(dir, calls);
  const Run r = launch(plan, {"socket", "unix"});
  CHECK_RUN(r, 1, "EPERM\n");
  const std::string denials_text = receipt_denials(dir).dump();
  INFO("denials: ", denials_text);
  REQUIRE(recorded(dir, "socket", "EPERM", "listener"));
  const nlohmann::json entry = seccomp_entries(dir)[0];
  const nlohmann::json& policy = entry.at("policy");
  CHECK(std::any_of(policy.begin(), policy.end(), [](const nlohmann::json& l) {
    return l.at("file") == "tier.yaml" && l.at("key") == "syscalls.allow";
  }));
  CHECK(contains(r.err, "socket -> EPERM  x1"));
  CHECK_FALSE(contains(r.err, "answered by the kernel alone and not recorded (the main program and an argument rule"));

  const std::string marker = dir / "made";
  CHECK_RUN(launch(plan, {"mkdir", marker}), 1, "EPERM\n");
  CHECK_FALSE(exists(marker));
  CHECK(recorded(dir, "mkdirat", "EPERM", "listener"));

  SUBCASE("control: under a plan that allows socket() the probe creates the unix socket and nothing is recorded") {
    // No filesystem or ipc section: nothing of the plan refuses socket().
    const std::string open = compile_spec(dir, "allow-socket", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [unlinkat]\n");
    CHECK_RUN(probe_with_receipt(dir, open, {"socket", "unix"}), 0, "OK\n");
    CHECK(seccomp_entries(dir).empty());
  }
}

// The shipped profile as it is: its main program (a denylist) allows
// socket(), and only the unix-socket rule of ipc.unix_sockets: deny refuses
// AF_UNIX, in a filter installed before the main one. The rule goes in
// notifying and the main program notifies the same call (copies of the rule
// after its allow), so the refusal reaches the listener: recorded with the
// rule's EACCES, the profile's ipc line and the edit that allows it, and
// nothing named unseen for argument rules.
TEST_CASE("denials: a call only an argument rule refuses (the main program allows it) is recorded with the rule's line") {
  TempDir dir("/var/tmp");  // the profile's view makes /tmp private: the launch directory is outside it
  const std::string probe = dir / "aasm-probe";
  REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), probe}).exit_code == 0);
  const std::string profile = binary("AASM_PROFILES") + "/coding-agent.yaml";
  REQUIRE(run({binary("AASMC"), "compile", profile, "-o", "plan.bin"}, dir.path()).exit_code == 0);
  const auto launch = [&](const std::string& plan, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH"), "--denials=full",
                                     "--receipt", dir / "receipt.json", plan, "--", probe};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, dir.path());
  };
  const Run r = launch(dir / "plan.bin", {"socket", "unix"});
  CHECK_RUN(r, 1, "EACCES\n");
  const std::string denials_text = receipt_denials(dir).dump();
  INFO("denials: ", denials_text);
  REQUIRE(recorded(dir, "socket", "EACCES", "listener"));
  const nlohmann::json entry = seccomp_entries(dir)[0];
  REQUIRE(entry.at("policy").size() == 1);
  CHECK(entry.at("policy")[0].at("key") == "ipc.unix_sockets");
  // The line of the profile's `unix_sockets: deny`, wherever the file has it.
  const std::string text = read_file(profile);
  const size_t at = text.find(" unix_sockets: deny");  // not abstract_unix_sockets
  REQUIRE(at != std::string::npos);
  CHECK(entry.at("policy")[0].at("line") == 1 + std::count(text.begin(), text.begin() + long(at), '\n'));
  REQUIRE(entry.at("edits").size() == 1);
  CHECK(entry.at("edits")[0].at("op") == "set");
  CHECK(entry.at("edits")[0].at("item") == "{allow: [/]}");
  CHECK(contains(r.err, "socket -> EACCES  x1"));
  CHECK_FALSE(contains(r.err, "by an argument rule"));

  SUBCASE("a netlink socket, refused by network.outbound's family rule, gets a note about families, not ports") {
    const Run netlink = launch(dir / "plan.bin", {"socket", "netlink"});
    CHECK_RUN(netlink, 1, "EACCES\n");
    INFO(netlink.err);
    CHECK(contains(netlink.err, "refuse every family but unix, inet and inet6 (family 16 here;"));
    CHECK_FALSE(contains(netlink.err, "tcp:PORT"));
    const Run inet = launch(dir / "plan.bin", {"socket", "inet"});
    CHECK(contains(inet.err, "network.outbound: {allow: [tcp:PORT]}"));
  }
  SUBCASE("control: an inet socket, which the main program and every rule allow, is made and nothing is recorded") {
    // The profile's network rules refuse inet sockets (outbound none):
    // a plan with only the ipc section keeps AF_UNIX refused, inet allowed.
    const std::string ipc_only = compile_spec(dir, "ipc-only", "  ipc:\n    unix_sockets: deny\n");
    CHECK_RUN(launch(ipc_only, {"socket", "inet"}), 0, "OK\n");
    CHECK(seccomp_entries(dir).empty());
    CHECK_RUN(launch(ipc_only, {"socket", "unix"}), 1, "EACCES\n");
    CHECK(recorded(dir, "socket", "EACCES", "listener"));
  }
  SUBCASE("control: under an allow-all plan the same probe makes its unix socket") {
    const std::string open = compile_spec(dir, "open", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [reboot]\n");
    CHECK_RUN(launch(open, {"socket", "unix"}), 0, "OK\n");
    CHECK(seccomp_entries(dir).empty());
  }
}

// The profile as it is, the call only the rule refuses: with the supervisor
// stopped the call waits on the listener, with it killed the kernel answers
// ENOSYS (the rule's own notification, no listener), never the call.
TEST_CASE("denials: killing the supervisor while a call only an argument rule refuses waits never lets the call through") {
  TempDir dir("/var/tmp");
  const std::string probe = dir / "aasm-probe";
  REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), probe}).exit_code == 0);
  const std::string marker = dir / "bound-while-waiting";
  const WaitingLaunch command(dir / "go", probe, "unix-bind " + marker);
  const std::string profile = binary("AASM_PROFILES") + "/coding-agent.yaml";
  REQUIRE(run({binary("AASMC"), "compile", profile, "-o", "plan.bin"}, dir.path()).exit_code == 0);
  kill_supervisor_while_waiting(command, command.start(dir / "plan.bin", dir.path()), marker, SYS_socket);
  CHECK_FALSE(exists(marker));

  SUBCASE("control: under an allow-all plan the same command binds its socket") {
    ::unlink(command.go.c_str());
    const std::string open = compile_spec(dir, "open", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [reboot]\n");
    const pid_t launcher = command.start(open, dir.path());
    ReapOnExit reaper(launcher);
    sleep_ms(200);
    write_file(command.go, "");
    int status = 0;
    REQUIRE(::waitpid(launcher, &status, 0) == launcher);
    reaper.release();
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(exists(marker));
  }
}

// Under a filter of its own (an outer sandbox's), the launcher cannot tell
// whether that filter holds a listener, which would leave the main program
// to go in as written: the rule programs go in as written too (a rule's
// notification with nobody listening would be answered ENOSYS), so the call
// is still refused with the rule's errno, by the kernel, and the report
// names what it did not see and why.
TEST_CASE("denials: under an outer seccomp filter an argument rule's errno is answered by the kernel and named unseen") {
  TempDir dir("/var/tmp");
  const std::string probe = dir / "aasm-probe";
  REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), probe}).exit_code == 0);
  const std::string profile = binary("AASM_PROFILES") + "/coding-agent.yaml";
  REQUIRE(run({binary("AASMC"), "compile", profile, "-o", "plan.bin"}, dir.path()).exit_code == 0);
  const std::string launch = binary("AASM_LAUNCH"), plan = dir / "plan.bin";
  const auto probe_socket = [&](bool outer_filter) {
    return run_forked([&] {
      if (::chdir(dir.path().c_str()) != 0) return 125;
      sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
      sock_fprog program{1, &allow};
      if (outer_filter && (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                           ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0))
        return 125;
      const char* argv[] = {launch.c_str(), "--denials=full", plan.c_str(), "--", probe.c_str(), "socket", "unix", nullptr};
      ::execve(argv[0], const_cast<char**>(argv), environ);
      return 127;
    });
  };
  const Run r = probe_socket(true);
  CHECK_RUN(r, 1, "EACCES\n");
  CHECK(contains(r.err, "by an argument rule"));
  CHECK(contains(r.err, "under an outer seccomp filter"));
  CHECK_FALSE(contains(r.err, "socket -> EACCES"));

  SUBCASE("control: without the outer filter the same refusal is recorded") {
    const Run own = probe_socket(false);
    CHECK_RUN(own, 1, "EACCES\n");
    CHECK(contains(own.err, "socket -> EACCES  x1"));
    CHECK_FALSE(contains(own.err, "by an argument rule"));
  }
}

// The child's own exec, after its filters: were it refused with an errno,
// the filters would hand it to the listener, which the supervisor reads
// only after the exec. The child answers it itself with the programs as
// written: the launch fails at once (126, the errno named), never waits.
TEST_CASE("denials: a plan that refuses execve with an errno fails the launch with that errno, without waiting") {
  TempDir dir;
  const std::string noexec = compile_spec(dir, "noexec", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [execve]\n");
  const Run r = run({"/usr/bin/timeout", "-s", "KILL", "20", binary("AASM_LAUNCH"), noexec, "--", "/bin/true"});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 126);
  CHECK(contains(r.err, "execve: Operation not permitted"));

  SUBCASE("control: the same plan denying another call runs the command") {
    const std::string exec = compile_spec(dir, "exec", "  syscalls:\n    default: \"errno:EPERM\"\n    deny: [reboot]\n");
    CHECK(run({"/usr/bin/timeout", "-s", "KILL", "20", binary("AASM_LAUNCH"), exec, "--", "/bin/true"}).exit_code == 0);
  }
}

// The same under the shipped profile, where both programs refuse socket()
// (the rule's errno deferred to the main program's listener): with the
// supervisor stopped the call waits on the listener, with it killed the
// kernel answers ENOSYS, never the call; the socket file is never bound.
TEST_CASE("denials: killing the supervisor while a call both programs refuse waits never lets the call through") {
  TempDir dir("/var/tmp");  // the profile's view makes /tmp private: the launch directory is outside it
  const std::string probe = dir / "aasm-probe";
  REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), probe}).exit_code == 0);
  const std::string marker = dir / "bound-while-waiting";
  const WaitingLaunch command(dir / "go", probe, "unix-bind " + marker);
  // What the shell's loop needs too (sleep, its pipes and stat calls); not @network.
  const std::string calls = "\"@startup\", \"@file-read\", \"@file-write\", \"@process\", \"@memory\", "
                            "\"@signal\", \"@time\", \"@ipc\", write";
  kill_supervisor_while_waiting(command, command.start(profile_with_tier(dir, calls), dir.path()), marker, SYS_socket);
  CHECK_FALSE(exists(marker));

  SUBCASE("control: the tier allows @network, ipc aside: the profile's rule alone refuses, by the kernel, at once") {
    ::unlink(command.go.c_str());
    const pid_t launcher = command.start(profile_with_tier(dir, calls + ", \"@network\""), dir.path());
    sleep_ms(200);
    write_file(command.go, "");
    int status = 0;
    REQUIRE(::waitpid(launcher, &status, 0) == launcher);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);  // EACCES from the unix-socket rule, without the supervisor
    CHECK_FALSE(exists(marker));
  }
}

// clone3's ENOSYS is the plan's answer by design (the compiler's fallback
// table, syscalls.fallback in the provenance): glibc falls back to clone,
// whose flags a filter can read. Recorded, but as no denial: no policy line,
// no edit, not in the summary's count or list.
TEST_CASE("denials: clone3's ENOSYS is by design, not a denial: no edit, not listed in the summary") {
  TempDir dir;
  const Run r = probe_with_receipt(dir, denying(dir, "deny", "mkdirat", "errno:EACCES"), {"clone3", "plain"});
  CHECK_RUN(r, 1, "ENOSYS\n");
  const std::vector<nlohmann::json> entries = seccomp_entries(dir);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].at("syscall") == "clone3");
  CHECK(entries[0].at("errno") == "ENOSYS");
  CHECK(entries[0].at("by_design") == true);
  CHECK(entries[0].at("policy").empty());
  CHECK(entries[0].at("edits").empty());
  CHECK(contains(entries[0].at("note").get<std::string>(), "by design, not a denial"));
  CHECK_FALSE(contains(r.err, "clone3 -> ENOSYS"));
  CHECK_FALSE(contains(r.err, "distinct"));

  SUBCASE("control: a plan that denies clone3 by name refuses it as a denial, with its line and edit") {
    const Run denied = probe_with_receipt(dir, denying(dir, "deny-clone3", "clone3", "errno:EACCES"), {"clone3", "plain"});
    CHECK_RUN(denied, 1, "EACCES\n");
    const std::vector<nlohmann::json> refused = seccomp_entries(dir);
    REQUIRE(refused.size() == 1);
    CHECK(refused[0].at("by_design") == false);
    CHECK(refused[0].at("edits").size() == 1);
    CHECK(contains(denied.err, "clone3 -> EACCES  x1"));
  }
}

#if defined(__x86_64__)
// A kill of another architecture's call (getpid through int 0x80: i386
// number 20, which on x86_64 is writev) is not named from the plan's x86_64
// call table: the record keeps its number and architecture and says the
// table does not name it, rather than give another call's name.
TEST_CASE("denials: a killed i386 call is not named from the x86_64 table: its number and architecture are said") {
  // As seccomp_test.cpp's i386 case: some hosts fault `int 0x80` from 64-bit
  // code (SIGSEGV) before any system call; there the join is checked by
  // runtime-unit's "denial report: a call of another architecture ..." only.
  if (run({binary("AASM_PROBE"), "int80-getpid"}).signal == SIGSEGV) {
    MESSAGE("this host faults `int 0x80` from 64-bit code: the i386 kill cannot be observed here");
    return;
  }
  TempDir dir;
  const std::string plan = denying(dir, "deny", "mkdirat", "errno:EPERM");
  bool from_kernel = false;
  for (int attempt = 0; attempt < 3 && !from_kernel; ++attempt) {
    if (attempt) sleep_ms(5500);
    CHECK_RUN(probe_with_receipt(dir, plan, {"int80-getpid"}), kKilled, "");
    const std::vector<nlohmann::json> entries = seccomp_entries(dir);
    REQUIRE(entries.size() == 1);
    from_kernel = entries[0].at("witness") == "kernel_record";
  }
  REQUIRE(from_kernel);
  const nlohmann::json entry = seccomp_entries(dir)[0];
  CHECK(entry.at("syscall") == "");
  CHECK(entry.at("syscall_number") == 20);
  CHECK(entry.at("arguments") == "arch=0x40000003");
  CHECK(entry.at("note") == "call number 20 of architecture 0x40000003 is not in the plan's call tables (x86_64's, "
                            "aarch64's calls)");
  CHECK(entry.at("edits").empty());

  SUBCASE("control: the same getpid through the x86_64 gate is allowed and nothing is recorded") {
    CHECK_RUN(probe_with_receipt(dir, plan, {"sys", std::to_string(SYS_getpid)}), 0, "OK\n");
    CHECK(seccomp_entries(dir).empty());
  }
}
#endif
