// Sealed receipts of real launches (docs/receipts.md): each outcome this
// host can produce, each receipt valid against schemas/receipt.schema.json
// and `aasmc receipt verify`; a receipt that cannot be written refuses the
// launch before the command runs; keyed digests; and every rule of
// `receipt verify` caught breaking, by editing real receipts field by field
// and resealing them. Each with a control.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"
#include "receipts.h"
#include "base/canonical_json.h"
#include "supervisor/receipt.h"

using namespace aasm::ktest;
using nlohmann::json;

namespace {

std::string filesystem_yaml(const TempDir& dir) {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"/dev/null\", \"" + probe_dir() + "\", \"" + dir.path() + "\"]}\n"
         "    write: {allow: [\"/dev/null\", \"" + dir.path() + "\"]}\n"
         "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n";
}

std::string plan_of(const TempDir& dir, const std::string& name, const std::string& more = "") {
  return compile_spec(dir, name, filesystem_yaml(dir) + more);
}

// The same with the launch's directory as ${CWD}: no absolute path of the
// test's in the policy, so none in the receipt's templates.
std::string cwd_plan_of(const TempDir& dir, const std::string& name) {
  return compile_spec(dir, name,
                      "  filesystem:\n"
                      "    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\", \"${CWD}\"]}\n"
                      "    write: {allow: [\"${CWD}\"]}\n"
                      "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n");
}

// A caller's key (--receipt-key-file), so the tests do not depend on the
// host's key.
std::string key_file(const TempDir& dir, const std::string& content = std::string(32, 'k')) {
  const std::string path = dir / "receipt.key";
  if (!exists(path)) write_file(path, content, 0600);
  return path;
}

// aasm-launch --receipt DIR/NAME.json --receipt-key-file KEY PLAN -- COMMAND.
Run launch_with_receipt(const TempDir& dir, const std::string& name, const std::string& plan,
                        const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH"),
                                   "--receipt",        dir / (name + ".json"),
                                   "--receipt-key-file", key_file(dir), plan, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return run(argv, dir.path());
}

std::vector<std::string> probe_args(const std::vector<std::string>& args) {
  std::vector<std::string> command = {binary("AASM_PROBE")};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

json receipt_of(const TempDir& dir, const std::string& name) { return json::parse(read_file(dir / (name + ".json"))); }

std::string check_receipt_script() {
  return std::string(std::getenv("AASM_SOURCE_ROOT")) + "/tests/schema/check_receipt.py";
}

// The receipt is valid against the schema, and `receipt verify` finds its
// seal intact and every rule holding.
void check_valid(const std::string& path) {
  const Run schema = run({"/usr/bin/python3", check_receipt_script(), path});
  INFO("schema: ", schema.out, schema.err);
  CHECK(schema.exit_code == 0);
  const Run verified = run({binary("AASMC"), "receipt", "verify", path});
  INFO("verify: ", verified.out, verified.err);
  CHECK(verified.exit_code == 0);
}

// A launch of `command` under `plan` with the receipt `name`.json: its exit
// status and the receipt's outcome are the ones given, the receipt holds its
// seal and its rules. Returns the receipt.
json launch_expecting(const TempDir& dir, const std::string& name, const std::string& plan,
                      const std::vector<std::string>& command, int exit_code, const std::string& outcome) {
  const Run r = launch_with_receipt(dir, name, plan, command);
  INFO(name, ": ", r.err);
  CHECK(r.exit_code == exit_code);
  const json receipt = receipt_of(dir, name);
  CHECK(receipt["command"]["outcome"] == outcome);
  check_valid(dir / (name + ".json"));
  return receipt;
}

const json& control(const json& receipt, const std::string& domain) {
  for (const json& c : receipt.at("controls"))
    if (c.at("domain") == domain) return c;
  FAIL("no control " << domain);
  static const json none;
  return none;
}

}  // namespace

// ---------------------------------------------------------------- outcomes

TEST_CASE("receipt outcomes: a clean exit, every domain stated, enforcement full") {
  TempDir dir;
  const Run r = launch_with_receipt(dir, "clean", plan_of(dir, "clean"), probe_args({"exit", "0"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json receipt = receipt_of(dir, "clean");
  CHECK(receipt["command"]["outcome"] == "exited");
  CHECK(receipt["command"]["signal"] == 0);
  CHECK(receipt["enforcement"] == "full");
  // Untouched by this plan, yet stated.
  CHECK(control(receipt, "network_outbound")["achieved"] == "not constrained");
  CHECK(control(receipt, "resource")["achieved"] == "not constrained");
  CHECK(control(receipt, "namespaces")["planned"] == "not planned");
  CHECK(control(receipt, "file_read")["achieved"] == "enforced");
  CHECK(control(receipt, "file_execute")["achieved"] == "not measured");  // nothing checks it before exec
  CHECK(receipt["command"]["environment"]["constrained"].get<std::string>().rfind("not constrained", 0) == 0);
  check_valid(dir / "clean.json");

  SUBCASE("control: a command exiting 3 is exited, status 3") {
    const json three = launch_expecting(dir, "three", plan_of(dir, "three"), probe_args({"exit", "3"}), 3, "exited");
    CHECK(three["command"]["exit_code"] == 3);
  }
}

TEST_CASE("receipt outcomes: a seccomp kill is signal 31") {
  TempDir dir;
  const std::string plan = plan_of(dir, "kill", "  syscalls:\n    default: kill\n    deny: [mkdirat]\n");
  const json receipt = launch_expecting(dir, "kill", plan, probe_args({"mkdir", dir / "made"}), 128 + SIGSYS, "signal");
  CHECK(receipt["command"]["signal"] == SIGSYS);

  SUBCASE("control: the call allowed, the command exits 0") {
    const std::string open = plan_of(dir, "kill-open", "  syscalls:\n    default: kill\n    deny: [unlinkat]\n");
    launch_expecting(dir, "open", open, probe_args({"mkdir", dir / "made"}), 0, "exited");
  }
}

TEST_CASE("receipt outcomes: a Landlock denial is the command's own failure, exited") {
  TempDir dir, elsewhere;
  write_file(elsewhere / "secret", "x");  // outside the plan's trees
  const Run r = launch_with_receipt(dir, "denied", plan_of(dir, "denied"), probe_args({"read", elsewhere / "secret"}));
  CHECK(r.out == "EACCES\n");
  CHECK(r.exit_code == 1);
  const json receipt = receipt_of(dir, "denied");
  CHECK(receipt["command"]["outcome"] == "exited");
  CHECK(receipt["command"]["exit_code"] == 1);
  check_valid(dir / "denied.json");

  SUBCASE("control: a readable file is read") {
    write_file(dir / "readable", "x");
    CHECK(launch_with_receipt(dir, "read", plan_of(dir, "read"), probe_args({"read", dir / "readable"})).exit_code == 0);
  }
}

TEST_CASE("receipt outcomes: the wall-clock deadline is 124 and outcome deadline") {
  TempDir dir;
  const std::string plan = plan_of(dir, "deadline", "  resources: {wall_clock: 1s}\n");
  const json receipt = launch_expecting(dir, "deadline", plan, probe_args({"spin", "30"}), 124, "deadline");
  CHECK(receipt["command"]["exit_code"] == 124);

  SUBCASE("control: a short command under the same plan exits") {
    launch_expecting(dir, "short", plan, probe_args({"exit", "0"}), 0, "exited");
  }
}

TEST_CASE("receipt outcomes: the output limit") {
  TempDir dir;
  const std::string plan = plan_of(dir, "output", "  resources: {stdout: 1000}\n");
  const Run r = launch_with_receipt(dir, "output", plan, probe_args({"yes", "out", "forever"}));
  CHECK(r.exit_code == 128 + SIGKILL);
  CHECK(r.out.size() == 1000);
  CHECK(receipt_of(dir, "output")["command"]["outcome"] == "output limit");
  check_valid(dir / "output.json");

  SUBCASE("control: within the limit") {
    launch_expecting(dir, "within", plan, probe_args({"yes", "out", "10"}), 0, "exited");
  }
}

TEST_CASE("receipt outcomes: the kernel's OOM kill is out of memory, not a plain SIGKILL") {
  TempDir dir;
  const std::string bomb = "x = bytearray(256 * 1024 * 1024); print(len(x))";
  const std::string plan = plan_of(dir, "oom", "  resources:\n    memory: 64Mi\n    swap: 0\n");
  launch_expecting(dir, "oom", plan, {"/usr/bin/python3", "-c", bomb}, 128 + SIGKILL, "out of memory");

  SUBCASE("control: under a larger ceiling it completes") {
    const std::string large = plan_of(dir, "oom-large", "  resources:\n    memory: 1Gi\n    swap: 0\n");
    launch_expecting(dir, "large", large, {"/usr/bin/python3", "-c", bomb}, 0, "exited");
  }
}

TEST_CASE("receipt outcomes: a command that fails at the task ceiling is task limit") {
  TempDir dir;
  const std::string bomb =
      "import sys, threading, time\n"
      "try:\n"
      "    for _ in range(100):\n"
      "        threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n"
      "except RuntimeError:\n"
      "    sys.exit(3)\n";
  const Run r = launch_with_receipt(dir, "tasks", plan_of(dir, "tasks", "  resources:\n    pids: 24\n"),
                                    {"/usr/bin/python3", "-c", bomb});
  INFO(r.err);
  CHECK(r.exit_code == 3);
  const json receipt = receipt_of(dir, "tasks");
  CHECK(receipt["command"]["outcome"] == "task limit");
  CHECK(receipt["events"].dump().find("the task ceiling was reached") != std::string::npos);
  check_valid(dir / "tasks.json");

  SUBCASE("control: without the ceiling all threads start and it exits 0") {
    launch_expecting(dir, "no-ceiling", plan_of(dir, "no-ceiling", "  resources:\n    wall_clock: 20s\n"),
                     {"/usr/bin/python3", "-c", bomb}, 0, "exited");
  }
}

TEST_CASE("receipt outcomes: a refused launch is not started, nothing enforced") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "missing", "  filesystem:\n    read: {allow: [\"/usr\", \"" + probe_dir() +
                                                            "\", \"" + dir.path() + "/missing\"]}\n");
  const Run r = launch_with_receipt(dir, "refused", plan, probe_args({"write", dir / "marker"}));
  CHECK(r.exit_code == 125);
  CHECK_FALSE(exists(dir / "marker"));
  const json receipt = receipt_of(dir, "refused");
  CHECK(receipt["command"]["outcome"] == "not started");
  CHECK(receipt["enforcement"] == "none");
  CHECK(receipt["timeline"]["exec"] == 0);
  for (const json& c : receipt["controls"]) CHECK(c["achieved"] != "enforced");
  check_valid(dir / "refused.json");

  SUBCASE("a command not found: not started, 127") {
    launch_expecting(dir, "notfound", plan_of(dir, "notfound"), {dir / "no-such-command"}, 127, "not started");
  }
}

// ---------------------------------------------------------------- the receipt file

TEST_CASE("receipt file: one that cannot be written refuses the launch before the command runs") {
  TempDir dir;
  const std::string plan = plan_of(dir, "file");
  const std::string marker = dir / "marker";
  const auto launch_writing = [&](const std::vector<std::string>& receipt_args, const std::string& key) {
    std::vector<std::string> argv = {binary("AASM_LAUNCH")};
    argv.insert(argv.end(), receipt_args.begin(), receipt_args.end());
    argv.insert(argv.end(), {"--receipt-key-file", key, plan, "--", binary("AASM_PROBE"), "write", marker});
    return run(argv);
  };
  const std::string key = key_file(dir);
  const Run no_dir = launch_writing({"--receipt", dir / "no-such-dir/receipt.json"}, key);
  CHECK(no_dir.exit_code == 125);
  CHECK(contains(no_dir.err, "cannot write the receipt"));
  CHECK_FALSE(exists(marker));
  const Run a_dir = launch_writing({"--receipt", dir.path()}, key);
  CHECK(a_dir.exit_code == 125);
  CHECK_FALSE(exists(marker));
  const Run closed_fd = launch_writing({"--receipt-fd", "57"}, key);
  CHECK(closed_fd.exit_code == 125);
  CHECK(contains(closed_fd.err, "descriptor 57"));
  CHECK_FALSE(exists(marker));
  const Run bad_key = launch_writing({"--receipt", dir / "r.json"}, dir / "no-key");
  CHECK(bad_key.exit_code == 125);
  CHECK_FALSE(exists(marker));
  CHECK_FALSE(exists(dir / "r.json"));

  SUBCASE("control: a writable path, mode 0600, and a writable descriptor") {
    CHECK(launch_writing({"--receipt", dir / "ok.json"}, key).exit_code == 0);
    CHECK(exists(marker));
    struct stat st {};
    REQUIRE(::stat((dir / "ok.json").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    check_valid(dir / "ok.json");
    const Run by_fd = run({"/usr/bin/sh", "-c",
                           "exec 7>'" + dir / "fd.json" + "'; exec '" + binary("AASM_LAUNCH") + "' --receipt-fd 7 " +
                               "--receipt-key-file '" + key_file(dir) + "' '" + plan + "' -- '" + binary("AASM_PROBE") +
                               "' exit 0"});
    INFO(by_fd.err);
    CHECK(by_fd.exit_code == 0);
    check_valid(dir / "fd.json");
  }
}

// The receipt is open while the command runs, in a directory the command may
// write: an unnamed file (O_TMPFILE) there gives it no name to write to or
// rename another file over.
TEST_CASE("receipt file: a command that can write beside the receipt finds nothing of it to forge") {
  TempDir dir;
  const std::string forge =
      "ls -a . > listing; for f in r.json.tmp.* r.json; do [ -e \"$f\" ] && echo \"found $f\"; done; "
      "printf '{\"forged\":1}' > forged; for f in r.json.tmp.*; do [ -e \"$f\" ] && mv forged \"$f\"; done; echo done";
  const Run r = launch_with_receipt(dir, "r", plan_of(dir, "forge"), {"/usr/bin/sh", "-c", forge});
  INFO(r.err);
  CHECK_RUN(r, 0, "done\n");
  CHECK_FALSE(contains(read_file(dir / "r.json"), "forged"));
  check_valid(dir / "r.json");

  SUBCASE("control: the command could write there: its listing and its would-be forgery exist") {
    CHECK(exists(dir / "listing"));
    CHECK(read_file(dir / "forged") == "{\"forged\":1}");
  }
}

// ---------------------------------------------------------------- redaction

TEST_CASE("receipt redaction: no argument, environment value or cwd; keyed digests compare within one key") {
  TempDir dir;
  const std::string plan = cwd_plan_of(dir, "redact");
  const std::string secret = "s3cret-argument-value";
  REQUIRE(launch_with_receipt(dir, "one", plan, probe_args({"exit", "0"})).exit_code == 0);
  REQUIRE(launch_with_receipt(dir, "two", plan, {"/usr/bin/env", "--", binary("AASM_PROBE"), "exit", "0"}).exit_code == 0);
  REQUIRE(launch_with_receipt(dir, "three", plan, {binary("AASM_PROBE"), "write", dir / secret}).exit_code == 0);
  const std::string text = read_file(dir / "three.json");
  CHECK_FALSE(contains(text, secret));
  CHECK_FALSE(contains(text, dir.path()));  // neither the cwd nor a resolved path
  const json one = receipt_of(dir, "one"), two = receipt_of(dir, "two"), three = receipt_of(dir, "three");
  CHECK(three["command"]["arguments"] == 3);
  // Under one key: equal values, equal digests.
  CHECK(one["cwd_hmac"] == three["cwd_hmac"]);
  CHECK(one["command"]["argument_hmacs"][0] == two["command"]["argument_hmacs"][2]);
  CHECK(one["redaction"]["key"] == "caller");
  // A dictionary of SHA-256s does not find them: `printf /usr | sha256sum` is not the digest.
  const Run plain = run({"/usr/bin/sh", "-c", "printf %s /usr | sha256sum"});
  for (const json& path : one["paths"]) CHECK_FALSE(contains(plain.out, path["resolved_hmac"].get<std::string>()));

  SUBCASE("control: under another key the same values digest differently") {
    TempDir other;
    write_file(other / "receipt.key", std::string(32, 'o'), 0600);
    REQUIRE(launch_with_receipt(other, "one", cwd_plan_of(other, "redact"), probe_args({"exit", "0"})).exit_code == 0);
    const json under_other = receipt_of(other, "one");
    CHECK(under_other["command"]["argument_hmacs"][0] != one["command"]["argument_hmacs"][0]);
    CHECK(under_other["redaction"]["key_id"] != one["redaction"]["key_id"]);
  }
}

TEST_CASE("receipt redaction: a key file others can read is refused") {
  TempDir dir;
  write_file(dir / "open.key", std::string(32, 'k'), 0644);
  const Run r = run({binary("AASM_LAUNCH"), "--receipt", dir / "r.json", "--receipt-key-file", dir / "open.key",
                     plan_of(dir, "open-key"), "--", binary("AASM_PROBE"), "exit", "0"});
  CHECK(r.exit_code == 125);
  CHECK(contains(r.err, "chmod 600"));

  SUBCASE("control: mode 0600 is accepted") {
    write_file(dir / "closed.key", std::string(32, 'k'), 0600);
    CHECK(run({binary("AASM_LAUNCH"), "--receipt", dir / "r.json", "--receipt-key-file", dir / "closed.key",
               plan_of(dir, "closed-key"), "--", binary("AASM_PROBE"), "exit", "0"})
              .exit_code == 0);
  }
}

// ---------------------------------------------------------------- verify

namespace {

// The parsed document as the canonical writer's value, to reseal an edit.
aasm::json::Value value_of(const json& j) {
  if (j.is_boolean()) return aasm::json::Value(j.get<bool>());
  if (j.is_number_integer()) return aasm::json::Value(j.get<int64_t>());
  if (j.is_string()) return aasm::json::Value(j.get<std::string>());
  if (j.is_array()) {
    aasm::json::Array out;
    for (const json& item : j) out.push_back(value_of(item));
    return out;
  }
  if (j.is_object()) {
    aasm::json::Object out;
    for (const auto& [name, member] : j.items()) out.emplace(name, value_of(member));
    return out;
  }
  return aasm::json::Value();
}

// Reseals `receipt` as a forger would, writes it to PATH and verifies it
// (--json): the names of the rules it breaks, and whether the seal holds.
struct Verdict {
  bool seal = false;
  std::vector<std::string> broken;
};

Verdict verify_edited(const TempDir& dir, json receipt, bool reseal = true) {
  if (reseal) {
    receipt.erase("seal");
    receipt["seal"] = {{"algorithm", "sha256-jcs"}, {"sha256", aasm::receipt_seal(value_of(receipt))}};
  }
  const std::string path = dir / "edited.json";
  write_file(path, receipt.dump());
  const Run r = run({binary("AASMC"), "receipt", "verify", "--json", path});
  INFO(r.out, r.err);
  const json report = json::parse(r.out);
  Verdict v{report["seal"]["ok"].get<bool>(), {}};
  for (const json& rule : report["rules"]["each"])
    if (!rule["ok"].get<bool>()) v.broken.push_back(rule["rule"]);
  CHECK(r.exit_code == (v.seal && v.broken.empty() ? 0 : 1));
  return v;
}

json& control_in(json& receipt, const std::string& domain) {
  for (json& c : receipt["controls"])
    if (c["domain"] == domain) return c;
  throw std::runtime_error("no control " + domain);
}

}  // namespace

TEST_CASE("receipt verify: each rule catches its overclaim in a resealed, hand-edited real receipt") {
  TempDir dir;
  REQUIRE(launch_with_receipt(dir, "real", plan_of(dir, "real"), probe_args({"exit", "0"})).exit_code == 0);
  const std::string plan = compile_spec(dir, "missing", "  filesystem:\n    read: {allow: [\"/usr\", \"" + probe_dir() +
                                                            "\", \"" + dir.path() + "/missing\"]}\n");
  REQUIRE(launch_with_receipt(dir, "refused", plan, probe_args({"exit", "0"})).exit_code == 125);
  const json real = receipt_of(dir, "real"), refused = receipt_of(dir, "refused");

  SUBCASE("control: the real receipts, resealed unchanged, pass") {
    const Verdict v = verify_edited(dir, real), w = verify_edited(dir, refused);
    CHECK(v.seal);
    CHECK(v.broken.empty());
    CHECK(w.seal);
    CHECK(w.broken.empty());
  }
  SUBCASE("an edit without a new seal breaks the seal") {
    json edited = real;
    edited["command"]["exit_code"] = 7;
    const Verdict v = verify_edited(dir, edited, false);
    CHECK_FALSE(v.seal);
    CHECK(v.broken.empty());
  }
  SUBCASE("a domain removed") {
    json edited = real;
    json kept = json::array();
    for (const json& c : edited["controls"])
      if (c["domain"] != "network_bind") kept.push_back(c);
    edited["controls"] = kept;
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"every domain present"});
  }
  SUBCASE("file_execute claimed enforced on its asserted basis") {
    json edited = real;
    control_in(edited, "file_execute")["achieved"] = "enforced";
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"no enforced without a measured basis of its own"});
  }
  SUBCASE("file_execute claimed enforced on the read check's basis") {
    json edited = real;
    control_in(edited, "file_execute")["achieved"] = "enforced";
    control_in(edited, "file_execute")["basis"] = control_in(edited, "file_read")["basis"];
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"no enforced without a measured basis of its own"});
  }
  SUBCASE("a control enforced in a launch that never started") {
    json edited = refused;
    control_in(edited, "file_read")["achieved"] = "enforced";
    control_in(edited, "file_read")["basis"] = "measured: landlock_restrict_self returned 0";
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"nothing enforced when the launch did not happen"});
  }
  SUBCASE("a degraded control while the receipt claims full") {
    json edited = real;
    control_in(edited, "file_write")["achieved"] = "partial";
    const std::vector<std::string> broken = verify_edited(dir, edited).broken;
    CHECK(broken == std::vector<std::string>{"a degraded control cannot also claim full enforcement"});
  }
  SUBCASE("the timeline out of order") {
    json edited = real;
    edited["timeline"]["exit"] = edited["timeline"]["exec"].get<int64_t>() - 1;
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"timeline in order"});
  }
  SUBCASE("a withheld field not listed") {
    json edited = real;
    json listed = json::array();
    for (const json& field : edited["withheld"])
      if (field != "cwd") listed.push_back(field);
    edited["withheld"] = listed;
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"every withheld field listed"});
  }
  SUBCASE("the cwd itself added back") {
    json edited = real;
    edited["cwd"] = dir.path();
    CHECK(verify_edited(dir, edited).broken == std::vector<std::string>{"every withheld field listed"});
  }
}
