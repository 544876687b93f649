// A host without Landlock, simulated: aasm-fault (tests/probe/fault.c)
// installs a seccomp filter answering landlock_create_ruleset with ENOSYS
// (Landlock not built in) or EOPNOTSUPP (built in, disabled at boot), then
// execs aasm-launch. A plan that needs Landlock must be refused
// before anything runs: exit 125, one line naming Landlock and the remedy,
// and the command, which would create a marker file, never started.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "harness.h"

using namespace aasm::ktest;

namespace {

constexpr uid_t kNobodyUid = 65534;

// aasm-fault landlock_create_ruleset=ERRNO aasm-launch PLAN -- aasm-probe ARGS...
Run launch_without_landlock(const std::string& error, const std::string& plan, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {fault_tool(), "landlock_create_ruleset=" + error, binary("AASM_LAUNCH"), plan, "--",
                                   binary("AASM_PROBE")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}


// Filesystem rules that let the probe run and write the marker.
std::string filesystem(const TempDir& dir) {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\"]}\n"
         "    write: {allow: [\"" + dir.path() + "\"]}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n";
}

// The refusal: exit 125, nothing on stdout, exactly one line on stderr
// that names Landlock, the kernel's answer and the remedy (a kernel built
// with Landlock and `landlock` in the lsm= boot list).
void check_refused(const Run& r, const std::string& strerror_text) {
  INFO("stderr: ", r.err);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 125);
  CHECK(r.out.empty());
  REQUIRE(!r.err.empty());
  CHECK(r.err.back() == '\n');
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("aasm-launch: error: ", 0) == 0);
  CHECK(lower(r.err).find("landlock") != std::string::npos);
  CHECK(r.err.find(strerror_text) != std::string::npos);
  CHECK(r.err.find("lsm=") != std::string::npos);
}

struct Injection {
  const char* error;
  const char* strerror_text;
};

constexpr Injection kInjections[] = {
    {"ENOSYS", "Function not implemented"},
    {"EOPNOTSUPP", "Operation not supported"},
};

}  // namespace

TEST_CASE("fault injection: without Landlock (ENOSYS, EOPNOTSUPP) a Landlock plan is refused, the command never runs") {
  TempDir dir;
  const std::string marker = dir / "marker";
  const std::string fs_plan = compile_spec(dir, "fs", filesystem(dir));
  // A plan whose only Landlock part is a network port and a scope.
  const std::string net_plan = compile_spec(dir, "net",
                                            "  network:\n    outbound: {allow: [\"tcp:1\"]}\n"
                                            "  ipc:\n    signals: deny\n");

  for (const Injection& injection : kInjections) {
    const std::string error = injection.error;
    CAPTURE(error);
    check_refused(launch_without_landlock(error, fs_plan, {"write", marker}), injection.strerror_text);
    CHECK_FALSE(exists(marker));
    check_refused(launch_without_landlock(error, net_plan, {"write", marker}), injection.strerror_text);
    CHECK_FALSE(exists(marker));
  }

  SUBCASE("control: without the injection the same plans run the command, which creates the marker") {
    CHECK_RUN(probe(fs_plan, {"write", marker}), 0, "OK\n");
    CHECK(read_file(marker) == "x");
    REQUIRE(::unlink(marker.c_str()) == 0);
    CHECK_RUN(probe(net_plan, {"write", marker}), 0, "OK\n");
    CHECK(read_file(marker) == "x");
  }
  SUBCASE("control: with the injection a seccomp-only plan runs the command (the wrapper breaks nothing else)") {
    const std::string seccomp_plan = compile_spec(dir, "seccomp", "  syscalls:\n    deny: [\"@mount\"]\n");
    for (const Injection& injection : kInjections) {
      const std::string error = injection.error;
      CAPTURE(error);
      CHECK_RUN(launch_without_landlock(error, seccomp_plan, {"write", marker}), 0, "OK\n");
      CHECK(read_file(marker) == "x");
      REQUIRE(::unlink(marker.c_str()) == 0);
    }
  }
}

// A host where no cgroup can be created, simulated: mkdir and mkdirat fail
// with EACCES. A plan with tree limits is refused, unless it lets `resource`
// degrade: then the command runs with per-process stand-ins (RLIMIT_AS for
// the memory ceiling), and the receipt calls the control partial.
TEST_CASE("fault injection: without a cgroup, tree limits are refused, or stood in for by rlimits where resource may degrade") {
  TempDir dir;
  const std::string limits = "  resources:\n    memory: 64Mi\n";
  const std::vector<std::string> no_cgroup = {fault_tool(), "mkdir=EACCES,mkdirat=EACCES", binary("AASM_LAUNCH")};
  const auto launch_with = [&](const std::vector<std::string>& prefix, const std::vector<std::string>& launcher_args,
                               const std::vector<std::string>& probe_args) {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
    argv.push_back("--");
    argv.push_back(binary("AASM_PROBE"));
    argv.insert(argv.end(), probe_args.begin(), probe_args.end());
    return run(argv);
  };

  const std::string required = compile_spec(dir, "required", filesystem(dir) + limits);
  const Run refused = launch_with(no_cgroup, {required}, {"map-mib", "128"});
  INFO("stderr: ", refused.err);
  CHECK(refused.exit_code == 125);
  CHECK(refused.out.empty());
  CHECK(refused.err.rfind("aasm-launch: error: resource: ", 0) == 0);
  CHECK(refused.err.find("isolation.degraded") != std::string::npos);

  const std::string degradable =
      compile_spec(dir, "degradable", filesystem(dir) + limits + "  isolation:\n    degraded: [resource]\n");
  const std::string receipt = dir / "receipt.json";
  const Run stood_in = launch_with(no_cgroup, {"--receipt", receipt, degradable}, {"map-mib", "128"});
  INFO("stderr: ", stood_in.err);
  CHECK_RUN(stood_in, 1, "ENOMEM\n");  // 128 MiB of address space over a 64 MiB RLIMIT_AS
  CHECK(stood_in.err.find("per-process rlimits instead") != std::string::npos);
  const std::string text = read_file(receipt);
  CHECK(text.find("\"achieved\":\"partial\"") != std::string::npos);
  CHECK(text.find("RLIMIT_AS=67108864") != std::string::npos);

  SUBCASE("control: with the run's cgroup the same mapping succeeds (a memory cgroup counts touched pages)") {
    CHECK_RUN(launch_with({binary("AASM_LAUNCH")}, {degradable}, {"map-mib", "128"}), 0, "OK\n");
  }
}

// A kernel older than Linux 5.12 (no mount_setattr), simulated: the view is
// refused naming what the host lacks, or, where the policy lets
// filesystem_view degrade, the command runs without it, and says so. The
// file domains do not stand for the view: listing them leaves it required.
TEST_CASE("fault injection: without mount_setattr the filesystem view is refused, or left out where the filesystem may degrade") {
  TempDir dir("/var/tmp");
  const std::string ws = dir / "ws";
  make_dir(ws);
  auto plan_with = [&](const std::string& name, const std::string& isolation) {
    write_file(dir / (name + ".yaml"), "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: view, tier: run}\nspec:\n"
                                       "  syscalls: {deny: [\"@mount\"]}\n  isolation: " + isolation + "\n"
                                       "  filesystem:\n    read: {allow: [\"/usr\", \"${CWD}\"]}\n"
                                       "    write: {allow: [\"${CWD}\"]}\n    execute: {allow: [\"/usr\"]}\n");
    const std::string plan = dir / (name + ".bin");
    const Run r = run({binary("AASMC"), "compile", dir / (name + ".yaml"), "-o", plan});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return plan;
  };
  // stat(2) is not Landlock's to refuse: /etc exists for the command unless the view hides it.
  const std::vector<std::string> probe = {"--", "/usr/bin/sh", "-c", "test -e /etc/hostname && echo host-visible; true"};
  auto launch = [&](const std::string& plan, bool fault) {
    std::vector<std::string> argv = {binary("AASM_LAUNCH"), plan};
    if (fault) argv.insert(argv.begin(), {fault_tool(), "mount_setattr=ENOSYS"});
    argv.insert(argv.end(), probe.begin(), probe.end());
    return run(argv, ws);
  };

  const std::string strict = plan_with("strict", "{filesystem_view: true}");
  const Run refused = launch(strict, true);
  INFO(refused.err);
  CHECK(refused.exit_code == 125);
  CHECK(refused.out.empty());
  CHECK(contains(refused.err, "filesystem_view: "));
  CHECK(contains(refused.err, "mount_setattr"));

  const Run file_domains = launch(plan_with("file-domains", "{filesystem_view: true, degraded: [file_read, file_write, file_execute]}"), true);
  CHECK(file_domains.exit_code == 125);
  CHECK(contains(file_domains.err, "filesystem_view: "));

  const std::string degradable = plan_with("degradable", "{filesystem_view: true, degraded: [filesystem_view]}");
  const Run degraded = launch(degradable, true);
  INFO(degraded.err);
  CHECK(degraded.exit_code == 0);
  CHECK(degraded.out == "host-visible\n");
  CHECK(contains(degraded.err, "mount_setattr"));

  SUBCASE("control: without the fault both plans build the view, and /etc does not exist for the command") {
    CHECK_RUN(launch(strict, false), 0, "");
    CHECK_RUN(launch(degradable, false), 0, "");
  }
}

// A host without audit (socket(AF_NETLINK, ..., NETLINK_AUDIT) answered
// EPROTONOSUPPORT, as a kernel built without CONFIG_AUDIT answers): a run
// whose command failed says that its Landlock denials cannot be seen here,
// why, and the two ways to see them (supervisor/landlock_audit.h).
TEST_CASE("fault injection: without audit, a failed run says its Landlock denials are unseen and how to see them") {
  TempDir dir, outside;
  write_file(outside / "file", "outside\n");
  const std::string plan = compile_spec(dir, "fs", filesystem(dir));
  const std::string sentence =
      "aasm-launch: denials: not seen on this host: Landlock denials: this host does not deliver Landlock audit records (no audit socket: "
      "Protocol not supported, the kernel is built without CONFIG_AUDIT); run with --explain to trace them, or have "
      "the host's administrator enable auditing (auditctl -e 1)\n";
  const auto without_audit = [&](std::vector<std::string> options, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {fault_tool(), "socket=EPROTONOSUPPORT", binary("AASM_LAUNCH")};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {plan, "--", binary("AASM_PROBE")});
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  };
  const Run refused = without_audit({"--denials=full"}, {"read", outside / "file"});
  CHECK_RUN(refused, 1, "EACCES\n");
  CHECK(contains(refused.err, sentence));
  // The summary points to the two ways in one line.
  const Run summary = without_audit({}, {"read", outside / "file"});
  CHECK(contains(summary.err, "aasm-launch: denials: none recorded, and this host cannot show every kind: run with "
                              "--explain"));

  SUBCASE("control: with --explain the denial is traced and nothing is unseen") {
    const Run traced = without_audit({"--explain"}, {"read", outside / "file"});
    CHECK_RUN(traced, 1, "EACCES\n");
    CHECK_FALSE(contains(traced.err, "Landlock denials: this host does not deliver"));
    CHECK(contains(traced.err, "  read_file " + outside / "file" + " -> EACCES  x1\n"));
  }
  SUBCASE("control: a run that succeeds has nothing to explain") {
    const Run fine = without_audit({"--denials=full"}, {"write", dir / "marker"});
    CHECK_RUN(fine, 0, "OK\n");
    CHECK_FALSE(contains(fine.err, "Landlock denials"));
  }
}

// A host that refuses an unprivileged user namespace, simulated: clone and
// unshare with CLONE_NEWUSER fail with EPERM (Debian's
// kernel.unprivileged_userns_clone = 0, a container's seccomp profile) or
// ENOSPC (user.max_user_namespaces = 0). The shipped coding-agent, launched
// as uid 65534, needs one for its view: the launch is refused before the
// command runs, naming the control, what the host lacks and the remedy. A
// tier that lets filesystem_view degrade runs it with Landlock alone, the
// protected paths named NOT protected (and writable: they are not), but no
// further: without Landlock too it is still refused.
TEST_CASE("fault injection: without user namespaces coding-agent is refused for uid 65534, or runs with Landlock alone where filesystem_view may degrade") {
  TempDir dir("/var/tmp");
  ::chmod(dir.path().c_str(), 0755);
  const std::string ws = dir / "ws";
  make_dir(ws);
  make_dir(ws + "/.git");
  make_dir(ws + "/.git/hooks");
  write_file(ws + "/.git/config", "[core]\n");
  write_file(dir / "degrade.yaml", "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: degrade, tier: run}\n"
                                   "spec:\n  isolation: {degraded: [filesystem_view]}\n");
  const std::string profile = binary("AASM_PROFILES") + "/coding-agent.yaml";
  const auto compiled = [&](const std::string& name, std::vector<std::string> files) {
    const std::string plan = dir / (name + ".bin");
    files.insert(files.begin(), {binary("AASMC"), "compile"});
    for (const std::string& a : {std::string("-o"), plan}) files.push_back(a);
    const Run r = run(files);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    ::chmod(plan.c_str(), 0644);
    return plan;
  };
  const std::string strict = compiled("strict", {profile});
  const std::string degradable = compiled("degradable", {profile, dir / "degrade.yaml"});
  REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", ws}).exit_code == 0);
  const std::string marker = ws + "/marker";
  // The command leaves the marker, then tries the protected config.
  // A launch (or, with --dry-run, its report) as `uid` under `faults`.
  const auto launch = [&](uid_t uid, const std::string& faults, const std::vector<std::string>& launcher_args) {
    // The receipt's key (docs/receipts.md#redaction) where uid 65534 may make it.
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
                                     "XDG_STATE_HOME=" + ws + "/.state"};
    run_as(uid, argv);
    if (!faults.empty()) argv.insert(argv.end(), {fault_tool(), faults});
    argv.push_back(binary("AASM_LAUNCH"));
    argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
    if (launcher_args.front() != "--dry-run")
      for (const char* a : {"--", "/bin/sh", "-c", "echo ran > marker; echo '[alias]' >> .git/config"}) argv.push_back(a);
    return run(argv, ws);
  };
  const auto names_the_remedy = [](const std::string& text) {
    CHECK(contains(text, "filesystem_view: without root (CAP_SYS_ADMIN) the view needs a user namespace"));
    for (const char* remedy : {"user.max_user_namespaces", "kernel.unprivileged_userns_clone",
                               "kernel.apparmor_restrict_unprivileged_userns", "launch as root",
                               "list filesystem_view in isolation.degraded"})
      CHECK(contains(text, remedy));
  };

  for (const char* fault : {"clone_newuser=EPERM", "clone_newuser=ENOSPC"}) {
    CAPTURE(fault);
    const Run refused = launch(kNobodyUid, fault, {strict});
    INFO(refused.err);
    CHECK(refused.exit_code == 125);
    CHECK(refused.out.empty());
    CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
    CHECK(refused.err.rfind("aasm-launch: error: filesystem_view: ", 0) == 0);
    CHECK(contains(refused.err, std::string(fault).ends_with("EPERM") ? "Operation not permitted" : "No space left on device"));
    names_the_remedy(refused.err);
    CHECK_FALSE(exists(marker));
    const Run dry = launch(kNobodyUid, fault, {"--dry-run", strict});
    CHECK(dry.exit_code == 125);
    CHECK(contains(dry.out, "verdict: the launch would be refused: filesystem_view: "));
    CHECK_FALSE(exists(marker));
  }

  const std::string receipt = ws + "/receipt.json";
  const Run degraded = launch(kNobodyUid, "clone_newuser=EPERM", {"--receipt", receipt, degradable});
  INFO(degraded.err);
  CHECK(degraded.exit_code == 0);  // the config was written: it is not protected
  CHECK(read_file(marker) == "ran\n");
  CHECK(read_file(ws + "/.git/config") == "[core]\n[alias]\n");
  CHECK(contains(degraded.err, "aasm-launch: note: filesystem_view is not enforced here: "));
  CHECK(contains(degraded.err, "NOT protected (writable wherever their tree is): ${CWD}/.git/commondir, ${CWD}/.git/config, ${CWD}/.git/config.worktree, ${CWD}/.git/hooks"));
  const std::string text = read_file(receipt);
  // Canonical JSON (docs/receipts.md#the-seal): a mount's members sorted by name.
  CHECK(contains(text, "\"path\":\"${CWD}/.git/config\",\"status\":\"NOT protected (the view degraded)\",\"what\":\"bind, protected"));
  CHECK(contains(text, "\"achieved\":\"not enforced\""));
  REQUIRE(::unlink(marker.c_str()) == 0);
  write_file(ws + "/.git/config", "[core]\n");
  REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", ws}).exit_code == 0);

  SUBCASE("degrading the view widens nothing else: without Landlock as well, the same plan is refused") {
    const Run r = launch(kNobodyUid, "clone_newuser=EPERM,landlock_create_ruleset=ENOSYS", {degradable});
    INFO(r.err);
    CHECK(r.exit_code == 125);
    CHECK(lower(r.err).find("landlock") != std::string::npos);
    CHECK_FALSE(exists(marker));
  }
  SUBCASE("control: without the fault uid 65534 gets the view, which keeps the config as it was") {
    for (const std::string& plan : {strict, degradable}) {
      CAPTURE(plan);
      const Run r = launch(kNobodyUid, "", {plan});
      INFO(r.err);
      CHECK(r.exit_code == 2);  // sh: the config is read-only
      CHECK(read_file(marker) == "ran\n");
      CHECK(read_file(ws + "/.git/config") == "[core]\n");
      REQUIRE(::unlink(marker.c_str()) == 0);
    }
  }
  SUBCASE("control: root needs no user namespace, so the fault leaves its view alone") {
    REQUIRE(run({"/usr/bin/chown", "-R", "0:0", ws}).exit_code == 0);  // the command keeps no capability
    const Run r = launch(0, "clone_newuser=EPERM", {strict});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(read_file(marker) == "ran\n");
    CHECK(read_file(ws + "/.git/config") == "[core]\n");
  }
}
