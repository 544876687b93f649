// The filesystem view (runtime/kernel/mount_view.h, docs/filesystem-view.md)
// against the real kernel, without the launcher: a forked runner (the
// stand-in for the supervisor; as root, or as uid 65534) prepares the view,
// starts the child with kernel/spawn.h in fresh mount and PID namespaces
// (and a user namespace, for "root in a user namespace" and for nobody),
// and the child builds the view and execs aasm-probe or a shell, as
// run_child will. Every mount happens inside the namespace the child was
// born with, after it made every mount private: nothing here touches the
// host's mounts (the last-mount test checks that too).
//
// Each test has its control: the same probe in the same view without the
// protection, in a view that binds what was hidden, or on the host.
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "fixtures.h"
#include "harness.h"
#include "kernel/landlock.h"
#include "kernel/landlock_uapi.h"
#include "kernel/mount_view.h"
#include "kernel/namespaces.h"
#include "kernel/spawn.h"
#include "plan/plan.h"

extern char** environ;

namespace aasm::ktest {
namespace {

using mount_view::Spec;
using mount_view::Tree;

// Who starts the view: root in the host's user namespace, root through a
// user namespace of its own, or an unprivileged user through one.
enum class Who { kRoot, kRootInUserNamespace, kNobody };
constexpr Who kEveryone[] = {Who::kRoot, Who::kRootInUserNamespace, Who::kNobody};
constexpr uid_t kNobodyId = 65534;

std::string name_of(Who who) {
  switch (who) {
    case Who::kRoot: return "root";
    case Who::kRootInUserNamespace: return "root through a user namespace";
    case Who::kNobody: return "uid 65534 through a user namespace";
  }
  return "?";
}

uid_t uid_of(Who who) { return who == Who::kNobody ? kNobodyId : 0; }

// A Landlock layer as the launcher makes it: the ruleset and its rules
// opened on the host's paths by the runner, before the clone; optionally
// rules on paths of the view itself, opened by the child once it is built.
struct LandlockLayer {
  std::vector<std::pair<std::string, uint64_t>> host_rules;
  std::vector<std::pair<std::string, uint64_t>> view_rules;
};

constexpr uint64_t kRead = landlock::fs::kReadFile | landlock::fs::kReadDir;
constexpr uint64_t kReadExecute = kRead | landlock::fs::kExecute;
constexpr uint64_t kReadWrite = kRead | landlock::fs::kWriteFile | landlock::fs::kMakeReg | landlock::fs::kRemoveFile |
                                landlock::fs::kTruncate;

struct Launch {
  const Spec* view = nullptr;  // none: the command runs on the host, in no new namespace (a control)
  Who who = Who::kRoot;
  const LandlockLayer* landlock = nullptr;
  // For the control of check_protected(): the protected binds are made but
  // left read-write, as a broken build would leave them.
  bool skip_protection = false;
  // For the control of the pins: the binds of the directories between a
  // writable tree and its protected paths are left out.
  bool skip_pins = false;
};

bool is_protected(const mount_view::Prepared& p, const char* path) {
  return std::any_of(p.protected_paths.begin(), p.protected_paths.end(),
                     [&](uint32_t offset) { return std::strcmp(p.at(offset), path) == 0; });
}

// What the two controls above leave out of a prepared view.
void weaken(mount_view::Prepared& p, const Launch& launch) {
  std::erase_if(p.steps, [&](const mount_view::Step& step) {
    const bool self_bind = step.op == mount_view::Op::kMount && step.source != mount_view::Prepared::kNone &&
                           std::strcmp(p.at(step.source), p.at(step.target)) == 0;
    const bool pin = self_bind && !is_protected(p, p.at(step.target)) && std::strncmp(p.at(step.target), "/proc/", 6) != 0;
    return (launch.skip_pins && pin) ||
           (launch.skip_protection && step.op == mount_view::Op::kSetAttr && is_protected(p, p.at(step.target)));
  });
}

// What the runner and the child share (the child runs in the runner's
// memory until it execs).
struct Child {
  const mount_view::Prepared* view;
  uint32_t namespaces;
  uid_t uid;
  gid_t gid;
  int ruleset_fd;
  const LandlockLayer* landlock;
  char* const* argv;
  const char* stage = nullptr;  // written by the child when a step fails
  int error = 0;
  mount_view::Failure failure{};
  mount_view::ProtectionCheck protection{};
};

int child_failed(Child& c, const char* stage, int error) {
  c.stage = stage;
  c.error = error;
  return 125;
}

Status add_rule(int ruleset_fd, const std::string& path, uint64_t access) {
  const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return make_error(path + ": " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  Status added = landlock::add_path_rule(ruleset_fd, fd, st, access);
  ::close(fd);
  return added;
}

int child_main(void* argument) {
  Child& c = *static_cast<Child*>(argument);
  if (int error = namespaces::finish_in_child(c.namespaces, c.uid, c.gid)) return child_failed(c, "namespaces", error);
  if (c.view) {
    c.failure = mount_view::build(*c.view);
    if (c.failure.error) return child_failed(c, "view", c.failure.error);
    c.protection = mount_view::check_protected(*c.view);
  }
  if (c.ruleset_fd >= 0) {
    for (const auto& [path, access] : c.landlock->view_rules)
      if (!add_rule(c.ruleset_fd, path, access)) return child_failed(c, "landlock_add_rule in the view", EINVAL);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return child_failed(c, "no_new_privs", errno);
    if (int error = landlock::restrict_self(c.ruleset_fd)) return child_failed(c, "landlock_restrict_self", error);
  }
  spawn::await_supervisor();
  return child_failed(c, "execve", spawn::exec(c.argv[0], c.argv, environ));
}

Result<int> make_ruleset(const LandlockLayer& layer) {
  plan::LandlockRuleset ruleset;
  ruleset.handled_fs = landlock::fs_rights_for_abi(landlock::probe_abi().abi);
  auto fd = landlock::create_ruleset(ruleset);
  if (!fd) return fd;
  for (const auto& [path, access] : layer.host_rules)
    if (Status added = add_rule(*fd, path, access); !added) return added.error();
  return fd;
}

// The runner: in the forked copy of the test, so identities and the
// one-start-at-a-time rule of kernel/spawn.h stay there.
int runner(const Launch& launch, const std::vector<std::string>& command) {
  const uid_t id = uid_of(launch.who);
  // Dumpable again after the change of ids, as a process started by the
  // user would be: the kernel makes a non-dumpable process's /proc files
  // root's, and the child must write its own /proc/self/uid_map.
  if (launch.who == Who::kNobody &&
      (::setgroups(0, nullptr) != 0 || ::setresgid(id, id, id) != 0 || ::setresuid(id, id, id) != 0 ||
       ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)) {
    std::fprintf(stderr, "runner: cannot become uid %u: %s\n", unsigned(id), std::strerror(errno));
    return 125;
  }
  std::optional<mount_view::Prepared> prepared;
  if (launch.view) {
    auto view = mount_view::prepare(*launch.view);
    if (!view) {
      std::fprintf(stderr, "prepare: %s\n", view.error().message.c_str());
      return 125;
    }
    prepared = std::move(*view);
    weaken(*prepared, launch);
  }
  int ruleset_fd = -1;
  if (launch.landlock) {
    auto fd = make_ruleset(*launch.landlock);
    if (!fd) {
      std::fprintf(stderr, "landlock: %s\n", fd.error().message.c_str());
      return 125;
    }
    ruleset_fd = *fd;
  }
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  uint32_t fresh = 0;
  if (launch.view) fresh = plan::kNamespaceMount | plan::kNamespacePid;
  if (launch.view && launch.who != Who::kRoot) fresh |= plan::kNamespaceUser;
  Child child{prepared ? &*prepared : nullptr, fresh, ::getuid(), ::getgid(), ruleset_fd, launch.landlock, argv.data()};
  const pid_t pid = spawn::start({namespaces::clone_flags(fresh), -1, nullptr}, child_main, &child, [] { return true; });
  if (pid < 0) {
    std::fprintf(stderr, "spawn: %s\n", std::strerror(-pid));
    return 125;
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!child.protection.refused)
    std::fprintf(stderr, "protection not refused: %s answered %s\n", prepared->at(child.protection.path),
                 child.protection.answer ? std::strerror(child.protection.answer) : "writable");
  if (child.stage)
    std::fprintf(stderr, "child: %s: %s%s\n", child.stage, std::strerror(child.error),
                 child.failure.error ? (" at: " + mount_view::describe(*prepared, child.failure.step)).c_str() : "");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Run run_in(const Launch& launch, const std::vector<std::string>& command) {
  return run_forked([&] { return runner(launch, command); });
}

Run probe_in(const Launch& launch, std::vector<std::string> args) {
  args.insert(args.begin(), binary("AASM_PROBE"));
  return run_in(launch, args);
}

// What every view here holds for the probe and the shell: the system
// read-only and executable, /etc read-only and noexec, the probe's build
// directory, the usual device nodes, a fresh /proc, the root's links into
// /usr; plus `trees`.
Spec view_with(std::vector<Tree> trees) {
  Spec spec;
  spec.trees = {{"/usr", "", 0}, {"/etc", "", mount_view::kNoExec}, {probe_dir(), "", 0}};
  spec.trees.insert(spec.trees.end(), trees.begin(), trees.end());
  spec.dev_nodes = {"null", "zero", "full", "random", "urandom", "tty"};
  spec.proc = true;
  mount_view::add_root_symlinks(spec);
  return spec;
}

Tree writable(const std::string& path) { return {path, "", mount_view::kWritable}; }
Tree readable(const std::string& path) { return {path, "", 0}; }
Tree protect(const std::string& path) { return {path, "", mount_view::kProtected}; }

// Gives a fixture to `who`: the temp dir traversable, its contents owned
// by the identity that runs the view.
void hand_over(const TempDir& dir, Who who) {
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  static uid_t owner;
  owner = uid_of(who);
  ::nftw(
      dir.path().c_str(),
      [](const char* path, const struct stat*, int, FTW*) { return ::lchown(path, owner, owner) == 0 ? 0 : 1; }, 16,
      FTW_PHYS);
}

#define CHECK_PROBE(run_expr, expected)                          \
  do {                                                           \
    const ::aasm::ktest::Run& r_ = (run_expr);                   \
    INFO("stderr: ", r_.err);                                    \
    CHECK(r_.out == std::string(expected) + "\n");               \
  } while (0)

// A checkout: a writable workspace whose .git holds a hook and a config.
struct Workspace {
  TempDir dir;
  const std::string ws = dir / "ws";
  const std::string git = ws + "/.git";
  explicit Workspace(Who who) {
    make_dir(ws);
    make_dir(git);
    make_dir(git + "/hooks");
    write_file(git + "/config", "[core]\n\tbare = false\n");
    write_file(git + "/hooks/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
    write_file(git + "/index", "index");
    write_file(git + "/evil", "[core]\n\thooksPath = /tmp/evil\n");
    REQUIRE(::symlink("/tmp/evil-hooks", (git + "/hooks-link").c_str()) == 0);
    REQUIRE(::symlink("/tmp/evil-git", (ws + "/git-link").c_str()) == 0);
    write_file(ws + "/file", "work");
    hand_over(dir, who);
  }
};

struct Attempt {
  std::string what;
  std::vector<std::string> args;  // paths relative to the workspace start with "ws/"
  const char* when_protected;     // errno name, or "OK"
};

TEST_CASE("view: protected .git/hooks and .git/config stay as they are inside a writable workspace") {
  // Renames stay within one mount, or the kernel answers EXDEV before it
  // looks at mount points; EBUSY is the mount point's own answer.
  const Attempt attempts[] = {
      {"write the config", {"write", "ws/.git/config"}, "EROFS"},
      {"truncate the config", {"truncate", "ws/.git/config"}, "EROFS"},
      {"write a hook", {"write", "ws/.git/hooks/pre-commit"}, "EROFS"},
      {"add a hook", {"write", "ws/.git/hooks/post-checkout"}, "EROFS"},
      {"add a hook as a symlink", {"symlink", "/tmp/evil", "ws/.git/hooks/post-merge"}, "EROFS"},
      {"rename the config away", {"rename", "ws/.git/config", "ws/.git/config-moved"}, "EBUSY"},
      {"rename another file over the config", {"rename", "ws/.git/evil", "ws/.git/config"}, "EBUSY"},
      {"unlink the config", {"unlink", "ws/.git/config"}, "EBUSY"},
      {"rename the hooks away", {"rename", "ws/.git/hooks", "ws/.git/hooks-moved"}, "EBUSY"},
      {"swap the hooks with a symlink", {"rename-exchange", "ws/.git/hooks-link", "ws/.git/hooks"}, "EBUSY"},
      // .git is pinned: renamed, it would carry hooks/ and config away and
      // leave its name to a new .git of the command's making.
      {"rename .git away", {"rename", "ws/.git", "ws/git-moved"}, "EBUSY"},
      {"swap .git with a symlink", {"rename-exchange", "ws/git-link", "ws/.git"}, "EBUSY"},
      // The rest stays writable, .git's other files included (git writes them).
      {"write the index", {"write", "ws/.git/index"}, "OK"},
      {"add a ref", {"write", "ws/.git/ORIG_HEAD"}, "OK"},
      {"add a file to the workspace", {"write", "ws/new-file"}, "OK"},
      {"rename a workspace file", {"rename", "ws/file", "ws/file-renamed"}, "OK"},
  };
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    for (const Attempt& attempt : attempts) {
      CAPTURE(attempt.what);
      for (const bool protecting : {true, false}) {
        CAPTURE(protecting);
        Workspace w(who);
        std::vector<Tree> trees = {writable(w.ws)};
        if (protecting) trees.insert(trees.end(), {protect(w.git + "/hooks"), protect(w.git + "/config")});
        const Spec spec = view_with(trees);
        std::vector<std::string> args = attempt.args;
        for (std::string& arg : args)
          if (arg.rfind("ws/", 0) == 0) arg = w.dir / arg;
        // Control: without the protection, every attempt succeeds.
        CHECK_PROBE(probe_in({&spec, who}, args), protecting ? attempt.when_protected : "OK");
      }
    }
  }
}

// A mount point moves with its directory entry: renaming a parent of a
// protected path is refused only because prepare() pins the parents.
TEST_CASE("view: without the pins, .git would be renamed away with its protected paths inside") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    for (const bool pinned : {true, false}) {
      CAPTURE(pinned);
      Workspace w(who);
      const Spec spec = view_with({writable(w.ws), protect(w.git + "/hooks"), protect(w.git + "/config")});
      Launch launch{&spec, who};
      launch.skip_pins = !pinned;
      // Either way the protected paths themselves hold...
      CHECK_PROBE(probe_in(launch, {"write", w.git + "/config"}), "EROFS");
      // ...but unpinned, their parent goes, and a new .git could take its name.
      CHECK_PROBE(probe_in(launch, {"rename", w.git, w.ws + "/git-moved"}), pinned ? "EBUSY" : "OK");
    }
  }
}

// The receipt's evidence: before exec, the child asks each protected path
// for write access and gets the read-only mount's EROFS.
TEST_CASE("view: the child proves the protection before exec") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    Workspace w(who);
    const Spec spec = view_with({writable(w.ws), protect(w.git + "/hooks"), protect(w.git + "/config")});
    const Run held = probe_in({&spec, who}, {"ok"});
    CHECK(held.out == "OK\n");
    CHECK_FALSE(contains(held.err, "protection not refused"));
    // Control: with the protected binds left read-write the check says so.
    Launch broken{&spec, who};
    broken.skip_protection = true;
    const Run weakened = probe_in(broken, {"ok"});
    CHECK(contains(weakened.err, "protection not refused: " + w.git + "/config answered writable"));
    CHECK_PROBE(probe_in(broken, {"write", w.git + "/config"}), "OK");
  }
}

TEST_CASE("view: a path outside the view does not exist there, not even for stat") {
  TempDir home;
  make_dir(home / ".ssh");
  write_file(home / ".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n", 0600);
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    Workspace w(who);
    hand_over(home, who);
    const Spec spec = view_with({writable(w.ws)});
    for (const std::string& path : {home / ".ssh/id_ed25519", home.path(), std::string("/root")}) {
      CAPTURE(path);
      CHECK_PROBE(probe_in({&spec, who}, {"stat", path}), "ENOENT");
      // Control: on the host, stat sees it (Landlock would not stop that).
      CHECK_PROBE(probe_in({nullptr, who}, {"stat", path}), "OK");
    }
    // The workspace's own ancestors are empty directories of the view.
    CHECK_PROBE(probe_in({&spec, who}, {"stat", w.dir.path()}), "OK");
    CHECK_PROBE(probe_in({&spec, who}, {"stat", w.dir / "ws/.git/config"}), "OK");
  }
}

TEST_CASE("view: host processes are absent from the view's /proc") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    Sentinel host_process(who == Who::kNobody ? Sentinel::Caps::kNobody : Sentinel::Caps::kRoot);
    const Spec spec = view_with({});
    CHECK_PROBE(probe_in({&spec, who}, {"read-proc", host_process.id(), "cmdline"}), "ENOENT");
    CHECK_PROBE(probe_in({&spec, who}, {"stat", "/proc/" + host_process.id()}), "ENOENT");
    // The view's /proc is there, and is the command's PID namespace.
    CHECK_PROBE(probe_in({&spec, who}, {"read-proc", "self", "status"}), "OK");
    CHECK_PROBE(probe_in({&spec, who}, {"read-proc", "1", "cmdline"}), "OK");
    // Control: on the host, the process is there to read.
    CHECK_PROBE(probe_in({nullptr, who}, {"read-proc", host_process.id(), "cmdline"}), "OK");
  }
}

TEST_CASE("view: a host unix socket outside the view is unreachable") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    TempDir dir;
    REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
    UnixService service(dir, 0666);
    const Spec hidden = view_with({});
    CHECK_PROBE(probe_in({&hidden, who}, {"unix-connect", service.path()}), "ENOENT");
    // Control: a view that binds the socket's directory reaches it.
    const Spec shown = view_with({readable(dir.path())});
    CHECK_PROBE(probe_in({&shown, who}, {"unix-connect", service.path()}), "OK");
  }
}

#if defined(__x86_64__)
constexpr const char* kLoader = "/lib64/ld-linux-x86-64.so.2";
#elif defined(__aarch64__)
constexpr const char* kLoader = "/lib/ld-linux-aarch64.so.1";
#endif

TEST_CASE("view: a noexec tree refuses execve, mmap(PROT_EXEC) and the loader trick") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    TempDir dir;
    const std::string bin = dir / "bin", program = bin + "/probe-copy";
    make_dir(bin);
    write_file(program, read_file(binary("AASM_PROBE")), 0755);
    hand_over(dir, who);
    for (const bool executable : {false, true}) {
      CAPTURE(executable);
      const Spec spec = view_with({{bin, "", executable ? 0u : uint32_t(mount_view::kNoExec)}});
      // Control (executable): the same three succeed from a tree with the execute right.
      CHECK_PROBE(probe_in({&spec, who}, {"exec", program, "ok"}), executable ? "OK" : "EACCES");
      CHECK_PROBE(probe_in({&spec, who}, {"mmap-exec", program}), executable ? "OK" : "EPERM");
      const Run loaded = probe_in({&spec, who}, {"exec", kLoader, program, "ok"});
      INFO("loader stderr: ", loaded.err);
      if (executable) {
        CHECK(loaded.out == "OK\n");
      } else {
        CHECK(loaded.out.empty());
        CHECK(loaded.exit_code == 127);
        CHECK(contains(loaded.err, "failed to map segment"));
      }
    }
  }
}

TEST_CASE("view: the private /tmp stops at its ceiling with ENOSPC and leaves the host's disk alone") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    const std::string name = "/tmp/aasm-view-fill-" + std::to_string(::getpid());
    for (const uint64_t ceiling : {uint64_t(1) << 20, uint64_t(8) << 20}) {
      CAPTURE(ceiling);
      Spec spec = view_with({});
      spec.tmpfs = {{"/tmp", ceiling, false}};
      // Control: under the larger ceiling the same 4 MiB fit.
      CHECK_PROBE(probe_in({&spec, who}, {"write-bytes", name, std::to_string(4 << 20)}),
                  ceiling < (4u << 20) ? "ENOSPC" : "OK");
      CHECK_FALSE(exists(name));  // written into the view's tmpfs, gone with it
    }
  }
}

std::string own_mountinfo() { return read_file("/proc/self/mountinfo"); }

TEST_CASE("view: no mount is left in the host's namespace when the command ends") {
  TempDir dir;
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    hand_over(dir, who);
    Spec spec = view_with({writable(dir.path())});
    spec.tmpfs = {{"/tmp", 1 << 20, false}, {"/dev/shm", 1 << 20, false}};
    spec.dev_pts = true;
    const std::string before = own_mountinfo();
    const Run inside = run_in({&spec, who}, {"/usr/bin/cat", "/proc/self/mountinfo"});
    INFO("stderr: ", inside.err);
    REQUIRE(inside.exit_code == 0);
    // Control: inside, the view's mounts are there to see.
    CHECK(contains(inside.out, " / / "));
    CHECK(contains(inside.out, " /tmp "));
    CHECK(contains(inside.out, " " + dir.path() + " "));
    CHECK(contains(inside.out, " /dev/null "));
    CHECK(contains(inside.out, " /proc "));
    CHECK(own_mountinfo() == before);
  }
}

TEST_CASE("view: a Landlock ruleset opened on host paths before the view still applies inside it") {
  for (Who who : {Who::kRoot, Who::kNobody}) {
    CAPTURE(name_of(who));
    TempDir dir;
    const std::string in = dir / "in", secret = dir / "secret";
    make_dir(in);
    make_dir(secret);
    write_file(in + "/file", "inside\n");
    write_file(secret + "/file", "outside\n");
    hand_over(dir, who);
    const Spec spec = view_with({readable(in), readable(secret)});
    LandlockLayer layer;
    layer.host_rules = {{"/usr", kReadExecute}, {"/etc", kRead}, {probe_dir(), kReadExecute}, {in, kRead}};
    // Rules name inodes: the bound trees are the same inodes, so the rule on
    // in/ grants, and nothing grants secret/.
    CHECK_PROBE(probe_in({&spec, who, &layer}, {"read", in + "/file"}), "OK");
    CHECK_PROBE(probe_in({&spec, who, &layer}, {"read", secret + "/file"}), "EACCES");
    // Control: the same view without the ruleset reads both.
    CHECK_PROBE(probe_in({&spec, who}, {"read", secret + "/file"}), "OK");

    SUBCASE("the view's own filesystems need rules opened in the view") {
      Spec with_tmp = spec;
      with_tmp.tmpfs = {{"/tmp", 1 << 20, false}};
      LandlockLayer host_only = layer;
      host_only.host_rules.push_back({"/tmp", kReadWrite});  // the host's /tmp: another inode
      CHECK_PROBE(probe_in({&with_tmp, who, &host_only}, {"write", "/tmp/scratch"}), "EACCES");
      LandlockLayer in_view = host_only;
      in_view.view_rules = {{"/tmp", kReadWrite}};
      CHECK_PROBE(probe_in({&with_tmp, who, &in_view}, {"write", "/tmp/scratch"}), "OK");
    }
  }
}

TEST_CASE("view: /dev holds the offered nodes only, and the view's root and /dev take no new files") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    Spec spec = view_with({});
    spec.tmpfs = {{"/tmp", 1 << 20, false}};
    for (const char* host_node : {"/dev/kmsg", "/dev/loop0", "/dev/console"}) {
      CAPTURE(host_node);
      CHECK_PROBE(probe_in({&spec, who}, {"stat", host_node}), "ENOENT");
      CHECK_PROBE(probe_in({nullptr, who}, {"stat", host_node}), "OK");  // control: the host has it
    }
    // The offered nodes work (a read-only bind still lets a device be written).
    CHECK_PROBE(probe_in({&spec, who}, {"write-text", "/dev/null", "x"}), "OK");
    CHECK_PROBE(probe_in({&spec, who}, {"read", "/dev/zero"}), "OK");
    CHECK_PROBE(probe_in({&spec, who}, {"write", "/dev/planted"}), "EROFS");
    CHECK_PROBE(probe_in({&spec, who}, {"write", "/planted"}), "EROFS");
    CHECK_PROBE(probe_in({&spec, who}, {"write", "/usr/planted"}), "EROFS");
    // Control: the same write where the view grants a writable tree.
    CHECK_PROBE(probe_in({&spec, who}, {"write", "/tmp/planted"}), "OK");
  }
}

TEST_CASE("view: /proc/sys and the other machine-wide /proc files are read-only") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    const Spec spec = view_with({});
    // Harmless were they let through: ns_last_pid belongs to the view's own
    // PID namespace, and dropping clean caches loses no data.
    CHECK_PROBE(probe_in({&spec, who}, {"write-text", "/proc/sys/kernel/ns_last_pid", "300"}), "EROFS");
    // (drop_caches is root's alone: uid 65534 meets its mode first.)
    CHECK_PROBE(probe_in({&spec, who}, {"write-text", "/proc/sys/vm/drop_caches", "1"}),
                who == Who::kNobody ? "EACCES" : "EROFS");
    // Control: the rest of /proc is the usual read-write proc.
    CHECK_PROBE(probe_in({&spec, who}, {"write-text", "/proc/self/comm", "renamed"}), "OK");
  }
}

TEST_CASE("view: /dev/pts is a new devpts instance, and /dev/ptmx leads to it") {
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    Spec spec = view_with({});
    spec.dev_pts = true;
    // The ptmx node of a new instance belongs to whoever mounted it, so an
    // unprivileged user in its own user namespace gets one too.
    CHECK_PROBE(probe_in({&spec, who}, {"open-write", "/dev/ptmx"}), "OK");
    CHECK_PROBE(probe_in({&spec, who}, {"stat", "/dev/pts/ptmx"}), "OK");
    // Control: without dev_pts there is no /dev/ptmx to open.
    const Spec without = view_with({});
    CHECK_PROBE(probe_in({&without, who}, {"open-write", "/dev/ptmx"}), "ENOENT");
  }
}

TEST_CASE("view: the command starts in the working directory given, inside the view") {
  TempDir dir;
  for (Who who : kEveryone) {
    CAPTURE(name_of(who));
    hand_over(dir, who);
    Spec spec = view_with({writable(dir.path())});
    spec.working_directory = dir.path();
    const Run inside = run_in({&spec, who}, {"/usr/bin/sh", "-c", "pwd"});
    INFO("stderr: ", inside.err);
    CHECK(inside.out == dir.path() + "\n");
    spec.working_directory.clear();  // control: "/" otherwise
    CHECK(run_in({&spec, who}, {"/usr/bin/sh", "-c", "pwd"}).out == "/\n");
  }
}

// What prepare() refuses, each against the same spec made acceptable.
TEST_CASE("view: prepare refuses a view it could not keep as asked") {
  Workspace w(Who::kRoot);
  const auto refusal = [](const Spec& spec) {
    auto prepared = mount_view::prepare(spec);
    return prepared ? std::string("accepted") : prepared.error().message;
  };
  const Spec good = view_with({writable(w.ws), protect(w.git + "/hooks"), protect(w.git + "/config")});
  REQUIRE(refusal(good) == "accepted");

  SUBCASE("a protected path that is missing: the command could create it") {
    CHECK(contains(refusal(view_with({writable(w.ws), protect(w.git + "/info")})), "cannot be protected"));
  }
  SUBCASE("a protected path that is a symlink: a mount pins the target, not the name") {
    CHECK(contains(refusal(view_with({writable(w.ws), protect(w.git + "/hooks-link")})), "is a symbolic link"));
  }
  SUBCASE("a protected path reached through a symlink") {
    REQUIRE(::symlink(".git", (w.ws + "/dotgit").c_str()) == 0);
    CHECK(contains(refusal(view_with({writable(w.ws), protect(w.ws + "/dotgit/config")})), "leads through a symbolic link"));
  }
  SUBCASE("a protected file with another hard link, through which it stays writable") {
    REQUIRE(::link((w.git + "/config").c_str(), (w.ws + "/config-alias").c_str()) == 0);
    CHECK(contains(refusal(good), "hard links"));
  }
  SUBCASE("a protected path outside every tree") {
    CHECK(contains(refusal(view_with({protect(w.git + "/config")})), "inside no tree"));
  }
  SUBCASE("a tree at /, two mounts at one place, a device not offered, a tmpfs without a limit") {
    CHECK(contains(refusal(view_with({readable("/")})), "would hide nothing"));
    CHECK(contains(refusal(view_with({readable(w.ws), {w.git, w.ws, 0}})), "something else of the view is there"));
    Spec device = good;
    device.dev_nodes.push_back("kmsg");
    CHECK(contains(refusal(device), "not one the view offers"));
    Spec unlimited = good;
    unlimited.tmpfs = {{"/tmp", 0, false}};
    CHECK(contains(refusal(unlimited), "no limit"));
  }
  SUBCASE("a symlink the build would have to create inside a host tree") {
    Spec linked = good;
    linked.symlinks.push_back({w.ws + "/planted", "/etc"});
    CHECK(contains(refusal(linked), "creating it would write there"));
  }
}

}  // namespace
}  // namespace aasm::ktest
