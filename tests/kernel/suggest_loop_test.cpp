// Issue 14, item 4, end to end: the loop a user runs to write a policy,
// from one that allows almost nothing (the command and its loader may be
// executed, /usr read, nothing written, a syscall allowlist of read and
// write answering EPERM to the rest) to one under which the command works:
//
//   aasm-launch --explain --receipt r.json plan.bin -- COMMAND   (fails)
//   aasmc suggest r.json policy.yaml > edits.diff                (exit 1: something to add)
//   patch -p0 < edits.diff; aasmc compile policy.yaml -o plan.bin
//
// with the real aasmc, aasm-launch, patch(1), git and make (gcc), against
// the real kernel. It must converge within kMaxRounds, every round must add
// something (suggest exits 1 and the policy text changes), and the policy it
// ends with must be the one the command succeeded under. Run as root, and as
// uid 65534 through setpriv, since the tracer and the listener then run
// without privilege.
//
// Between rounds the test removes what a failed round leaves for the next
// to trip over that no policy can fix (git's index.lock when unlink was
// refused; make's half-built target), as a user would.
//
// Safety: everything in the test's temp dir; no network.
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"

using namespace aasm::ktest;

namespace {

constexpr int kMaxRounds = 30;
constexpr uid_t kNobody = 65534;

// Landlock checks the ELF interpreter's execute right at execve, before any
// tracer can see the command: the start must grant it, as the command itself.
std::string loader() {
  char buffer[PATH_MAX];
  return ::realpath("/lib64/ld-linux-x86-64.so.2", buffer) ? buffer : "";
}

std::string start_policy(const std::string& command) {
  return "# The loop's start: nearly nothing allowed.\n"
         "apiVersion: aasm.dev/v1\n"
         "kind: Policy\n"
         "metadata: {name: loop, tier: agent}\n"
         "spec:\n"
         "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc/ld.so.cache\"]}   # the loader and the libraries\n"
         "    write: {allow: []}\n"
         "    execute: {allow: [\"" + command + "\", \"" + loader() + "\"]}\n"
         "  # unix sockets left to Landlock alone, so the listener sees every refused call\n"
         "  ipc: {unix_sockets: {allow: [\"/\"]}}\n"
         "  syscalls:\n"
         "    default: \"errno:EPERM\"\n"
         "    allow: [read, write]\n";
}

// A dir for the policy (pol/), one the command runs in (work/), its $HOME.
struct Workspace {
  TempDir dir;
  std::string pol = dir / "pol", work = dir / "work", home = dir / "home";
  Workspace() {
    make_dir(pol);
    make_dir(work);
    make_dir(home);
  }
};

// `argv` as uid 65534 (setpriv), or as is.
std::vector<std::string> as_user(uid_t uid, std::vector<std::string> argv) {
  if (uid == 0) return argv;
  std::vector<std::string> wrapped = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                      "--regid=" + std::to_string(uid), "--clear-groups", "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

// Runs the loop; returns the rounds it took (kMaxRounds + 1: it did not
// converge). `reset` runs before each launch.
int converge(const Workspace& w, uid_t uid, const std::vector<std::string>& command, const std::vector<std::string>& env,
             void (*reset)(const Workspace&)) {
  const std::string policy = w.pol + "/policy.yaml";
  for (int round = 1; round <= kMaxRounds; ++round) {
    // INFO evaluates its arguments when a check fails, inside doctest's walk
    // of the contexts: a call there that asserts (read_file) adds a context
    // during the walk and crashes it. Read first.
    const std::string policy_text = read_file(policy);
    INFO("round ", round, "; policy:\n", policy_text);
    const Run compiled = run({binary("AASMC"), "compile", "--arch", "x86_64", "policy.yaml", "-o", "plan.bin"}, w.pol);
    INFO("aasmc compile: ", compiled.err);
    REQUIRE(compiled.exit_code == 0);
    reset(w);
    // The user's PATH, not the test runner's (whose entries under /root
    // uid 65534 may not search: EACCES that no policy causes).
    // The receipt's key in the user's own state directory (receipts.md#redaction):
    // another user may not read the test runner's.
    std::vector<std::string> argv = {"/usr/bin/env", "HOME=" + w.home, "PATH=/usr/bin:/bin",
                                     "XDG_STATE_HOME=" + w.home + "/.state"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH"), "--explain", "--receipt",
                             w.pol + "/r.json", w.pol + "/plan.bin", "--"});
    argv.insert(argv.end(), command.begin(), command.end());
    const Run launched = run(as_user(uid, argv), w.work);
    INFO("launch stderr: ", launched.err);
    if (launched.exit_code == 0) return round;
    if (round == 1) CHECK(launched.exit_code != 0);  // the start does not already allow it
    const Run suggested = run({binary("AASMC"), "suggest", "r.json", "policy.yaml"}, w.pol);
    INFO("suggest stderr: ", suggested.err);
    REQUIRE(suggested.exit_code == 1);  // each round adds something
    REQUIRE(contains(suggested.out, "\n+"));
    write_file(w.pol + "/edits.diff", suggested.out);
    const std::string before = read_file(policy);
    const Run patched = run({"/usr/bin/patch", "-s", "-p0", "-i", "edits.diff"}, w.pol);
    INFO("patch: ", patched.out, patched.err);
    REQUIRE(patched.exit_code == 0);
    REQUIRE(read_file(policy) != before);
    REQUIRE(read_file(policy).find("# the loader and the libraries") != std::string::npos);  // comments kept
  }
  return kMaxRounds + 1;
}

void chown_to(uid_t uid, const std::string& path) {
  if (uid != 0) REQUIRE(run({"/usr/bin/chown", "-R", std::to_string(uid) + ":" + std::to_string(uid), path}).exit_code == 0);
}

void git_reset(const Workspace& w) { ::unlink((w.work + "/.git/index.lock").c_str()); }

void git_loop(uid_t uid) {
  REQUIRE_FALSE(loader().empty());
  Workspace w;
  REQUIRE(run({"/usr/bin/git", "init", "-q", w.work}).exit_code == 0);
  write_file(w.work + "/a.txt", "hello\n");
  REQUIRE(run({"/usr/bin/git", "-C", w.work, "add", "a.txt"}).exit_code == 0);
  write_file(w.home + "/.gitconfig", "[user]\n\tname = Loop Test\n\temail = loop@example.com\n");
  write_file(w.pol + "/policy.yaml", start_policy("/usr/bin/git"));
  chown_to(uid, w.dir.path());
  const int rounds = converge(w, uid, {"/usr/bin/git", "commit", "-q", "-m", "loop"},
                              {"GIT_AUTHOR_DATE=2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z"},
                              git_reset);
  MESSAGE("git commit (uid ", uid, ") worked after ", rounds, " rounds");
  CHECK(rounds > 1);
  CHECK(rounds <= kMaxRounds);
  const Run log = run({"/usr/bin/git", "-c", "safe.directory=*", "-C", w.work, "log", "--format=%s"});
  CHECK(log.out == "loop\n");
}

void make_reset(const Workspace& w) { ::unlink((w.work + "/hello").c_str()); }

void make_loop(uid_t uid) {
  REQUIRE_FALSE(loader().empty());
  Workspace w;
  write_file(w.work + "/hello.c", "int main(void) { return 0; }\n");
  write_file(w.work + "/Makefile", "hello: hello.c\n\tcc -o hello hello.c\n");
  write_file(w.pol + "/policy.yaml", start_policy("/usr/bin/make"));
  chown_to(uid, w.dir.path());
  const int rounds = converge(w, uid, {"/usr/bin/make"}, {}, make_reset);
  MESSAGE("make (uid ", uid, ") worked after ", rounds, " rounds");
  CHECK(rounds > 1);
  CHECK(rounds <= kMaxRounds);
  CHECK(read_file(w.work + "/hello").rfind("\x7f" "ELF", 0) == 0);  // built (the test's /tmp may be noexec)
}

}  // namespace

TEST_CASE("suggest loop: git commit converges from a deny-all start, as root") { git_loop(0); }
TEST_CASE("suggest loop: git commit converges from a deny-all start, as uid 65534") { git_loop(kNobody); }
TEST_CASE("suggest loop: make (gcc) converges from a deny-all start, as root") { make_loop(0); }
TEST_CASE("suggest loop: make (gcc) converges from a deny-all start, as uid 65534") { make_loop(kNobody); }
