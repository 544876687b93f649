// Attacks on the safe defaults every plan carries (docs/seccomp.md): a
// command creating or joining namespaces, and running code from a tree
// without the execute right (issue 10, items 7 and 8). Each runs aasm-probe
// under aasm-launch against the real kernel, under a denylist and an
// allowlist where the filter mode matters, and each has its control: the
// same op under a plan that opts in (the call named in an allow list or
// given an `allow` rule), or without execute confinement, succeeds.
//
// The namespace ops are harmless unfiltered (tests/probe/probe.c, SAFETY):
// clone and unshare make namespaces only for the probe's own short-lived
// processes, and setns gets a descriptor that does not exist.
#include <csignal>

#include "harness.h"

using namespace aasm::ktest;

namespace {

// The probe's own calls besides the op, for allowlists (libc start-up is
// the compiler's start-up set). Groups, not names: a name is an opt-in.
constexpr const char* kProbeCalls = "read, write, openat, close, newfstatat, exit_group";

// Reads the system, the probe and `dir`; writes `dir`; executes /usr and
// the probe's directory (and `dir` when `dir_executable`).
std::string filesystem(const TempDir& dir, bool dir_executable = false) {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\", \"" + dir.path() + "\"]}\n"
         "    write: {allow: [\"" + dir.path() + "\"]}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"" + (dir_executable ? ", \"" + dir.path() + "\"" : "") +
         "]}\n";
}

// `allow` rules for each call in `calls`: the opt-in of a denylist.
std::string allow_rules(std::initializer_list<const char*> calls) {
  std::string out = "    rules:\n";
  for (const char* call : calls) out += "      - syscall: " + std::string(call) + "\n        action: allow\n";
  return out;
}

// The review's coding-agent shape: a denylist of @privileged (unshare and
// setns are in it, clone is not), plus `rest` (more lines of spec.syscalls).
std::string denylist(const TempDir& dir, const std::string& name, const std::string& rest = "",
                     bool dir_executable = false) {
  return compile_spec(dir, name, filesystem(dir, dir_executable) + "  syscalls:\n    deny: [\"@privileged\"]\n" + rest);
}

// An allowlist with kill as its default, so an errno can only come from a
// rule: the probe's calls, the groups holding clone, execve(at) and
// memfd_create, and `extra` (", name" entries).
std::string allowlist(const TempDir& dir, const std::string& name, const std::string& extra = "") {
  return compile_spec(dir, name,
                      filesystem(dir) + "  syscalls:\n    default: kill\n    allow: [" + kProbeCalls +
                          ", \"@process\", \"@memory\"" + extra + "]\n");
}

}  // namespace

TEST_CASE("attack: clone(CLONE_NEWUSER|CLONE_NEWNET) is refused with EPERM under a denylist of @privileged and an allowlist") {
  TempDir dir;
  const std::string deny = denylist(dir, "deny-privileged");
  const std::string allow = allowlist(dir, "allow-process");
  CHECK_RUN(probe(deny, {"clone", "newuser-newnet"}), 1, "EPERM\n");
  CHECK_RUN(probe(allow, {"clone", "newuser-newnet"}), 1, "EPERM\n");

  SUBCASE("control: a plain fork goes through under the same plans") {
    CHECK_RUN(probe(deny, {"clone", "plain"}), 0, "OK\n");
    CHECK_RUN(probe(allow, {"clone", "plain"}), 0, "OK\n");
  }
  SUBCASE("control: a plan that opts in (an allow rule; clone named in the allowlist) makes the namespaces") {
    CHECK_RUN(probe(denylist(dir, "opt-in-rule", allow_rules({"clone"})), {"clone", "newuser-newnet"}), 0, "OK\n");
    CHECK_RUN(probe(allowlist(dir, "opt-in-name", ", clone"), {"clone", "newuser-newnet"}), 0, "OK\n");
  }
}

TEST_CASE("attack: unshare and setns are refused with EPERM by a plan that names no syscalls at all") {
  TempDir dir;
  // Landlock only: the safe defaults are the whole filter.
  const std::string plain = compile_spec(dir, "filesystem-only", filesystem(dir));
  CHECK_RUN(probe(plain, {"unshare", "user"}), 1, "EPERM\n");
  CHECK_RUN(probe(plain, {"unshare", "user-mount"}), 1, "EPERM\n");
  CHECK_RUN(probe(plain, {"setns-bad"}), 1, "EPERM\n");
  CHECK_RUN(probe(plain, {"clone", "newuser-newnet"}), 1, "EPERM\n");

  SUBCASE("control: with allow rules for them the kernel answers (setns: EBADF for the descriptor -1)") {
    const std::string opted = compile_spec(dir, "opt-in", filesystem(dir) + "  syscalls:\n" +
                                                              allow_rules({"unshare", "setns"}));
    CHECK_RUN(probe(opted, {"unshare", "user"}), 0, "OK\n");
    CHECK_RUN(probe(opted, {"unshare", "user-mount"}), 0, "OK\n");
    CHECK_RUN(probe(opted, {"setns-bad"}), 1, "EBADF\n");
  }
}

TEST_CASE("attack: a memfd holding a program cannot be executed when filesystem.execute is confined") {
  TempDir dir;
  for (const bool allowlisted : {false, true}) {
    const std::string plan = allowlisted ? allowlist(dir, "allow") : denylist(dir, "deny");
    INFO((allowlisted ? "allowlist" : "denylist"));
    // memfd_create without MFD_NOEXEC_SEAL is refused...
    CHECK_RUN(probe(plan, {"memfd-exec", "plain", "execveat"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"memfd-exec", "plain", "proc"}), 1, "EACCES\n");
    // ...and a sealed one has mode 0 and F_SEAL_EXEC: no exec by either route.
    CHECK_RUN(probe(plan, {"memfd-exec", "sealed", "execveat"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"memfd-exec", "sealed", "proc"}), 1, "EACCES\n");
  }

  SUBCASE("control: opted in, Landlock alone runs the memfd (its internal mount is exempt); a sealed one still fails") {
    const std::string opted = denylist(dir, "opt-in", allow_rules({"memfd_create", "execveat"}));
    CHECK_RUN(probe(opted, {"memfd-exec", "plain", "execveat"}), 0, "OK\n");
    CHECK_RUN(probe(opted, {"memfd-exec", "plain", "proc"}), 0, "OK\n");
    CHECK_RUN(probe(opted, {"memfd-exec", "sealed", "proc"}), 1, "EACCES\n");
    CHECK_RUN(probe(allowlist(dir, "opt-in-names", ", memfd_create, execveat"), {"memfd-exec", "plain", "execveat"}), 0,
              "OK\n");
  }
  SUBCASE("control: without execute rules the default does not apply") {
    const std::string unconfined =
        compile_spec(dir, "no-execute-rules",
                     "  filesystem:\n    write: {allow: [\"" + dir.path() + "\"]}\n  syscalls:\n    deny: [\"@privileged\"]\n");
    CHECK_RUN(probe(unconfined, {"memfd-exec", "plain", "execveat"}), 0, "OK\n");
  }
}

TEST_CASE("attack: execveat of a descriptor (fexecve) is refused with EACCES when filesystem.execute is confined") {
  TempDir dir;
  const std::string probe_path = binary("AASM_PROBE");
  CHECK_RUN(probe(denylist(dir, "deny"), {"fexec", probe_path}), 1, "EACCES\n");
  CHECK_RUN(probe(allowlist(dir, "allow"), {"fexec", probe_path}), 1, "EACCES\n");

  SUBCASE("control: the same file runs by path, and by descriptor under an allow rule for execveat") {
    CHECK_RUN(probe(denylist(dir, "deny-path"), {"exec", probe_path, "ok"}), 0, "OK\n");
    CHECK_RUN(probe(denylist(dir, "opt-in", allow_rules({"execveat"})), {"fexec", probe_path}), 0, "OK\n");
  }
}

TEST_CASE("attack: a file no path leads to (O_TMPFILE, unlinked) in a tree without execute: Landlock refuses its exec") {
  TempDir dir;
  // execveat allowed: what stops these is Landlock, which checks the
  // execute right on the file's own place in the tree, named or not.
  const std::string opted = denylist(dir, "opt-in", allow_rules({"execveat"}));
  CHECK_RUN(probe(opted, {"unnamed-exec", "tmpfile", dir.path(), "proc"}), 1, "EACCES\n");
  CHECK_RUN(probe(opted, {"unnamed-exec", "tmpfile", dir.path(), "execveat"}), 1, "EACCES\n");
  CHECK_RUN(probe(opted, {"unnamed-exec", "deleted", dir.path(), "proc"}), 1, "EACCES\n");

  SUBCASE("control: with execute on the tree, the same files run") {
    const std::string executable = denylist(dir, "executable", allow_rules({"execveat"}), true);
    CHECK_RUN(probe(executable, {"unnamed-exec", "tmpfile", dir.path(), "proc"}), 0, "OK\n");
    CHECK_RUN(probe(executable, {"unnamed-exec", "tmpfile", dir.path(), "execveat"}), 0, "OK\n");
    CHECK_RUN(probe(executable, {"unnamed-exec", "deleted", dir.path(), "proc"}), 0, "OK\n");
  }
}

// The documented limit (docs/landlock.md, "What the execute right does not
// cover"): the dynamic loader is itself executable, and it maps the program
// it is given with mmap(PROT_EXEC), which needs only the read right. This
// test asserts the hole, so the documentation stays true; a filesystem view
// that mounts the writable trees noexec will close it and turn it around.
TEST_CASE("limit: the dynamic loader runs a program from a tree without execute (ld.so FILE)") {
#if defined(__x86_64__)
  const std::string loader = "/lib64/ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
  const std::string loader = "/lib/ld-linux-aarch64.so.1";
#endif
  TempDir dir;
  const std::string copy = dir / "prog";
  write_file(copy, read_file(binary("AASM_PROBE")), 0755);
  const std::string plan = denylist(dir, "deny");
  CHECK_RUN(launch(plan, {loader, copy, "ok"}), 0, "OK\n");

  SUBCASE("control: the same file executed directly is refused by Landlock") {
    CHECK_RUN(probe(plan, {"exec", copy, "ok"}), 1, "EACCES\n");
  }
}

// io_uring is refused with the unwritten default, EPERM, since issue 11 (the
// name, which docs/threat-model.md cites, predates it).
TEST_CASE("attack: a plan that names no syscalls still kills x32 calls and refuses io_uring (the filter every plan carries)") {
  TempDir dir;
  const std::string plain = compile_spec(dir, "filesystem-only", filesystem(dir));
  constexpr int kKilled = 128 + SIGSYS;  // aasm-launch: 128 + the signal
  CHECK_RUN(probe(plain, {"io_uring_setup"}), 1, "EPERM\n");
#if defined(__x86_64__)
  CHECK_RUN(probe(plain, {"x32-getpid"}), kKilled, "");
#endif

  SUBCASE("control: without the launcher the kernel answers them (EFAULT for the NULL params; no x32 ABI here)") {
    CHECK_RUN(run({binary("AASM_PROBE"), "io_uring_setup"}), 1, "EFAULT\n");
#if defined(__x86_64__)
    const Run r = run({binary("AASM_PROBE"), "x32-getpid"});
    CHECK(r.signal == 0);
    CHECK((r.out == "ENOSYS\n" || r.out == "OK\n"));
#endif
  }
}
