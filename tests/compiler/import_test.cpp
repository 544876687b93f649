// `aasmc import` through the real aasmc (docs/import.md): moby's real
// default.json imports into a policy whose plan answers, call by call on
// x86_64 under the userspace interpreter (plan_answers.h), what the profile
// itself decides for a container without capabilities (read here by a small
// evaluator of the JSON, the oracle); `aasmc export --format oci` then
// `aasmc import --from oci` gives the same answers as the policy exported;
// sandbox-runtime settings map as documented; and a table of broken inputs
// each gets one file:line:col error and no output file.
#include <doctest/doctest.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "plan_answers.h"

using namespace aasm;
using namespace aasm::ktest;
using Json = nlohmann::json;

namespace {

std::string testdata(const std::string& relative) {
  const char* root = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(root != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  return std::string(root) + "/" + relative;
}

Run import(const std::string& from, const std::string& input, const std::string& output,
           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv = {binary("AASMC"), "import", "--from", from, input, "-o", output};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run(argv);
}

constexpr uint32_t errno_action(int e) { return SECCOMP_RET_ERRNO | uint32_t(e); }

// The calls libseccomp names on `scmp_arch`, by number.
std::map<long, std::string> calls_of(uint32_t scmp_arch) {
  std::map<long, std::string> out;
  for (long nr = 0; nr < 1024; ++nr)
    if (char* name = seccomp_syscall_resolve_num_arch(scmp_arch, int(nr))) {
      out[nr] = name;
      free(name);
    }
  return out;
}

// Argument vectors that exercise a profile's comparisons of one call: each
// compared value, one either side, a mask's bits; within 32 bits (aasm reads
// an int argument's low half, docs/ported-suites.md).
// Where a call compares two arguments, every pair of their values too, so
// that a region both bound (prlimit64's pid != 0 && new_limit != 0) is probed.
std::vector<std::vector<uint64_t>> probes_for(const Json& profile, const std::string& name) {
  std::vector<std::vector<uint64_t>> out = {{}};
  std::map<size_t, std::set<uint64_t>> by_index;
  for (const Json& entry : profile.value("syscalls", Json::array())) {
    const Json names = entry.value("names", Json::array());
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    for (const Json& arg : entry.value("args", Json::array())) {
      const size_t index = arg["index"];
      std::set<uint64_t> values;
      const uint64_t value = arg["value"], two = arg.value("valueTwo", uint64_t(0));
      for (uint64_t v : {value, value - 1, value + 1, two, two + 1, ~value}) values.insert(v & 0xffffffffu);
      for (int bit = 0; bit < 32; ++bit)
        if (value & (uint64_t(1) << bit)) values.insert(two | (uint64_t(1) << bit));
      for (uint64_t v : values) {
        std::vector<uint64_t> args(6, 0);
        args[index] = v;
        out.push_back(args);
      }
      by_index[index].insert(values.begin(), values.end());
    }
  }
  if (by_index.size() == 2)
    for (uint64_t a : by_index.begin()->second)
      for (uint64_t b : by_index.rbegin()->second) {
        std::vector<uint64_t> args(6, 0);
        args[by_index.begin()->first] = a;
        args[by_index.rbegin()->first] = b;
        out.push_back(args);
      }
  return out;
}

// moby's decision for a call on x86_64 in a container holding no
// capability, read from the profile as runc and libseccomp apply it.
struct MobyOracle {
  Json profile;

  static bool holds(const Json& arg, const std::vector<uint64_t>& args) {
    const uint64_t a = args.empty() ? 0 : args[arg["index"].get<size_t>()];
    const uint64_t v = arg["value"], two = arg.value("valueTwo", uint64_t(0));
    const std::string op = arg["op"];
    if (op == "SCMP_CMP_EQ") return a == v;
    if (op == "SCMP_CMP_NE") return a != v;
    if (op == "SCMP_CMP_LT") return a < v;
    if (op == "SCMP_CMP_LE") return a <= v;
    if (op == "SCMP_CMP_GT") return a > v;
    if (op == "SCMP_CMP_GE") return a >= v;
    REQUIRE(op == "SCMP_CMP_MASKED_EQ");
    return (a & v) == two;
  }

  static bool applies(const Json& entry) {
    auto list = [&](const char* side, const char* key) {
      return entry.contains(side) ? entry[side].value(key, Json::array()) : Json::array();
    };
    auto has_amd64 = [](const Json& arches) { return std::find(arches.begin(), arches.end(), "amd64") != arches.end(); };
    if (!list("includes", "caps").empty()) return false;
    if (!list("includes", "arches").empty() && !has_amd64(list("includes", "arches"))) return false;
    return !has_amd64(list("excludes", "arches"));
  }

  uint32_t answer(const std::string& name, const std::vector<uint64_t>& args) const {
    for (const Json& entry : profile["syscalls"]) {
      const Json names = entry["names"];
      if (!applies(entry) || std::find(names.begin(), names.end(), name) == names.end()) continue;
      bool all = true;
      for (const Json& arg : entry.value("args", Json::array())) all = all && holds(arg, args);
      if (!all) continue;
      if (entry["action"] == "SCMP_ACT_ALLOW") return SECCOMP_RET_ALLOW;
      REQUIRE(entry["action"] == "SCMP_ACT_ERRNO");
      return errno_action(entry.value("errnoRet", 1));
    }
    return errno_action(profile["defaultErrnoRet"].get<int>());
  }
};

// Where the plan of the imported moby profile answers otherwise than moby,
// each a safe default every plan carries (docs/import.md): openat2 is
// answered ENOSYS (@hidden-modes: its mode is out of a filter's reach).
const std::map<std::string, uint32_t> kSafeDefaultAnswers = {{"openat2", errno_action(ENOSYS)}};

}  // namespace

TEST_CASE("import: moby's default.json answers moby's table call by call on x86_64") {
  TempDir dir;
  const std::string profile_path = testdata("import/moby/default.json");
  const Run imported = import("oci", profile_path, dir / "moby.yaml", {"--arch", "x86_64"});
  INFO("aasmc import stderr: ", imported.err);
  REQUIRE(imported.exit_code == 0);
  const PlanAnswers plan = compile_answers(dir, {dir / "moby.yaml"}, plan::kAuditArchX86_64, {"--arch", "x86_64"});
  const MobyOracle moby{Json::parse(read_file(profile_path))};
  std::map<std::string, uint32_t> differ;
  size_t checks = 0;
  for (const auto& [nr, name] : calls_of(SCMP_ARCH_X86_64))
    for (const std::vector<uint64_t>& args : probes_for(moby.profile, name)) {
      const uint32_t ours = plan.answer(nr, args), theirs = moby.answer(name, args);
      ++checks;
      if (ours != theirs) {
        CAPTURE(name);
        CAPTURE(args.empty() ? 0 : args[0]);
        CHECK(kSafeDefaultAnswers.count(name) == 1);
        differ[name] = ours;
      }
    }
  CHECK(checks > 400);
  CHECK(differ == kSafeDefaultAnswers);
  // The argument filters moby writes, on both sides of each value.
  CHECK(plan.answer(SYS_socket, {40, SOCK_STREAM}) == errno_action(EPERM));
  CHECK(plan.answer(SYS_socket, {AF_INET, SOCK_STREAM}) == SECCOMP_RET_ALLOW);
  CHECK(plan.answer(SYS_personality, {0x20008}) == SECCOMP_RET_ALLOW);
  CHECK(plan.answer(SYS_clone3) == errno_action(ENOSYS));
}

TEST_CASE("import: moby's profile for both targets names what only x86_64 has as tightened, capabilities as not expressible") {
  TempDir dir;
  const Run imported = import("oci", testdata("import/moby/default.json"), dir / "moby.yaml");
  INFO("aasmc import stderr: ", imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(contains(imported.err, "default.json:62:3: warning: syscalls[0]: tightened: access (x86_64), alarm (x86_64)"));
  CHECK(contains(imported.err, "import with --arch to keep them [AASM0151]"));
  CHECK(contains(imported.err, "default.json:622:3: warning: syscalls[16]: not-expressible: only for a container holding "
                               "CAP_DAC_READ_SEARCH"));
  CHECK(contains(imported.err, "default.json:8:5: warning: SCMP_ARCH_X86: tightened: killed"));
  // Every element is in the document's comments, carried ones too.
  const std::string policy = read_file(dir / "moby.yaml");
  CHECK(contains(policy, "syscalls[1].includes.minKernel: carried"));
  const PlanAnswers x86 = compile_answers(dir, {dir / "moby.yaml"}, plan::kAuditArchX86_64);
  CHECK(x86.answer(SYS_read) == SECCOMP_RET_ALLOW);
  CHECK(x86.answer(SYS_alarm) == errno_action(EPERM));
}

TEST_CASE("import: export --format oci then import --from oci answers as the policy exported, per target") {
  namespace fs = std::filesystem;
  TempDir dir;
  std::vector<std::string> policies;
  for (const char* folder : {"seccomp", "policies"})
    for (const auto& entry : fs::directory_iterator(testdata(folder)))
      if (entry.path().extension() == ".yaml") policies.push_back(entry.path());
  for (const auto& entry : fs::directory_iterator(fs::path(testdata("")) / ".." / "profiles"))
    if (entry.path().extension() == ".yaml") policies.push_back(entry.path());
  std::sort(policies.begin(), policies.end());
  size_t round_trips = 0, with_prlimit64 = 0;
  for (const auto& [arch, audit_arch, scmp_arch] : {std::tuple{"x86_64", plan::kAuditArchX86_64, SCMP_ARCH_X86_64},
                                                    std::tuple{"aarch64", plan::kAuditArchAarch64, SCMP_ARCH_AARCH64}}) {
    const std::vector<std::string> targets = {"--arch", arch};
    const std::map<long, std::string> calls = calls_of(scmp_arch);
    for (const std::string& policy : policies) {
      CAPTURE(policy);
      CAPTURE(arch);
      const std::string stem = fs::path(policy).stem(), name = stem + "-" + arch;
      std::vector<std::string> argv = {binary("AASMC"), "export", "--format", "oci", policy, "-o", dir / (name + ".json")};
      argv.insert(argv.end(), targets.begin(), targets.end());
      if (run(argv).exit_code != 0) continue;  // a rule the profile cannot hold, refused (AASM0145)
      const Run imported = import("oci", dir / (name + ".json"), dir / (name + ".yaml"), targets);
      INFO("aasmc import stderr: ", imported.err);
      REQUIRE(imported.exit_code == 0);
      ++round_trips;
      // prlimit64, exported as the complement of @foreign-limits, is the call
      // allowed with that safe default again, not 33 allow rules narrowing it.
      with_prlimit64 += contains(read_file(dir / (name + ".yaml")), "carried: prlimit64 is in syscalls.allow, and aasm's "
                                                                    "safe default @foreign-limits refuses it where");
      const Json profile = Json::parse(read_file(dir / (name + ".json")));
      const PlanAnswers before = compile_answers(dir, {policy}, audit_arch, targets, name + "-before");
      const PlanAnswers after = compile_answers(dir, {dir / (name + ".yaml")}, audit_arch, targets, name + "-after");
      std::string differ;  // "name(arg0): before/after"
      for (const auto& [nr, call] : calls)
        for (const std::vector<uint64_t>& args : probes_for(profile, call))
          if (const uint32_t was = before.answer(nr, args), is = after.answer(nr, args); was != is)
            differ += " " + call + "(" + std::to_string(args.empty() ? 0 : args[0]) + "): " + std::to_string(was) +
                      "/" + std::to_string(is);
      INFO("answers that differ:", differ);
      CHECK(differ.empty());
    }
  }
  CHECK(round_trips >= 10);
  CHECK(with_prlimit64 >= 10);  // the five policies that allow it, on each target
}

TEST_CASE("import: a profile allowing prlimit64 beyond what @foreign-limits leaves imports tightened, not refused") {
  TempDir dir;
  const std::string exported = dir / "demo.json", widened = dir / "wider.json";
  REQUIRE(run({binary("AASMC"), "export", "--format", "oci", testdata("policies/demo.yaml"), "--arch", "x86_64", "-o",
               exported})
              .exit_code == 0);
  // The export's 33 entries, and pid 5's limits set whatever new_limit is.
  Json profile = Json::parse(read_file(exported));
  profile["syscalls"].push_back({{"names", {"prlimit64"}},
                                 {"action", "SCMP_ACT_ALLOW"},
                                 {"args", {{{"index", 0}, {"value", 5}, {"valueTwo", 0}, {"op", "SCMP_CMP_EQ"}}}}});
  write_file(widened, profile.dump(2));
  const Run imported = import("oci", widened, dir / "wider.yaml", {"--arch", "x86_64"});
  INFO("aasmc import stderr: ", imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(contains(imported.err, "tightened: prlimit64 is in syscalls.allow, and aasm's safe default @foreign-limits "
                               "refuses it where pid != 0 && new_limit != 0 (errno:EPERM), where the profile allows it "
                               "for some of those arguments too"));
  const PlanAnswers plan = compile_answers(dir, {dir / "wider.yaml"}, plan::kAuditArchX86_64, {"--arch", "x86_64"});
  CHECK(plan.answer(SYS_prlimit64, {0, 0, 1}) == SECCOMP_RET_ALLOW);
  CHECK(plan.answer(SYS_prlimit64, {7, 0, 0}) == SECCOMP_RET_ALLOW);
  CHECK(plan.answer(SYS_prlimit64, {5, 0, 1}) == errno_action(EPERM));  // the profile allows it: tightened
  CHECK(plan.answer(SYS_prlimit64, {7, 0, 1}) == errno_action(EPERM));
}

// The host lists of an imported policy's plan, as `aasmc show --json`
// gives them (its `egress` key): {allow, deny}, each sorted. The policy
// must compile; a plan without host lists has no `egress` key.
std::pair<std::vector<std::string>, std::vector<std::string>> egress_of(const TempDir& dir, const std::string& policy) {
  const std::string plan_path = dir / (std::filesystem::path(policy).stem().string() + ".plan");
  const Run compiled = run({binary("AASMC"), "compile", policy, "-o", plan_path});
  INFO("aasmc compile stderr: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const Run shown = run({binary("AASMC"), "show", plan_path, "--json"});
  REQUIRE(shown.exit_code == 0);
  const Json plan = Json::parse(shown.out);
  if (!plan.contains("egress")) return {};
  std::vector<std::string> allow = plan["egress"]["allow"], deny = plan["egress"]["deny"];
  std::sort(allow.begin(), allow.end());
  std::sort(deny.begin(), deny.end());
  return {allow, deny};
}

using Patterns = std::vector<std::string>;

TEST_CASE("import: sandbox-runtime settings map to filesystem, network hosts and ipc") {
  TempDir dir;
  const Run imported = import("srt", testdata("import/srt/readme-example.json"), dir / "srt.yaml");
  INFO("aasmc import stderr: ", imported.err);
  REQUIRE(imported.exit_code == 0);
  const std::string policy = read_file(dir / "srt.yaml");
  CHECK(contains(policy, "    write: {allow: [\"${CWD}\", \"${CWD}/src\", \"${CWD}/test\", \"/tmp\"]}\n"));
  CHECK(contains(policy, "    outbound: {hosts: {allow: [\"github.com\", \"*.github.com\", \"lfs.github.com\", "
                         "\"api.github.com\", \"npmjs.org\", \"*.npmjs.org\"], deny: [\"malicious.com\"]}}\n    bind: none\n"));
  CHECK(contains(policy, "    unix_sockets: {allow: [\"/var/run/docker.sock\"]}\n"));
  // srt reaches an allowed host on every port, the broker on 80 and 443.
  CHECK(contains(imported.err, "readme-example.json:3:23: warning: network.allowedDomains: tightened: "
                               "network.outbound.hosts.allow [\"github.com\", "));
  CHECK(contains(imported.err, "on ports 80 and 443 only"));
  CHECK(!contains(imported.err, "issue 27"));
  CHECK(contains(imported.err, "readme-example.json:9:18: warning: filesystem.denyRead: not-expressible: ~/.ssh stays readable"));
  CHECK(contains(imported.err, "readme-example.json:11:19: warning: filesystem.denyWrite: not-expressible: .env stays writable"));
  CHECK(egress_of(dir, dir / "srt.yaml") ==
        std::pair{Patterns{"*.github.com", "*.npmjs.org", "api.github.com", "github.com", "lfs.github.com", "npmjs.org"},
                  Patterns{"malicious.com"}});

  const Run quiet = import("srt", testdata("import/srt/no-network.json"), dir / "quiet.yaml", {"--json"});
  REQUIRE(quiet.exit_code == 0);
  const Json report = Json::parse(quiet.out);
  CHECK(report["schema"] == "aasm.dev/import/v1");
  CHECK(report["output"] == dir / "quiet.yaml");
  CHECK(report["policy"] == read_file(dir / "quiet.yaml"));
  CHECK(contains(read_file(dir / "quiet.yaml"), "    outbound: none\n"));
  bool no_domain = false;
  for (const Json& note : report["report"])
    no_domain = no_domain || (note["element"] == "network.allowedDomains" && note["outcome"] == "carried");
  CHECK(no_domain);
  CHECK(egress_of(dir, dir / "quiet.yaml") == std::pair<Patterns, Patterns>{});
}

TEST_CASE("import: srt domains become host patterns read by aasm's parser; an entry it refuses is reported at its element") {
  TempDir dir;
  const Run imported = import("srt", testdata("import/srt/domains.json"), dir / "domains.yaml");
  INFO("aasmc import stderr: ", imported.err);
  REQUIRE(imported.exit_code == 0);
  // Lowercased and written once; *.d for the names beneath d, as in srt.
  CHECK(contains(read_file(dir / "domains.yaml"),
                 "    outbound: {hosts: {allow: [\"api.example.com\", \"*.example.com\", \"192.0.2.1\", \"localhost\", "
                 "\"*.co.uk\"], deny: [\"secret.example.com\", \"*.internal.example.com\"]}}\n"));
  CHECK(contains(imported.err, "domains.json:7:7: warning: network.allowedDomains: tightened: '*.com' would allow every "
                               "name of a top-level domain; name the domain beneath it; left out, so not reachable [AASM0151]"));
  CHECK(contains(imported.err, "domains.json:8:7: warning: network.allowedDomains: tightened: 'my_host.example.com' is not "
                               "a host name"));
  CHECK(egress_of(dir, dir / "domains.yaml") ==
        std::pair{Patterns{"*.co.uk", "*.example.com", "192.0.2.1", "api.example.com", "localhost"},
                  Patterns{"*.internal.example.com", "secret.example.com"}});

  // A denial aasm cannot read would leave its host open: no network at all.
  const Run denied = import("srt", testdata("import/srt/denied-unreadable.json"), dir / "denied.yaml");
  INFO("aasmc import stderr: ", denied.err);
  REQUIRE(denied.exit_code == 0);
  CHECK(contains(read_file(dir / "denied.yaml"), "    outbound: none\n"));
  CHECK(contains(denied.err, "denied-unreadable.json:4:23: warning: network.deniedDomains: tightened: 'bad_name.example.com' "
                             "is not a host name"));
  CHECK(contains(denied.err, "a denial the policy cannot hold would leave it open, so network.outbound is none [AASM0151]"));
  CHECK(contains(denied.err, "denied-unreadable.json:3:23: warning: network.allowedDomains: tightened: network.outbound none: "
                             "a deniedDomains entry cannot be carried"));
  CHECK(egress_of(dir, dir / "denied.yaml") == std::pair<Patterns, Patterns>{});
}

TEST_CASE("import: a broken or hostile input is one file:line:col error and no output file") {
  struct Broken {
    const char* what;
    const char* from;
    std::string text;
    const char* expect;  // the diagnostic's start, after "FILE:"
  };
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  const std::vector<Broken> table = {
      {"an empty file", "oci", "", "1:1: error: expected a JSON value, found the end of the file [AASM0150]"},
      {"truncated", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNO\",\n  \"syscalls\": [",
       "2:16: error: expected a JSON value, found the end of the file [AASM0150]"},
      {"a trailing comma", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNO\",}", "1:36: error: trailing ','"},
      {"single quotes", "oci", "{'defaultAction': 1}", "1:2: error: expected a quoted key"},
      {"a comment", "oci", "// profile\n{}", "1:1: error: expected a JSON value, found '/'"},
      {"a wrong type", "oci", "{\"defaultAction\": 5}", "1:19: error: defaultAction must be a string, not a number [AASM0012]"},
      {"an unknown action", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNOX\"}",
       "1:19: error: defaultAction: unknown action 'SCMP_ACT_ERRNOX'"},
      {"an unknown key", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"sycalls\": []}",
       "1:37: error: unknown key 'sycalls' in the profile; did you mean 'syscalls'? [AASM0010]"},
      {"hostile nesting depth", "oci", deep, "1:33: error: nesting deeper than 32 levels [AASM0005]"},
      {"a huge number", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 99999999999999999999999}",
       "1:56: error: defaultErrnoRet is 99999999999999999999999, not a whole number from 0 to 4095 [AASM0014]"},
      {"a negative value", "oci",
       "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", "
       "\"args\": [{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
       "1:129: error: syscalls[0].args[0].value is -1"},
      {"an argument index past 5", "oci",
       "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", "
       "\"args\": [{\"index\": 7, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
       "1:117: error: syscalls[0].args[0].index is 7, not a whole number from 0 to 5 [AASM0014]"},
      {"a duplicate key", "oci", "{\"defaultAction\": \"SCMP_ACT_ERRNO\",\n \"defaultAction\": \"SCMP_ACT_ALLOW\"}",
       "2:2: error: duplicate key 'defaultAction' [AASM0011]"},
      {"not UTF-8", "oci", "{\"defaultAction\": \"\xff\xfe\"}", "1:20: error: input file is not valid UTF-8 [AASM0003]"},
      {"a NUL byte", "oci", std::string("{\"defaultAction\"\0: 1}", 21), "1:17: error: NUL byte in input file [AASM0003]"},
      {"a lone surrogate", "oci", "{\"defaultAction\": \"\\ud800\"}", "1:20: error: a high surrogate not followed"},
      {"content after the value", "oci", "{} {}", "1:4: error: unexpected '{' after the JSON value [AASM0150]"},
      {"a missing member", "srt", "{\"network\": {\"allowedDomains\": [], \"deniedDomains\": []}}",
       "1:1: error: the settings has no 'filesystem', which the format requires [AASM0013]"},
      {"a settings file that is a list", "srt", "[]", "1:1: error: the settings must be an object, not an array [AASM0012]"},
  };
  TempDir dir;
  for (const Broken& broken : table) {
    CAPTURE(broken.what);
    const std::string input = dir / "input.json", output = dir / "out.yaml";
    write_file(input, broken.text);
    const Run imported = import(broken.from, input, output);
    CHECK(imported.exit_code == 1);
    CHECK(contains(imported.err, input + ":" + broken.expect));
    size_t errors = 0;  // a duplicate key's note points at the first
    for (const std::string& line : diagnostic_lines(imported.err, input)) errors += contains(line, ": error: ");
    CHECK(errors == 1);
    CHECK(!exists(output));
  }
}
