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
