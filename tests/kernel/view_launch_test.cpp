// The filesystem view through aasm-launch (docs/filesystem-view.md): the
// coding-agent profile with a tier that turns the view on, against the same
// profile without it (the control), as root and as uid 65534. The command is
// python3, which every host with the profile's tools has, printing each
// operation's errno name.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "harness.h"

namespace aasm::ktest {
namespace {

constexpr uid_t kNobody = 65534;

const char* const kViewTier = R"(apiVersion: aasm.dev/v1
kind: Policy
metadata: {name: view, tier: run}
spec:
  resources:
    tmp_size: 4Mi
  isolation:
    filesystem_view: true
  filesystem:
    readonly: ["${CWD}/.git/hooks", "${CWD}/.git/config"]
)";

// Each operation on one line: NAME OK, or NAME ERRNONAME.
const char* const kScript = R"(import errno, os, sys
def t(name, f):
    try:
        f()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
def fill():
    with open("/tmp/fill", "wb") as f:
        for _ in range(64):
            f.write(b"x" * (1 << 20))
            f.flush()
t("write-config", lambda: open(".git/config", "a").write("[core]\n\thooksPath = /tmp\n"))
t("new-hook", lambda: open(".git/hooks/post-checkout", "w").write("#!/bin/sh\n"))
t("rename-hooks", lambda: os.rename(".git/hooks", "hooks-old"))
t("rename-git", lambda: os.rename(".git", "git-old"))
open("cfg", "w").write("evil\n")
t("replace-config", lambda: os.rename("cfg", ".git/config"))
os.symlink("/tmp", "link")
t("symlink-over-hooks", lambda: os.rename("link", ".git/hooks"))
t("unlink-config", lambda: os.unlink(".git/config"))
t("workspace-write", lambda: open("made.txt", "w").write("ok\n"))
t("workspace-rename", lambda: os.rename("made.txt", "renamed.txt"))
t("stat-outside", lambda: os.stat(sys.argv[1]))
print("host-pid", "visible" if os.path.exists("/proc/" + sys.argv[2]) else "absent")
t("fill-tmp", fill)
)";

std::string profile() { return binary("AASM_PROFILES") + "/coding-agent.yaml"; }

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
    write_file(base / "view.yaml", kViewTier);
    if (uid != 0) REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", base.path()}).exit_code == 0);
  }

  std::string compile(bool view) const {
    const std::string plan = base / (view ? "view.bin" : "plain.bin");
    std::vector<std::string> argv = {binary("AASMC"), "compile", profile()};
    if (view) argv.push_back(base / "view.yaml");
    for (const std::string& a : {std::string("-o"), plan}) argv.push_back(a);
    const Run r = run(argv);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    ::chmod(plan.c_str(), 0644);
    return plan;
  }

  Run launch(const std::string& plan, uid_t uid, pid_t host_pid) const {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8"};
    if (uid != 0)
      for (const char* a : {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"})
        argv.push_back(a);
    for (const std::string& a : {binary("AASM_LAUNCH"), std::string("--receipt"), base / "receipt.json", plan,
                                 std::string("--"), std::string("/usr/bin/python3"), std::string("t.py"), secret,
                                 std::to_string(host_pid)})
      argv.push_back(a);
    return run(argv, ws);
  }
};

std::string mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void view_suite(uid_t uid) {
  const Sentinel host_process(uid == 0 ? Sentinel::Caps::kRoot : Sentinel::Caps::kNobody);
  SUBCASE("under the view: protected .git paths hold, the workspace is writable, the host is out of sight") {
    const Workspace w(uid);
    const std::string before = mountinfo();
    const Run r = w.launch(w.compile(true), uid, host_process.pid());
    INFO(r.err, r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "write-config EROFS\n"));
    CHECK(contains(r.out, "new-hook EROFS\n"));
    // A protected path is a mount of its own: renaming it, or anything onto
    // it, crosses mounts (EXDEV); its pinned parent cannot move (EBUSY).
    CHECK(contains(r.out, "rename-hooks EXDEV\n"));
    CHECK(contains(r.out, "rename-git EBUSY\n"));
    CHECK(contains(r.out, "replace-config EXDEV\n"));
    CHECK(!contains(r.out, "symlink-over-hooks OK\n"));
    CHECK(contains(r.out, "unlink-config EBUSY\n"));
    CHECK(contains(r.out, "workspace-write OK\n"));
    CHECK(contains(r.out, "workspace-rename OK\n"));
    CHECK(contains(r.out, "stat-outside ENOENT\n"));
    CHECK(contains(r.out, "host-pid absent\n"));
    CHECK(contains(r.out, "fill-tmp ENOSPC\n"));
    // The host saw none of it: the protected files as they were, no mount left.
    CHECK(read_file(w.ws + "/.git/config") == "[core]\n");
    CHECK(!exists(w.ws + "/.git/hooks/post-checkout"));
    CHECK(exists(w.ws + "/renamed.txt"));
    CHECK(mountinfo() == before);
    const std::string receipt = read_file(w.base / "receipt.json");
    CHECK(contains(receipt, "\"domain\": \"filesystem_view\""));
    CHECK(contains(receipt, "answered a write-access check with EROFS before exec: ${CWD}/.git/config; ${CWD}/.git/hooks;"));
    CHECK(contains(receipt, "{\"path\": \"/tmp\", \"what\": \"private tmpfs, 4194304 bytes\""));
  }
  SUBCASE("the control: the same profile without the view") {
    const Workspace w(uid);
    const Run r = w.launch(w.compile(false), uid, host_process.pid());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "write-config OK\n"));
    CHECK(contains(r.out, "new-hook OK\n"));
    CHECK(contains(r.out, "rename-hooks OK\n"));
    CHECK(contains(r.out, "workspace-write OK\n"));
    CHECK(contains(r.out, "stat-outside OK\n"));  // Landlock does not mediate stat
    CHECK(contains(r.out, "host-pid visible\n"));
    CHECK(contains(r.out, "fill-tmp OK\n"));  // 64 MiB on the host's /tmp
    CHECK(exists(w.ws + "/hooks-old/post-checkout"));
    ::unlink("/tmp/fill");
  }
}

}  // namespace

TEST_CASE("view launch: coding-agent with the filesystem view, as root") { view_suite(0); }
TEST_CASE("view launch: coding-agent with the filesystem view, as uid 65534") { view_suite(kNobody); }

// A protected path that is missing is refused unless it is optional: then
// it is skipped, and said so (a workspace that is not a git repository).
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
}

}  // namespace aasm::ktest
