// The syscall filter under the real kernel: aasm-launch installs the
// compiled programs and runs aasm-probe, which makes one raw system call and
// prints the answer. Every case has a control that runs the same probe op
// under a plan without the deciding part (a filesystem-only plan: a plan
// must enforce something) or with that call permitted, and shows the
// kernel's own, different answer, so a probe or a policy that cannot fail is
// caught. What each answer should be comes from the reference semantics,
// compiler/middle/syscall_semantics.h. Every plan carries the safe defaults
// (x32 and foreign architectures killed, io_uring killed, clone3 ENOSYS,
// namespaces EPERM), so a control for one of those runs the probe without
// the launcher (harmless: SAFETY below).
//
// The probe's dangerous ops always pass arguments the kernel refuses before
// acting (tests/probe/probe.c, SAFETY): the controls run them as root with
// no syscall filter.
#include <sys/syscall.h>

#include <csignal>

#include "harness.h"
#include "refused_calls.h"

using namespace aasm::ktest;

namespace {

constexpr int kKilled = 128 + SIGSYS;  // aasm-launch: 128 + the signal (159)

// The probe's own calls besides the op (libc start-up is the compiler's
// start-up set, added to every allowlist).
constexpr const char* kProbeCalls = "read, write, openat, close, newfstatat, exit_group";

std::string filesystem_yaml() {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\"]}\n"
         "    write: {allow: []}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n";
}

// Writes DIR/NAME.yaml with the filesystem node above and `syscalls` (the
// body of spec.syscalls, indented by four, or "" for none), compiles it
// with the real aasmc and returns the plan's path.
std::string plan(const TempDir& dir, const std::string& name, const std::string& syscalls) {
  return compile_spec(dir, name, filesystem_yaml() + (syscalls.empty() ? "" : "  syscalls:\n" + syscalls));
}

// Landlock only: the kernel answers every system call itself, but for the
// safe defaults every plan carries (a confined filesystem also refuses unix
// sockets by default; the opt-out keeps those rules out too).
std::string filesystem_only(const TempDir& dir) {
  return compile_spec(dir, "filesystem-only", filesystem_yaml() + "  ipc:\n    unix_sockets: {allow: [\"/\"]}\n");
}

// The probe run directly, as root, under no filter at all.
Run unconfined_probe(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {binary("AASM_PROBE")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// An allowlist of the probe's calls plus `extra` ("a, b"), and `rest`
// (more lines of spec.syscalls, e.g. rules).
std::string allowlist(const TempDir& dir, const std::string& name, const std::string& default_action,
                      const std::string& extra, const std::string& rest = "") {
  return plan(dir, name,
              "    default: \"" + default_action + "\"\n    allow: [" + kProbeCalls +
                  (extra.empty() ? "" : ", " + extra) + "]\n" + rest);
}

// A denylist; `default_action` ("" for none) is the answer of its denied calls.
std::string denylist(const TempDir& dir, const std::string& name, const std::string& deny,
                     const std::string& default_action = "") {
  return plan(dir, name,
              (default_action.empty() ? "" : "    default: \"" + default_action + "\"\n") + "    deny: [" + deny + "]\n");
}

std::string nr(long number) { return std::to_string(number); }

// Killed by the filter: SIGSYS, so aasm-launch exits 159, before the probe
// printed anything.
#define CHECK_KILLED(run_expr) CHECK_RUN(run_expr, kKilled, "")

}  // namespace

TEST_CASE("seccomp: an x32 system call is killed, whatever the allowlist and the default say") {
  TempDir dir;
  // getpid is allowed and the default is an errno: only the x32 bit can kill.
  const std::string allowed = allowlist(dir, "allow-getpid", "errno:EPERM", "getpid");
  CHECK_KILLED(probe(allowed, {"x32-getpid"}));
  CHECK_KILLED(probe(denylist(dir, "deny-ptrace", "ptrace"), {"x32-getpid"}));
  CHECK_KILLED(probe(denylist(dir, "deny-ptrace-errno", "ptrace", "errno:EPERM"), {"x32-getpid"}));

  SUBCASE("control: the native getpid is allowed by the same plan") {
    CHECK_RUN(probe(allowed, {"sys", nr(SYS_getpid)}), 0, "OK\n");
  }
  SUBCASE("control: without a syscall filter the kernel answers the x32 call itself") {
    // This kernel (6.18, CONFIG_X86_X32_ABI not set) has no x32 ABI and
    // answers ENOSYS; a kernel with x32 enabled runs getpid (OK). Either way
    // the probe is not killed, which is what the filter changes.
    const Run r = unconfined_probe({"x32-getpid"});
    INFO("stderr: ", r.err);
    CHECK(r.signal == 0);
    CHECK(r.exit_code != kKilled);
    CHECK((r.out == "ENOSYS\n" || r.out == "OK\n"));
    MESSAGE("x32 getpid without a filter: ", r.out);
  }
}

TEST_CASE("seccomp: an i386 `int 0x80` system call from 64-bit code is killed") {
  // The control first: the kernel must run the i386 getpid without a filter
  // (CONFIG_IA32_EMULATION=y, the probe prints OK for a positive pid), or
  // nothing below could show the filter's kill. Some hypervisors' guests
  // (this project's CI VMs among them, since 2026-12) fault `int 0x80` from
  // 64-bit code with SIGSEGV before any system call is made: there the call
  // cannot run at all, filter or not, and the kill cannot be observed.
  const Run bare = unconfined_probe({"int80-getpid"});
  if (bare.signal == SIGSEGV) {
    MESSAGE("this host faults `int 0x80` from 64-bit code (SIGSEGV) before the system call: the i386 entry is "
            "unreachable, so the filter's kill of it cannot be observed here");
    return;
  }
  CHECK_RUN(bare, 0, "OK\n");

  TempDir dir;
  const std::string allowed = allowlist(dir, "allow-getpid", "errno:EPERM", "getpid");
  CHECK_KILLED(probe(allowed, {"int80-getpid"}));
  CHECK_KILLED(probe(denylist(dir, "deny-ptrace", "ptrace"), {"int80-getpid"}));
}

TEST_CASE("seccomp: ioctl request == TIOCSTI is refused with the upper 32 bits set too") {
  TempDir dir;
  // Default kill: an EPERM can only be the rule's answer.
  const std::string rules = allowlist(dir, "tiocsti", "kill", "ioctl, pipe2",
                                      "    rules:\n"
                                      "      - syscall: ioctl\n"
                                      "        when: \"request == TIOCSTI\"\n"
                                      "        action: \"errno:EPERM\"\n");
  CHECK_RUN(probe(rules, {"ioctl-pipe", "tiocsti"}), 1, "EPERM\n");
  // The kernel reads `cmd` as an unsigned int: TIOCSTI | 1 << 32 is TIOCSTI
  // to it, so the filter must compare the low half only.
  CHECK_RUN(probe(rules, {"ioctl-pipe", "tiocsti-high"}), 1, "EPERM\n");

  SUBCASE("control: other requests on the same descriptor reach the kernel (a pipe is no tty)") {
    CHECK_RUN(probe(rules, {"ioctl-pipe", "tcgets"}), 1, "ENOTTY\n");
    CHECK_RUN(probe(rules, {"ioctl-pipe", "tioclinux"}), 1, "ENOTTY\n");
  }
  SUBCASE("control: without a syscall filter the kernel answers TIOCSTI itself") {
    const std::string none = filesystem_only(dir);
    CHECK_RUN(probe(none, {"ioctl-pipe", "tiocsti"}), 1, "ENOTTY\n");
    CHECK_RUN(probe(none, {"ioctl-pipe", "tiocsti-high"}), 1, "ENOTTY\n");
  }
}

TEST_CASE("seccomp: clone3 answers ENOSYS (its flags are out of the filter's reach), so libc falls back to clone") {
  TempDir dir;
  // Listed in an allowlist, not listed under an errno default, in a denylist.
  CHECK_RUN(probe(allowlist(dir, "listed", "kill", "clone3, wait4"), {"clone3", "newuser"}), 1, "ENOSYS\n");
  CHECK_RUN(probe(allowlist(dir, "unlisted", "errno:EPERM", "wait4"), {"clone3", "newuser"}), 1, "ENOSYS\n");
  CHECK_RUN(probe(denylist(dir, "deny-ptrace", "ptrace"), {"clone3", "newuser"}), 1, "ENOSYS\n");
  // Not listed under a kill default: killed, as every unlisted call.
  CHECK_KILLED(probe(allowlist(dir, "unlisted-kill", "kill", "wait4"), {"clone3", "plain"}));

  SUBCASE("control: without a syscall filter the kernel's clone3 makes the child (root: a user namespace)") {
    CHECK_RUN(unconfined_probe({"clone3", "newuser"}), 0, "OK\n");
    CHECK_RUN(unconfined_probe({"clone3", "plain"}), 0, "OK\n");
  }
}

TEST_CASE("seccomp: a clone rule on flags & CLONE_NEWUSER kills or fails that clone, a plain fork works") {
  TempDir dir;
  const std::string kill = allowlist(dir, "clone-kill", "errno:EPERM", "clone, wait4",
                                     "    rules:\n"
                                     "      - syscall: clone\n"
                                     "        when: \"flags & CLONE_NEWUSER\"\n"
                                     "        action: kill\n");
  CHECK_KILLED(probe(kill, {"clone", "newuser"}));
  const std::string eacces = allowlist(dir, "clone-errno", "kill", "clone, wait4",
                                       "    rules:\n"
                                       "      - syscall: clone\n"
                                       "        when: \"flags & CLONE_NEWUSER\"\n"
                                       "        action: \"errno:EACCES\"\n");
  CHECK_RUN(probe(eacces, {"clone", "newuser"}), 1, "EACCES\n");

  SUBCASE("control: clone(SIGCHLD), a plain fork, works under the same policies") {
    CHECK_RUN(probe(kill, {"clone", "plain"}), 0, "OK\n");
    CHECK_RUN(probe(eacces, {"clone", "plain"}), 0, "OK\n");
  }
  SUBCASE("control: without the rule (clone named: the namespaces' opt-in) clone(CLONE_NEWUSER) makes the child") {
    CHECK_RUN(probe(allowlist(dir, "clone-listed", "kill", "clone, wait4"), {"clone", "newuser"}), 0, "OK\n");
  }
}

TEST_CASE("seccomp: io_uring_setup is refused by an allowlist that does not list it and by any denylist") {
  TempDir dir;
  CHECK_RUN(probe(allowlist(dir, "errno", "errno:EPERM", ""), {"io_uring_setup"}), 1, "EPERM\n");
  CHECK_KILLED(probe(allowlist(dir, "kill", "kill", ""), {"io_uring_setup"}));
  // A denylist that names only ptrace still refuses io_uring, with its
  // answer: its operations would run outside the filter.
  CHECK_RUN(probe(denylist(dir, "deny-ptrace", "ptrace"), {"io_uring_setup"}), 1, "EPERM\n");
  CHECK_KILLED(probe(denylist(dir, "deny-ptrace-kill", "ptrace", "kill"), {"io_uring_setup"}));

  SUBCASE("control: without a syscall filter the kernel refuses the NULL params itself") {
    // io_uring_setup(0, NULL): EFAULT copying the params (io_uring_disabled
    // is 0 here; 1 or 2 would give EPERM, so the test would show it).
    CHECK_RUN(unconfined_probe({"io_uring_setup"}), 1, "EFAULT\n");
  }
}

TEST_CASE("seccomp: numbers the syscall table does not name answer ENOSYS, whatever the default") {
  TempDir dir;
  const std::string eperm = allowlist(dir, "errno", "errno:EPERM", "");
  const std::string kill = allowlist(dir, "kill", "kill", "");
  const std::string deny = denylist(dir, "deny-ptrace", "ptrace");
  // 1000: above the table; 400: in its gap (x86_64 334..423, aarch64 294..423).
  for (const char* number : {"1000", "400", "-1"}) {
    INFO("syscall number ", number);
    CHECK_RUN(probe(eperm, {"sys", number}), 1, "ENOSYS\n");
    CHECK_RUN(probe(kill, {"sys", number}), 1, "ENOSYS\n");
    CHECK_RUN(probe(deny, {"sys", number}), 1, "ENOSYS\n");
  }

  SUBCASE("control: a named, unlisted call gets the default through the same op") {
    CHECK_RUN(probe(eperm, {"sys", nr(SYS_getppid)}), 1, "EPERM\n");
    CHECK_KILLED(probe(kill, {"sys", nr(SYS_getppid)}));
  }
}


// Written with `default: kill` (a denylist answers EPERM otherwise).
TEST_CASE("seccomp: a denylist of @kernel, @debug and @mount kills each of their calls") {
  TempDir dir;
  const std::string deny = denylist(dir, "deny-groups", "\"@kernel\", \"@debug\", \"@mount\"", "kill");
  for (const RefusedCall& call : kDangerous) {
    INFO("danger ", call.op);
    CHECK_KILLED(probe(deny, {"danger", call.op}));
  }

  SUBCASE("control: without a syscall filter each call gets the kernel's own error") {
    const std::string none = filesystem_only(dir);
    for (const RefusedCall& call : kDangerous) {
      INFO("danger ", call.op);
      CHECK_RUN(probe(none, {"danger", call.op}), 1, call.kernel_answer);
    }
  }
  SUBCASE("control: an allowlist without them answers its default errno instead of killing") {
    const std::string eperm = allowlist(dir, "errno", "errno:EPERM", "");
    for (const RefusedCall& call : kDangerous) {
      INFO("danger ", call.op);
      CHECK_RUN(probe(eperm, {"danger", call.op}), 1, "EPERM\n");
    }
  }
}

// capabilities.deny: [syscall] leaves the start-up set, which has no write(2):
// the probe reports through its exit status. An `allow` rule of the same
// cascade reached the kernel before (mount's EFAULT through the filter).
TEST_CASE("seccomp: an allow rule cannot widen capabilities.deny: [syscall]") {
  TempDir dir;
  const std::string rule = "  syscalls:\n    rules:\n      - {syscall: mount, action: allow}\n";
  const std::string denied = compile_spec(dir, "denied", "  capabilities:\n    deny: [syscall]\n" + rule);
  CHECK(probe(denied, {"status", "danger", "mount"}).exit_code == EPERM);

  SUBCASE("control: without the denial the same rule lets mount reach the kernel (EFAULT: its NULL arguments)") {
    CHECK(probe(compile_spec(dir, "allowed", rule), {"status", "danger", "mount"}).exit_code == EFAULT);
  }
}

TEST_CASE("seccomp: an allow-all filter the command installs itself does not lift a denial") {
  TempDir dir;
  // seccomp() itself is allowed; getppid is not.
  CHECK_RUN(probe(allowlist(dir, "errno", "errno:EPERM", "seccomp"), {"own-filter-then-getppid"}), 1, "EPERM\n");
  CHECK_KILLED(probe(allowlist(dir, "kill", "kill", "seccomp"), {"own-filter-then-getppid"}));

  SUBCASE("control: with getppid allowed the same probe installs its filter and succeeds") {
    CHECK_RUN(probe(allowlist(dir, "allowed", "kill", "seccomp, getppid"), {"own-filter-then-getppid"}), 0, "OK\n");
  }
}

// A policy that writes no `default` gets EPERM for a denied call, in both
// modes: a program sees a failed call it can report, not a SIGSYS that names
// nothing (issue 11). Before, a denylist killed and an allowlist without
// `default` killed.
TEST_CASE("seccomp: a denied call answers EPERM unless the policy writes kill") {
  TempDir dir;
  const std::string deny = denylist(dir, "deny-groups", "\"@kernel\", \"@debug\", \"@mount\"");
  for (const RefusedCall& call : kDangerous) {
    INFO("danger ", call.op);
    CHECK_RUN(probe(deny, {"danger", call.op}), 1, "EPERM\n");
  }
  const std::string unwritten = plan(dir, "allowlist-no-default", std::string("    allow: [") + kProbeCalls + "]\n");
  CHECK_RUN(probe(unwritten, {"getppid"}), 1, "EPERM\n");

  SUBCASE("control: the same denylist and allowlist with `default: kill` kill") {
    CHECK_KILLED(probe(denylist(dir, "deny-kill", "\"@kernel\"", "kill"), {"danger", "bpf"}));
    CHECK_KILLED(probe(plan(dir, "allowlist-kill", std::string("    default: kill\n    allow: [") + kProbeCalls + "]\n"),
                       {"getppid"}));
  }
  SUBCASE("control: an allowed call succeeds under the allowlist without default") {
    CHECK_RUN(probe(plan(dir, "allowlist-getppid", std::string("    allow: [") + kProbeCalls + ", getppid]\n"),
                    {"getppid"}),
              0, "OK\n");
  }
}
