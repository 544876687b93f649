// `aasm-launch doctor --json` against what launches on the same host do: each
// feature doctor calls available must work in a real launch of a plan that
// needs it, and each it calls missing must refuse that launch (exit 125).
// The same launch under a plan that does not need the feature is the
// control. Doctor's exit status agrees with its own verdict.
#include <signal.h>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;
using Json = nlohmann::json;

namespace {

Json doctor_report(int* exit_code = nullptr) {
  const Run r = run({binary("AASM_LAUNCH"), "doctor", "--json"});
  INFO("stderr: ", r.err);
  REQUIRE(r.signal == 0);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  if (exit_code) *exit_code = r.exit_code;
  return Json::parse(r.out);
}

std::string status_of(const Json& report, const std::string& feature) {
  for (const Json& check : report["checks"])
    if (check["feature"] == feature) return check["status"];
  FAIL("doctor reports no ", feature);
  return "";
}

}  // namespace

TEST_CASE("doctor: its exit status is its verdict, and every feature it lacks names what and the remedy") {
  int code = -1;
  const Json report = doctor_report(&code);
  CHECK(code == (report["complete"].get<bool>() ? 0 : 1));
  bool complete = true;
  for (const Json& check : report["checks"]) {
    const std::string status = check["status"];
    INFO(check.dump());
    CHECK(!check["detail"].get<std::string>().empty());
    if (status == "partial" || status == "missing") {
      complete = false;
      CHECK(!check["missing"].get<std::string>().empty());
      CHECK(!check["remedy"].get<std::string>().empty());
    } else {
      CHECK(check["missing"] == "");
    }
  }
  CHECK(report["complete"] == complete);
}

TEST_CASE("doctor: the Landlock ABI it reports is the one a launch negotiates, and a Landlock plan enforces iff it says so") {
  const Json report = doctor_report();
  const int abi = report["landlock"]["abi"];
  Trees t;
  const std::string plan = t.plan();
  // The dry run's host line is the launch's own probe.
  const Run dry = run({binary("AASM_LAUNCH"), "--dry-run", "--json", plan});
  REQUIRE(dry.exit_code == (abi ? 0 : 125));
  CHECK(Json::parse(dry.out)["host"]["landlock_abi"] == abi);
  if (status_of(report, "landlock") == "missing") {
    CHECK(abi == 0);
    const Run r = probe(plan, {"read", t.in + "/file"});
    CHECK(r.exit_code == 125);
    return;
  }
  CHECK(abi >= 1);
  // Each bit of the errata bitmask is named once ("erratum N (ABI A): title").
  const unsigned errata = report["landlock"]["errata"];
  CHECK(report["landlock"]["errata_fixed"].size() == size_t(__builtin_popcount(errata)));
  for (const Json& name : report["landlock"]["errata_fixed"]) CHECK(name.get<std::string>().rfind("erratum ", 0) == 0);
  CHECK_RUN(probe(plan, {"read", t.secret + "/file"}), 1, "EACCES\n");
  SUBCASE("control: the same read inside the allowed tree succeeds") {
    CHECK_RUN(probe(plan, {"read", t.in + "/file"}), 0, "OK\n");
  }
}

TEST_CASE("doctor: a memory-limited plan launches iff doctor says memory groups can be made") {
  REQUIRE(::geteuid() == 0);
  const Json report = doctor_report();
  TempDir dir;
  const std::string limited = compile_spec(dir, "limited", Fs{{dir.path()}, {dir.path()}, {}}.yaml() +
                                                               "  resources:\n    memory: 64Mi\n");
  const Run r = launch(limited, {"/usr/bin/true"});
  INFO("stderr: ", r.err);
  if (status_of(report, "cgroup_memory") == "available") {
    CHECK(r.exit_code == 0);
  } else {
    CHECK(r.exit_code == 125);
    CHECK(contains(r.err, "memory"));
  }
  SUBCASE("control: without the memory limit the same command runs") {
    const std::string open = compile_spec(dir, "open", Fs{{dir.path()}, {dir.path()}, {}}.yaml());
    CHECK(launch(open, {"/usr/bin/true"}).exit_code == 0);
  }
}

TEST_CASE("doctor: a plan with a user namespace launches iff doctor says user namespaces are available") {
  const Json report = doctor_report();
  TempDir dir;
  const std::string user = compile_spec(dir, "user", Fs{{dir.path()}, {}, {}}.yaml() +
                                                         "  isolation:\n    namespaces: [user]\n");
  const Run r = launch(user, {"/usr/bin/true"});
  INFO("stderr: ", r.err);
  if (status_of(report, "user_namespaces") == "available")
    CHECK(r.exit_code == 0);
  else
    CHECK(r.exit_code == 125);
  SUBCASE("control: without the namespace the same command runs") {
    const std::string plain = compile_spec(dir, "plain", Fs{{dir.path()}, {}, {}}.yaml());
    CHECK(launch(plain, {"/usr/bin/true"}).exit_code == 0);
  }
}

TEST_CASE("doctor: seccomp's kill_process is available iff a denied call kills the command") {
  const Json report = doctor_report();
  TempDir dir;
  const std::string denying =
      compile_spec(dir, "deny", Fs{{dir.path()}, {}, {}}.yaml() + "  syscalls:\n    default: kill\n    deny: [getppid]\n");
  const Run r = probe(denying, {"getppid"});
  INFO("stdout: ", r.out, " stderr: ", r.err);
  if (status_of(report, "seccomp") == "missing") {
    CHECK(r.exit_code == 125);
    return;
  }
  if (report["seccomp_actions"]["kill_process"].get<bool>())
    CHECK_RUN(r, 128 + SIGSYS, "");  // killed before it printed anything
  SUBCASE("control: without the denial the same call answers") {
    const std::string plain = compile_spec(dir, "plain", Fs{{dir.path()}, {}, {}}.yaml());
    const Run c = probe(plain, {"getppid"});
    CHECK(c.exit_code == 0);
  }
}

// The denial records doctor says a launch can see are the ones a failing
// launch says it saw or could not: the same probe, the same sentence.
TEST_CASE("doctor: the Landlock denial records it states are the ones a failing launch states") {
  const auto landlock_clause = [](const Json& report) {
    for (const Json& check : report["checks"])
      if (check["feature"] == "denial_records") {
        const std::string detail = check["detail"];
        return detail.substr(0, detail.find("; seccomp kills: "));
      }
    FAIL("doctor reports no denial_records");
    return std::string();
  };
  TempDir dir, outside;
  write_file(outside / "file", "outside\n");
  const std::string plan = compile_spec(dir, "fs", Fs{{dir.path()}, {}, {}}.yaml());
  const auto check_host = [&](const std::vector<std::string>& prefix) {
    std::vector<std::string> doctor = prefix;
    doctor.insert(doctor.end(), {binary("AASM_LAUNCH"), "doctor", "--json"});
    const Run d = run(doctor);
    REQUIRE((d.exit_code == 0 || d.exit_code == 1));
    const std::string clause = landlock_clause(Json::parse(d.out));
    std::vector<std::string> launch = prefix;
    launch.insert(launch.end(), {binary("AASM_LAUNCH"), "--denials=full", plan, "--", binary("AASM_PROBE"), "read",
                                 outside / "file"});
    const Run r = run(launch);
    INFO("doctor: ", clause, "\nlaunch: ", r.err);
    CHECK_RUN(r, 1, "EACCES\n");
    if (clause.rfind("Landlock denials: recorded", 0) == 0)
      CHECK_FALSE(contains(r.err, "Landlock denials: this host does not deliver"));
    else
      CHECK(contains(r.err, "not seen on this host: " + clause));
    return clause;
  };
  check_host({});
  SUBCASE("a host without audit: doctor names the missing socket, as the launch does") {
    const std::string clause = check_host({probe_dir() + "/aasm-fault", "socket=EPROTONOSUPPORT"});
    CHECK(contains(clause, "no audit socket: Protocol not supported, the kernel is built without CONFIG_AUDIT"));
  }
}

TEST_CASE("doctor: a bwrap plan launches iff doctor says bwrap is available") {
  const Json report = doctor_report();
  if (::access("/usr/bin/bwrap", X_OK) != 0) {
    CHECK(status_of(report, "bwrap") == "info");
    return;
  }
  TempDir dir;
  write_file(dir / "bwrap.yaml",
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: bwrap, tier: org}\nspec:\n" +
                 Fs{{dir.path()}, {}, {}}.yaml() +
                 "  isolation:\n    degraded: [file_read, file_write, file_execute, network_outbound, network_bind, ipc]\n");
  const Run compiled = run({binary("AASMC"), "compile", dir / "bwrap.yaml", "--backend", "bwrap", "-o", dir / "bwrap.bin"});
  INFO("aasmc: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const Run r = launch(dir / "bwrap.bin", {"/usr/bin/true"});
  INFO("stderr: ", r.err);
  CHECK(status_of(report, "bwrap") == "available");
  CHECK(r.exit_code == 0);
  SUBCASE("control: without user namespaces (injected) doctor says missing, and the launch is refused") {
    const std::string fault = probe_dir() + "/aasm-fault";
    const Run faulted = run({fault, "clone_newuser=EPERM", binary("AASM_LAUNCH"), "doctor", "--json"});
    CHECK(status_of(Json::parse(faulted.out), "bwrap") == "missing");
    CHECK(run({fault, "clone_newuser=EPERM", binary("AASM_LAUNCH"), dir / "bwrap.bin", "--", "/usr/bin/true"}).exit_code ==
          125);
  }
}
