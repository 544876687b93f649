// Attacks beyond issue 10's list, under the two kinds of policy an
// adversarial review uses: a coding-agent one (reads the system, /proc and
// /dev, writes one tree, no network, the deny groups killed, tree limits)
// and a tight allowlist with an errno default. The command runs as uid 0
// with every capability dropped: what it may still do is what the kernel's
// owner checks (DAC) allow root and the sandbox does not take away. Each
// attack has its control: the same probe under a plan without Landlock
// (`open_plan`) or with the relevant opt-in reaches its target, so a probe
// that cannot succeed is caught.
//
// The attacks that still succeed are kept as doctest::skip() tests that
// assert the refusal a fix must bring; each names its residual and the
// mechanism that would close it (docs/threat-model.md).
//
// Safety: files, links, sockets and device nodes are made in the test's
// temp dirs; /proc/sys, /sys and device files are only opened for writing
// (open-write writes nothing); the cgroup a command joins is one this test
// makes beneath its own and removes; processes touched are sentinels the
// test started.
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "fixtures.h"
#include "harness.h"
#include "refused_calls.h"

using namespace aasm::ktest;

namespace {

// Lifts the refusal of unix sockets a confined filesystem brings by default,
// for the tests of what Landlock itself does with socket files.
const char* const kUnixSocketsAllowed = "    unix_sockets: {allow: [\"/\"]}\n";

// Reads the system, /proc, /dev and in/ (fixtures.h Trees); writes rw/; no network; the
// review's deny groups (killed: written as the denylist's answer); tree limits.
std::string agent_policy(const Trees& t, bool unix_sockets = false) {
  return "  filesystem:\n"
         "    read: {allow: " + flow_list({"/usr", "/etc", "/proc", "/dev", probe_dir(), t.in}) + "}\n"
         "    write: {allow: " + flow_list({t.rw}) + "}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n"
         "  network:\n    outbound: none\n"
         "  syscalls:\n    default: kill\n    deny: [\"@mount\", \"@privileged\", \"@debug\", \"@kernel\"]\n"
         "  resources:\n    pids: 64\n    memory: 256Mi\n    wall_clock: 20s\n" +
         (unix_sockets ? std::string("  ipc:\n") + kUnixSocketsAllowed : "");
}

// An allowlist of the everyday groups with EPERM for the rest; outbound
// and bind none, abstract sockets and signals scoped.
std::string tight_policy(const Trees& t, bool unix_sockets = false) {
  return "  filesystem:\n"
         "    read: {allow: " + flow_list({"/usr", "/etc", "/proc", probe_dir(), t.in}) + "}\n"
         "    write: {allow: " + flow_list({t.rw}) + "}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n"
         "  network:\n    outbound: none\n    bind: none\n"
         "  ipc:\n    abstract_unix_sockets: deny\n    signals: deny\n" +
         (unix_sockets ? kUnixSocketsAllowed : "") +
         "  syscalls:\n    default: \"errno:EPERM\"\n"
         "    allow: [\"@startup\", \"@file-read\", \"@file-write\", \"@process\", \"@signal\", \"@memory\","
         " \"@time\", \"@ipc\", \"@network\"]\n";
}

// The control: no Landlock domain at all (signals allowed, no filesystem
// node), a filter that denies only sysinfo (none of the calls tried here),
// and a cgroup.
// The control for the safe defaults every plan carries
// (docs/policy-language.md): `allow` rules opt into the calls they refuse.
std::string opted_in_spec() {
  std::string rules;
  for (const char* call : {"prlimit64", "ioctl", "fchmodat", "fchmodat2", "openat", "openat2"})
    rules += "    - {syscall: " + std::string(call) + ", action: allow}\n";
  return "  syscalls:\n    deny: [sysinfo]\n    rules:\n" + rules + "  ipc:\n    signals: allow\n";
}

std::string open_spec() {
  return "  syscalls:\n    deny: [sysinfo]\n  ipc:\n    signals: allow\n  resources:\n    pids: 64\n";
}

struct Plans {
  std::string agent, tight, open;
  explicit Plans(const Trees& t, bool unix_sockets = false)
      : agent(compile_spec(t.dir, "agent", agent_policy(t, unix_sockets))),
        tight(compile_spec(t.dir, "tight", tight_policy(t, unix_sockets))),
        open(compile_spec(t.dir, "open", open_spec())) {}
  // The two hostile-review plans, by name.
  std::vector<std::pair<std::string, std::string>> confined() const { return {{"agent", agent}, {"tight", tight}}; }
};

// SIGSYS from a denylist: the launcher reports 128 + 31.
constexpr int kKilled = 128 + SIGSYS;

bool is_block_device(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
}

}  // namespace

// ---------------------------------------------------------------- seccomp


TEST_CASE("attack more: the rest of moby's refused calls are killed by the deny groups and EPERM in an allowlist") {
  const Trees t;
  const Plans plans(t);
  for (const RefusedCall& call : kMobyRefused) {
    INFO("danger ", std::string(call.op));
    CHECK_RUN(probe(plans.agent, {"danger", call.op}), kKilled, "");
    CHECK_RUN(probe(plans.tight, {"danger", call.op}), 1, "EPERM\n");
  }

  SUBCASE("control: without those groups each call gets the kernel's own answer") {
    for (const RefusedCall& call : kMobyRefused) {
      INFO("danger ", std::string(call.op));
      CHECK_RUN(probe(plans.open, {"danger", call.op}), call.kernel_answer == std::string("OK\n") ? 0 : 1,
                call.kernel_answer);
    }
  }
}

// ---------------------------------------------------------------- filesystem

TEST_CASE("attack more: link, rename and RENAME_EXCHANGE do not carry a file across trees") {
  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    // A hard link would give the denied file the writable tree's rights.
    CHECK_RUN(probe(plan, {"link", t.secret + "/file", t.rw + "/stolen"}), 1, "EXDEV\n");
    CHECK_RUN(probe(plan, {"link", t.in + "/file", t.rw + "/ro-link"}), 1, "EXDEV\n");
    CHECK_RUN(probe(plan, {"rename", t.rw + "/file", t.in + "/planted"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"rename-exchange", t.rw + "/file", t.in + "/file"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"rename-exchange", t.rw + "/file", t.secret + "/file"}), 1, "EACCES\n");
  }
  CHECK(!exists(t.rw + "/stolen"));
  CHECK(read_file(t.in + "/file") == "inside\n");

  SUBCASE("control: inside the writable tree they work, and without Landlock across trees too") {
    write_file(t.rw + "/other", "other\n");
    CHECK_RUN(probe(plans.agent, {"rename-exchange", t.rw + "/file", t.rw + "/other"}), 0, "OK\n");
    CHECK_RUN(probe(plans.open, {"link", t.secret + "/file", t.rw + "/stolen"}), 0, "OK\n");
    CHECK_RUN(probe(plans.open, {"rename-exchange", t.rw + "/file", t.in + "/file"}), 0, "OK\n");
  }
}

TEST_CASE("attack more: an O_PATH descriptor does not read a denied file, through /proc/self/fd or openat") {
  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"opath", "proc", t.secret + "/file"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"opath", "at", t.secret, "file"}), 1, "EACCES\n");
  }

  SUBCASE("control: a readable file reads through O_PATH, and without Landlock the secret does") {
    CHECK_RUN(probe(plans.agent, {"opath", "proc", t.in + "/file"}), 0, "OK\n");
    CHECK_RUN(probe(plans.agent, {"opath", "at", t.in, "file"}), 0, "OK\n");
    CHECK_RUN(probe(plans.open, {"opath", "proc", t.secret + "/file"}), 0, "OK\n");
  }
}

TEST_CASE("attack more: a unix socket file is not made in a read-only tree; a device node nowhere") {
  const Trees t;
  const Plans plans(t, true);  // Landlock's MAKE_SOCK, not the default refusal of unix sockets
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"unix-bind", t.in + "/sock"}), 1, "EACCES\n");
    // CAP_MKNOD is gone: refused even where files may be made.
    CHECK_RUN(probe(plan, {"mknod-char", t.rw + "/null"}), 1, "EPERM\n");
  }
  CHECK(!exists(t.in + "/sock"));
  CHECK(!exists(t.rw + "/null"));

  SUBCASE("control: in the writable tree a socket file and a FIFO are made") {
    for (const auto& [name, plan] : plans.confined()) {
      CAPTURE(name);
      // network.bind `none` (the tight plan) refuses bind() for every family.
      CHECK_RUN(probe(plan, {"unix-bind", t.rw + "/sock-" + name}), name == "tight" ? 1 : 0,
                name == "tight" ? "EACCES\n" : "OK\n");
      CHECK_RUN(probe(plan, {"mkfifo", t.rw + "/fifo-" + name}), 0, "OK\n");
    }
    CHECK_RUN(probe(plans.open, {"unix-bind", t.in + "/sock"}), 0, "OK\n");
  }
}

// ---------------------------------------------------------------- /proc

TEST_CASE("attack more: /proc/<pid>/{root,cwd,exe,fd/0} of the supervisor, the janitor and another process are EACCES") {
  REQUIRE(::geteuid() == 0);
  const Trees t;
  const Plans plans(t);
  Sentinel capless(Sentinel::Caps::kNone);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    for (const char* file : {"root", "cwd", "exe", "fd/0"}) {
      INFO("file ", std::string(file));
      CHECK_RUN(probe(plan, {"readlink-proc", "parent", file}), 1, "EACCES\n");
      CHECK_RUN(probe(plan, {"readlink-proc", "janitor", file}), 1, "EACCES\n");
      CHECK_RUN(probe(plan, {"readlink-proc", capless.id(), file}), 1, "EACCES\n");
    }
    CHECK_RUN(probe(plan, {"read-proc", "janitor", "mem"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"read-proc", "janitor", "environ"}), 1, "EACCES\n");
  }

  SUBCASE("control: without Landlock a capless process's links resolve (the probe's own always do)") {
    for (const char* file : {"root", "cwd", "exe", "fd/0"}) {
      INFO("file ", std::string(file));
      CHECK_RUN(probe(plans.open, {"readlink-proc", capless.id(), file}), 0, "OK\n");
      CHECK_RUN(probe(plans.agent, {"readlink-proc", "self", file}), 0, "OK\n");
    }
  }
}

TEST_CASE("attack more: a command cannot make itself the OOM killer's last choice") {
  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    // /proc is readable only: Landlock refuses the open, whatever the value.
    CHECK_RUN(probe(plan, {"write-text", "/proc/self/oom_score_adj", "-1000"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"write-text", "/proc/self/oom_score_adj", "1000"}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"write-text", "/proc/self/attr/current", "unconfined"}), 1, "EACCES\n");
  }

  SUBCASE("control: without Landlock raising works, lowering is still EACCES (no CAP_SYS_RESOURCE)") {
    CHECK_RUN(probe(plans.open, {"write-text", "/proc/self/oom_score_adj", "1000"}), 0, "OK\n");
    CHECK_RUN(probe(plans.open, {"write-text", "/proc/self/oom_score_adj", "-1000"}), 1, "EACCES\n");
  }
}

// ---------------------------------------------------------------- root's DAC power

TEST_CASE("attack more: /proc/sys, /sys and a block device are not writable by the capless root command") {
  REQUIRE(::geteuid() == 0);
  const Trees t;
  const Plans plans(t);
  // A block device node of the test's own (loop0's numbers) in the
  // readable tree: what /dev/sda is under a policy that reads /dev.
  const std::string block = t.in + "/blk";
  REQUIRE(::mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0);
  std::vector<std::string> targets = {"/proc/sys/kernel/hostname", "/proc/sys/vm/drop_caches", block};
  for (const char* path : {"/proc/sysrq-trigger", "/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/cgroup.procs",
                           "/sys/kernel/uevent_helper"})
    if (exists(path)) targets.push_back(path);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    for (const std::string& path : targets) {
      CAPTURE(path);
      CHECK_RUN(probe(plan, {"open-write", path}), 1, "EACCES\n");
    }
  }

  SUBCASE("control: without Landlock, DAC lets the capless root open each one for writing") {
    for (const std::string& path : targets) {
      CAPTURE(path);
      CHECK_RUN(probe(plans.open, {"open-write", path}), 0, "OK\n");
    }
  }
}

// The run's cgroup holds the command's tree: a command that moved itself
// out would escape the task ceiling and the end-of-run kill. v1 and v2
// cgroup.procs files are root's 0644, so DAC lets the capless root write
// them; only the filesystem rules stop it.
TEST_CASE("attack more: the command cannot move itself out of the run's cgroup") {
  REQUIRE(::geteuid() == 0);
  std::string hierarchy;
  for (const char* candidate : {"/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"})
    if (exists(std::string(candidate) + "/cgroup.procs")) {
      hierarchy = candidate;
      break;
    }
  REQUIRE_MESSAGE(!hierarchy.empty(), "no cgroup hierarchy with a cgroup.procs");
  // Beneath the test's own cgroup in that hierarchy.
  std::string own;
  {
    std::ifstream self("/proc/self/cgroup");
    for (std::string line; std::getline(self, line);) {
      const bool v2 = line.rfind("0::", 0) == 0;
      const bool pids = line.find(":pids:") != std::string::npos;
      if ((hierarchy.ends_with("/pids") && pids) || (!hierarchy.ends_with("/pids") && v2))
        own = line.substr(line.rfind(':') + 1);
    }
  }
  const std::string target =
      hierarchy + (own == "/" ? "" : own) + "/aasm-attack-" + std::to_string(::getpid());
  REQUIRE_MESSAGE(::mkdir(target.c_str(), 0755) == 0, "mkdir ", target, ": ", std::strerror(errno));
  struct Cleanup {
    std::string path;
    ~Cleanup() { ::rmdir(path.c_str()); }
  } cleanup{target};

  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"write-text", target + "/cgroup.procs", "self"}), 1, "EACCES\n");
  }
  CHECK(read_file(target + "/cgroup.procs").empty());

  SUBCASE("control: a plan that does not confine the filesystem lets the command leave its cgroup") {
    CHECK_RUN(probe(plans.open, {"write-text", target + "/cgroup.procs", "self"}), 0, "OK\n");
  }
}

// ---------------------------------------------------------------- signals

TEST_CASE("attack more: a SIGIO aimed at a process outside (F_SETOWN, F_SETSIG) is not delivered") {
  const Trees t;
  const Plans plans(t);
  Sentinel target;
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    // The kernel takes every step; Landlock's signal scope drops the signal.
    CHECK_RUN(probe(plan, {"sigio", target.id(), std::to_string(SIGKILL)}), 0, "OK\n");
    CHECK(target.alive());
  }

  SUBCASE("control: with ipc.signals: allow the SIGIO kills the sentinel") {
    CHECK_RUN(probe(plans.open, {"sigio", target.id(), std::to_string(SIGKILL)}), 0, "OK\n");
    CHECK(!target.alive());
  }
}

// ---------------------------------------------------------------- residuals

// RESIDUAL: Landlock does not mediate metadata (chmod, chown, utimensat,
// setxattr), and the capless command is still uid 0, the owner of every
// root-owned file on the host: it can chmod 4755 a root-owned binary or
// 0644 /etc/shadow from a policy that grants no write at all. Closing
// mechanism: run the command under an unprivileged uid (a user namespace
// whose uid 0 maps to an unprivileged host uid, or setuid to a dedicated
// one), or a mount namespace that remounts everything outside the writable
// trees read-only (EROFS). The worst case, a set-user-ID root program, is
// closed by the safe default @setid-modes (the next tests).
TEST_CASE("attack more: chmod, utimensat and setxattr of a root-owned file outside every tree" * doctest::skip()) {
  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    for (const char* what : {"chmod", "utime", "setxattr"}) {
      INFO("meta ", std::string(what));
      CHECK_RUN(probe(plan, {"meta", what, t.secret + "/file"}), 1, "EPERM\n");
    }
  }

  SUBCASE("control: without Landlock the same changes are made") {
    for (const char* what : {"chmod", "utime", "setxattr"})
      CHECK_RUN(probe(plans.open, {"meta", what, t.secret + "/file"}), 0, "OK\n");
  }
}

// RESIDUAL: ioctl on regular files is not mediated (Landlock's IOCTL_DEV
// covers devices only) and FS_IOC_SETFLAGS asks for ownership, not a
// writable descriptor: a read-only open of a root-owned file lets the
// capless root set its attribute flags. Closing mechanism: the same
// unprivileged uid, or a seccomp rule on ioctl request == FS_IOC_SETFLAGS /
// FS_IOC_FSSETXATTR.
TEST_CASE("attack more: FS_IOC_SETFLAGS through a read-only descriptor in a read-only tree") {
  const Trees t;
  const Plans plans(t);
  for (const auto& [name, plan] : plans.confined()) {
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"meta", "setflags", t.in + "/file"}), 1, "EPERM\n");
  }
  // The safe default @inode-flags refuses it in every plan.
  CHECK_RUN(probe(plans.open, {"meta", "setflags", t.in + "/file"}), 1, "EPERM\n");

  SUBCASE("control: with an allow rule for ioctl, the flag is set") {
    CHECK_RUN(probe(compile_spec(t.dir, "opted-in", opted_in_spec()), {"meta", "setflags", t.in + "/file"}), 0, "OK\n");
  }
}

// Closed for the worst case: the set-user-ID and set-group-ID bits (the
// safe default @setid-modes), through chmod and fchmodat2 (Linux 6.6, which
// the table once missed), on a new file, and through
// openat2 (ENOSYS, @hidden-modes), in every plan.
TEST_CASE("attack more: a set-user-ID root file cannot be planted, by chmod, fchmodat2, by creation or through openat2") {
  const Trees t;
  const Plans plans(t);
  const std::vector<std::pair<std::string, std::string>> every = {
      {"agent", plans.agent}, {"tight", plans.tight}, {"open", plans.open}};
  for (const auto& [name, plan] : every) {
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"meta", "chmod-setuid", t.rw + "/file"}), 1, "EPERM\n");
    CHECK_RUN(probe(plan, {"meta", "chmod2-setuid", t.rw + "/file"}), 1, "EPERM\n");
    CHECK_RUN(probe(plan, {"meta", "create-setuid", t.rw + "/new-" + name}), 1, "EPERM\n");
    CHECK_RUN(probe(plan, {"meta", "openat2-create", t.rw + "/openat2-" + name}), 1, "ENOSYS\n");
    CHECK_FALSE(exists(t.rw + "/new-" + name));
  }
  struct stat st {};
  REQUIRE(::stat((t.rw + "/file").c_str(), &st) == 0);
  CHECK((st.st_mode & (S_ISUID | S_ISGID)) == 0);

  SUBCASE("control: with allow rules for them, the bit is set and openat2 creates") {
    const std::string opted_in = compile_spec(t.dir, "opted-in", opted_in_spec());
    CHECK_RUN(probe(opted_in, {"meta", "chmod-setuid", t.rw + "/file"}), 0, "OK\n");
    CHECK_RUN(probe(opted_in, {"meta", "chmod2-setuid", t.rw + "/file"}), 0, "OK\n");
    CHECK_RUN(probe(opted_in, {"meta", "create-setuid", t.rw + "/new"}), 0, "OK\n");
    CHECK_RUN(probe(opted_in, {"meta", "openat2-create", t.rw + "/openat2"}), 0, "OK\n");
    REQUIRE(::stat((t.rw + "/new").c_str(), &st) == 0);
    CHECK((st.st_mode & S_ISUID) != 0);
  }
}

// RESIDUAL: prlimit64 on another process checks only that the uids and
// gids match (no capability, no LSM hook Landlock implements), and
// prlimit64 is in @startup. The capless root command can set the rlimits of
// every root process on the host, its supervisor and its janitor included:
// RLIMIT_NOFILE 0 on both, then a setsid daemon, leaves the daemon running
// in a cgroup the supervisor can no longer empty or remove, and no receipt.
// Closing mechanism: a seccomp rule every plan carries, prlimit64 only with
// pid == 0 (what libc's getrlimit/setrlimit pass), or a PID namespace.
TEST_CASE("attack more: prlimit64 on a process outside the sandbox") {
  const Trees t;
  const Plans plans(t);
  Sentinel target;
  const std::vector<std::pair<std::string, std::string>> every = {
      {"agent", plans.agent}, {"tight", plans.tight}, {"open", plans.open}};
  for (const auto& [name, plan] : every) {  // the safe default @foreign-limits, in every plan
    CAPTURE(name);
    CHECK_RUN(probe(plan, {"prlimit", target.id(), "5"}), 1, "EPERM\n");
    CHECK_RUN(probe(plan, {"prlimit", "parent", "1024"}), 1, "EPERM\n");
  }
  CHECK(read_file("/proc/" + target.id() + "/limits").find("Max open files            5 ") == std::string::npos);

  SUBCASE("control: with an allow rule for prlimit64, the sentinel's limit is set") {
    CHECK_RUN(probe(compile_spec(t.dir, "opted-in", opted_in_spec()), {"prlimit", target.id(), "5"}), 0, "OK\n");
    CHECK(read_file("/proc/" + target.id() + "/limits").find("Max open files            5 ") != std::string::npos);
  }
}

// RESIDUAL: a policy that reads /dev lets the capless root open every
// root-owned block device (0600 or 0660) and read the raw disk, every file
// the path rules deny included. Closing mechanism: a device allowlist
// (cgroup v1 devices controller or a v2 BPF_CGROUP_DEVICE program: null,
// zero, full, random, urandom, tty, ptmx, pts), an unprivileged uid, or a
// mount namespace with a minimal /dev.
TEST_CASE("attack more: a block device node in a readable tree is opened for reading" * doctest::skip()) {
  REQUIRE(::geteuid() == 0);
  const Trees t;
  const Plans plans(t);
  const std::string block = t.in + "/blk";
  REQUIRE(::mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0);
  REQUIRE(is_block_device(block));
  CHECK_RUN(probe(plans.agent, {"read", block}), 1, "EACCES\n");
  CHECK_RUN(probe(plans.tight, {"read", block}), 1, "EACCES\n");
}
