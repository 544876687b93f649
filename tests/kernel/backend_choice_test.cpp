// The backend chosen at launch (docs/backends.md, "Several lowerings, one
// plan"): one plan compiled with `aasmc compile --backend auto`, carrying
// native and bwrap, run by the real aasm-launch on hosts made to lack
// things with aasm-fault (tests/probe/fault.c): no Landlock, no user
// namespace, no cgroup. Each choice is checked by what the probe meets
// (Landlock's EACCES natively, bwrap's EROFS and ENOENT), by the receipt,
// the dry run and doctor --plan, and every refusal names each backend and
// the host fact behind it.
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "harness.h"

using namespace aasm::ktest;

namespace {

// The probe reads /usr, /etc and its own directory, writes DIR/out; the
// file controls and the signal scope may degrade, so bwrap can carry it.
std::string choice_policy(const TempDir& dir, const std::string& extra = "") {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\", \"" + dir.path() + "\"]}\n"
         "    write: {allow: [\"" + dir.path() + "/out\"]}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n"
         "  syscalls:\n"
         "    deny: [getppid]\n" + extra +
         "  isolation:\n"
         "    degraded: [file_read, file_write, file_execute, ipc]\n";
}

// DIR/NAME.yaml compiled with --backend auto into DIR/NAME.bin.
std::string compile_auto(const TempDir& dir, const std::string& name, const std::string& spec) {
  write_file(dir / (name + ".yaml"),
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: " + name + ", tier: agent}\nspec:\n" + spec);
  const Run r = run({binary("AASMC"), "compile", dir / (name + ".yaml"), "-o", dir / (name + ".bin"), "--backend", "auto"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir / (name + ".bin");
}

// [aasm-fault FAULTS] aasm-launch [OPTIONS] PLAN -- aasm-probe ARGS...
Run launch_with(const std::string& faults, const std::vector<std::string>& options, const std::string& plan,
                const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  if (!faults.empty()) argv = {fault_tool(), faults};
  argv.push_back(binary("AASM_LAUNCH"));
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {plan, "--", binary("AASM_PROBE")});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

nlohmann::json receipt_of(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

std::string why_of(const nlohmann::json& backends, const std::string& name) {
  for (const auto& b : backends)
    if (b["backend"] == name) return b["why"];
  return "(not listed)";
}

}  // namespace

TEST_CASE("backend choice: natively where the host has everything, under bwrap where it lacks Landlock, the receipt naming both") {
  if (!have_bwrap()) return;
  TempDir dir;
  make_dir(dir / "out");
  write_file(dir / "in", "x");
  const std::string plan = compile_auto(dir, "auto", choice_policy(dir));

  SUBCASE("this host: native, Landlock refusing a write outside out/ with EACCES; bwrap not tried") {
    const std::string receipt = dir / "native.json";
    CHECK_RUN(launch_with("", {"--receipt", receipt}, plan, {"write", dir / "new"}), 1, "EACCES\n");
    const auto r = receipt_of(receipt);
    CHECK(r["backend"] == "native");
    REQUIRE(r["backends"].size() == 2);
    CHECK(r["backends"][0] == nlohmann::json{{"backend", "native"}, {"taken", true}, {"why", ""}});
    CHECK(why_of(r["backends"], "bwrap") == "not tried: native runs every control as planned");
    CHECK_RUN(launch_with("", {}, plan, {"write", dir / "out/new"}), 0, "OK\n");  // control: out/ is writable
  }
  SUBCASE("no Landlock: bwrap, whose read-only bind refuses the same write with EROFS and hides /root") {
    const std::string receipt = dir / "bwrap.json";
    CHECK_RUN(launch_with("landlock_create_ruleset=ENOSYS", {"--receipt", receipt}, plan, {"write", dir / "new"}), 1,
              "EROFS\n");
    CHECK_RUN(launch_with("landlock_create_ruleset=ENOSYS", {}, plan, {"read", "/root/.profile"}), 1, "ENOENT\n");
    CHECK_RUN(launch_with("landlock_create_ruleset=ENOSYS", {}, plan, {"write", dir / "out/new"}), 0, "OK\n");
    const auto r = receipt_of(receipt);
    CHECK(r["backend"] == "bwrap");
    CHECK(why_of(r["backends"], "native") ==
          "runs weaker here than bwrap: file_read not enforced, file_write not enforced, file_execute not enforced");
    // Control: the same fault, forced natively, leaves the write unrefused.
    CHECK_RUN(launch_with("landlock_create_ruleset=ENOSYS", {"--backend", "native"}, plan, {"write", dir / "new2"}), 0,
              "OK\n");
    CHECK(read_file(dir / "new2") == "x");
  }
  SUBCASE("no Landlock and no user namespace: native, degraded as the policy allows; bwrap refused, named with why") {
    const std::string receipt = dir / "degraded.json";
    CHECK_RUN(launch_with("landlock_create_ruleset=ENOSYS,clone_newuser=EPERM", {"--receipt", receipt}, plan,
                          {"write", dir / "out/new"}),
              0, "OK\n");
    const auto r = receipt_of(receipt);
    CHECK(r["backend"] == "native");
    CHECK(contains(why_of(r["backends"], "bwrap"), "namespaces: bwrap: user namespaces: this host refused one"));
    CHECK(r["enforcement"] == "degraded");
  }
}

TEST_CASE("backend choice: where no backend of the plan can run, the launch is refused naming each and why") {
  if (!have_bwrap()) return;
  TempDir dir;
  make_dir(dir / "out");
  // A task ceiling needs the run's cgroup, which neither backend runs without.
  const std::string plan = compile_auto(dir, "pids", choice_policy(dir, "  resources:\n    pids: 64\n"));
  const std::string marker = dir / "out/marker";
  const Run r = launch_with("mkdir=EACCES,mkdirat=EACCES", {}, plan, {"write", marker});
  INFO(r.err);
  CHECK(r.exit_code == 125);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.starts_with("aasm-launch: error: none of the plan's backends can run here: native: resource: "));
  CHECK(contains(r.err, "; bwrap: resource: "));
  CHECK_FALSE(exists(marker));
  SUBCASE("the dry run says the same, and doctor --plan too") {
    const Run dry = run({fault_tool(), "mkdir=EACCES,mkdirat=EACCES", binary("AASM_LAUNCH"), "--dry-run", "--json", plan});
    CHECK(dry.exit_code == 125);
    const auto doc = nlohmann::json::parse(dry.out);
    CHECK(doc["verdict"]["proceed"] == false);
    CHECK(contains(doc["verdict"]["refusal"].get<std::string>(), "none of the plan's backends can run here"));
    CHECK(doc["backends"].size() == 2);
    const Run doctor = run({fault_tool(), "mkdir=EACCES,mkdirat=EACCES", binary("AASM_LAUNCH"), "doctor", "--json",
                            "--plan", plan});
    CHECK(doctor.exit_code == 1);
    const auto report = nlohmann::json::parse(doctor.out);
    CHECK(report["plan"]["proceed"] == false);
    CHECK(contains(why_of(report["plan"]["backends"], "bwrap"), "resource: "));
  }
  SUBCASE("control: with its cgroup the same plan runs natively") {
    CHECK_RUN(launch_with("", {}, plan, {"write", marker}), 0, "OK\n");
    CHECK(read_file(marker) == "x");
  }
}

TEST_CASE("backend choice: --backend NAME runs that backend or refuses; dry run and doctor --plan name the choice") {
  if (!have_bwrap()) return;
  TempDir dir;
  make_dir(dir / "out");
  const std::string plan = compile_auto(dir, "auto", choice_policy(dir));
  // Forced onto bwrap on a host where native would be taken: bwrap's EROFS, not Landlock's EACCES.
  CHECK_RUN(launch_with("", {"--backend", "bwrap"}, plan, {"write", dir / "new"}), 1, "EROFS\n");
  CHECK_RUN(launch_with("", {"--backend", "native"}, plan, {"write", dir / "new"}), 1, "EACCES\n");
  const Run oci = launch_with("", {"--backend", "oci"}, plan, {"write", dir / "new"});
  CHECK(oci.exit_code == 125);
  CHECK(oci.err == "aasm-launch: error: the plan has no backend oci (it lists native, bwrap)\n");
  // A plan of one backend runs only under it.
  const std::string native_only = compile_spec(dir, "one", choice_policy(dir));
  const Run one = launch_with("", {"--backend", "bwrap"}, native_only, {"write", dir / "new"});
  CHECK(one.exit_code == 125);
  CHECK(contains(one.err, "the plan was compiled for backend native alone, not bwrap"));
  CHECK_FALSE(exists(dir / "new"));

  const Run dry = run({fault_tool(), "landlock_create_ruleset=ENOSYS", binary("AASM_LAUNCH"), "--dry-run", plan});
  CHECK(dry.exit_code == 0);
  CHECK(contains(dry.out, "\nbackend: bwrap (taken of the plan's 2)\n  native: not taken: runs weaker here than bwrap: "));
  const Run doctor = run({binary("AASM_LAUNCH"), "doctor", "--plan", plan});
  CHECK(contains(doctor.out, "plan " + plan + ": the launch would proceed\n  backend: native (taken of the plan's 2)\n"));
  CHECK(contains(doctor.out, "  bwrap: not taken: not tried: native runs every control as planned\n"));
}

TEST_CASE("backend choice: an unprivileged launcher without Landlock takes bwrap; with Landlock, native") {
  if (!have_bwrap()) return;
  TempDir dir("/var/tmp");
  ::chmod(dir.path().c_str(), 0755);
  const std::string ws = dir / "ws";
  make_dir(ws);
  make_dir(ws + "/out");
  const std::string plan = compile_auto(dir, "p",
                                        "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"${CWD}\"]}\n"
                                        "    write: {allow: [\"${CWD}/out\"]}\n  syscalls:\n    deny: [\"@mount\"]\n"
                                        "  isolation:\n    degraded: [file_read, file_write, ipc]\n");
  REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", dir.path()}).exit_code == 0);
  const auto as_nobody = [&](const std::string& faults, const std::string& script, bool sandboxed) {
    std::vector<std::string> argv;
    run_as(65534, argv);
    argv.insert(argv.end(), {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + ws});
    if (!faults.empty()) argv.insert(argv.end(), {fault_tool(), faults});
    if (sandboxed) argv.insert(argv.end(), {binary("AASM_LAUNCH"), "--receipt", dir / "r.json", plan, "--"});
    argv.insert(argv.end(), {"/bin/sh", "-c", script});
    return run(argv, ws);
  };
  const std::string script = "id -u; echo a > out/a && cat out/a; echo b > b || echo refused";
  const Run bwrap = as_nobody("landlock_create_ruleset=ENOSYS", script, true);
  CHECK_RUN(bwrap, 0, "65534\na\nrefused\n");
  CHECK(contains(bwrap.err, "Read-only file system"));  // bwrap's bind, not Landlock's EACCES
  CHECK(receipt_of(dir / "r.json")["backend"] == "bwrap");
  const Run native = as_nobody("", script, true);
  CHECK_RUN(native, 0, "65534\na\nrefused\n");
  CHECK(contains(native.err, "Permission denied"));  // Landlock's EACCES
  CHECK(receipt_of(dir / "r.json")["backend"] == "native");
  CHECK_FALSE(exists(ws + "/b"));
  // The control: the same user writes there outside the sandbox.
  CHECK_RUN(as_nobody("", "echo b > b && cat b", false), 0, "b\n");
}
