// The review verbs on a checked-in plan (issue 16), run as the real aasmc over
// testdata/review: `digest` prints the trailer's identity; `verify` says fresh,
// or stale naming the changed document, toolchain or targets; `diff` marks
// every widening and fails --fail-on-widening on it, not on a narrowing;
// `show --textconv` gives a readable `git diff` of two plans; and the same
// sources compile to the same bytes from another directory, locale, TZ,
// umask and file order.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

#include "harness.h"
#include "plan/plan.h"

namespace aasm::ktest {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kCascade = {"org.yaml", "team.yaml", "agent.yaml", "agent-extra.yaml"};

std::string review_data() {
  const char* dir = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(dir != nullptr, "AASM_TESTDATA is not set");
  return std::string(dir) + "/review";
}

// The review cascade copied into `dir`, so a test may edit it.
void copy_cascade(const TempDir& dir) {
  for (const std::string& name : kCascade) write_file(dir / name, read_file(review_data() + "/" + name));
}

Run aasmc(const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> argv = {binary("AASMC")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, cwd);
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Compiles the cascade in `dir` (files in `order`) to dir/NAME.
void compile_in(const TempDir& dir, const std::string& name, const std::vector<std::string>& order = kCascade) {
  const Run r = aasmc(with({"compile", "-o", name}, order), dir.path());
  INFO("stderr:\n", r.err);
  REQUIRE(r.exit_code == 0);
}

void replace_in(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = read_file(path);
  const size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  text.replace(at, from.size(), to);
  write_file(path, text);
}

std::vector<uint8_t> bytes_of(const std::string& path) {
  const std::string text = read_file(path);
  return {text.begin(), text.end()};
}

TEST_CASE("digest prints the trailer as sha256:HEX, which is not sha256sum of the file") {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "plan.bin");
  const Run r = aasmc({"digest", "plan.bin"}, dir.path());
  REQUIRE(r.exit_code == 0);
  const std::vector<uint8_t> bytes = bytes_of(dir / "plan.bin");
  CHECK(r.out == "sha256:" + to_hex(plan::plan_digest(bytes)) + "\n");
  CHECK(r.out != "sha256:" + to_hex(sha256(bytes)) + "\n");
  // The trailer is the SHA-256 of everything before it.
  CHECK(plan::plan_digest(bytes) == sha256(std::span(bytes).first(bytes.size() - 32)));
  const Run shown = aasmc({"show", "plan.bin"}, dir.path());
  CHECK(shown.out.starts_with("plan format 1, identity " + r.out));
  // A damaged plan has no identity to pin.
  std::string damaged = read_file(dir / "plan.bin");
  damaged[40] ^= 1;
  write_file(dir / "damaged.bin", damaged);
  const Run bad = aasmc({"digest", "damaged.bin"}, dir.path());
  CHECK(bad.exit_code == 1);
  CHECK(contains(bad.err, "digest"));
  CHECK(aasmc({"digest"}, dir.path()).exit_code == 2);
  // As a textconv driver, show turns a damaged plan into text rather than failing git diff.
  const Run textconv = aasmc({"show", "--textconv", "damaged.bin"}, dir.path());
  CHECK(textconv.exit_code == 0);
  CHECK(textconv.out.starts_with("not a valid plan: "));
  CHECK(aasmc({"show", "damaged.bin"}, dir.path()).exit_code == 1);
}

TEST_CASE("verify: fresh, then stale naming the document a one-character edit changed") {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "plan.bin");
  const Run fresh = aasmc(with({"verify", "plan.bin"}, kCascade), dir.path());
  INFO("stderr:\n", fresh.err);
  CHECK(fresh.exit_code == 0);
  CHECK(fresh.out.starts_with("fresh: plan.bin (sha256:"));

  const std::string before = to_hex(sha256(bytes_of(dir / "team.yaml")));
  replace_in(dir / "team.yaml", "memory: 1Gi", "memory: 2Gi");
  const std::string after = to_hex(sha256(bytes_of(dir / "team.yaml")));
  const Run stale = aasmc(with({"verify", "plan.bin"}, kCascade), dir.path());
  CHECK(stale.exit_code == 1);
  CHECK(stale.out.starts_with("stale: plan.bin"));
  CHECK(contains(stale.err, "team.yaml:1:1: error: document 'team-build' (team.yaml) changed: the plan was "
                            "compiled from sha256:" + before + ", the file is now sha256:" + after + " [AASM0110]"));
  // Only the edited document is named.
  CHECK_FALSE(contains(stale.err, "org-floor"));
  CHECK_FALSE(contains(stale.err, "agent-main"));

  SUBCASE("--json") {
    const Run j = aasmc(with({"verify", "plan.bin", "--json"}, kCascade), dir.path());
    CHECK(j.exit_code == 1);
    const Json report = Json::parse(j.out);
    CHECK(report["verdict"] == "stale");
    REQUIRE(report["changes"].size() == 1);
    CHECK(report["changes"][0]["id"] == "AASM0110");
    CHECK(report["changes"][0]["document"] == "team-build");
    CHECK(report["changes"][0]["plan_sha256"] == "sha256:" + before);
    CHECK(report["changes"][0]["sources_sha256"] == "sha256:" + after);
  }
  SUBCASE("SARIF: a result at the changed file, for code scanning") {
    const Run s = aasmc(with({"verify", "plan.bin", "--diagnostics-format=sarif"}, kCascade), dir.path());
    CHECK(s.exit_code == 1);
    const Json sarif = Json::parse(s.err);
    const Json& results = sarif["runs"][0]["results"];
    REQUIRE(results.size() == 1);
    CHECK(results[0]["ruleId"] == "AASM0110");
    CHECK(results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "team.yaml");
  }
}

TEST_CASE("verify: a reordering that keeps the meaning stays fresh; a missing document, other targets do not") {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "plan.bin");
  std::vector<std::string> reversed(kCascade.rbegin(), kCascade.rend());
  CHECK(aasmc(with({"verify", "plan.bin"}, reversed), dir.path()).exit_code == 0);
  std::vector<std::string> swapped = {"agent-extra.yaml", "team.yaml", "agent.yaml", "org.yaml"};
  CHECK(aasmc(with({"verify", "plan.bin"}, swapped), dir.path()).exit_code == 0);

  const Run missing = aasmc({"verify", "plan.bin", "org.yaml", "team.yaml", "agent.yaml"}, dir.path());
  CHECK(missing.exit_code == 1);
  CHECK(contains(missing.err, "document 'agent-extra' (agent-extra.yaml, sha256:"));
  CHECK(contains(missing.err, "is in the plan but not among the sources given [AASM0110]"));

  const Run arch = aasmc(with({"verify", "plan.bin", "--arch", "x86_64"}, kCascade), dir.path());
  CHECK(arch.exit_code == 1);
  CHECK(contains(arch.err, "targets: the plan was compiled for x86_64,aarch64, this verification compiles for "
                           "x86_64 (give the compile's --arch) [AASM0112]"));
}

TEST_CASE("verify: unreadable inputs exit 3, usage errors 2") {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "plan.bin");
  write_file(dir / "junk.bin", "not a plan");
  const Run junk = aasmc(with({"verify", "junk.bin"}, kCascade), dir.path());
  CHECK(junk.exit_code == 3);
  CHECK(contains(junk.err, "[AASM0114]"));
  CHECK(aasmc({"verify", "plan.bin", "nonexistent.yaml"}, dir.path()).exit_code == 3);
  CHECK(aasmc({"verify", "plan.bin"}, dir.path()).exit_code == 2);
  CHECK(aasmc(with({"verify", "plan.bin", "--bogus"}, kCascade), dir.path()).exit_code == 2);
}

// `aasmc diff OLD NEW` with the cascade edited by `edit` (on a copy) as NEW.
struct DiffOutcome {
  Run text, failing;
  Json json;
};
DiffOutcome diff_after(const std::function<void(const TempDir&)>& edit) {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "old.bin");
  edit(dir);
  compile_in(dir, "new.bin");
  DiffOutcome o;
  o.text = aasmc({"diff", "old.bin", "new.bin"}, dir.path());
  o.failing = aasmc({"diff", "old.bin", "new.bin", "--fail-on-widening"}, dir.path());
  const Run j = aasmc({"diff", "old.bin", "new.bin", "--json"}, dir.path());
  INFO("stderr:\n", j.err);
  REQUIRE(j.exit_code == 0);
  o.json = Json::parse(j.out);
  // Policies compiled on the fly give the same diff as their plans.
  const Run policies = aasmc({"diff", "old.bin", "org.yaml,team.yaml,agent.yaml,agent-extra.yaml"}, dir.path());
  CHECK(policies.out == o.text.out);
  return o;
}

TEST_CASE("diff: /usr -> / is a filesystem widening and fails --fail-on-widening") {
  const DiffOutcome o = diff_after([](const TempDir& dir) {
    replace_in(dir / "team.yaml", R"(read:
      allow: ["/usr",)", R"(read:
      allow: ["/",)");
  });
  INFO(o.text.out);
  CHECK(o.text.exit_code == 0);
  CHECK(contains(o.text.out, "WIDENING filesystem /: none -> read_file,read_dir (gained read_file,read_dir)\n"));
  // /usr keeps what it had: the rights at a path are those of every rule above it.
  CHECK_FALSE(contains(o.text.out, "filesystem /usr"));
  CHECK(o.failing.exit_code == 1);
  CHECK(o.json["widenings"].get<int>() >= 1);
}

TEST_CASE("diff: a syscall taken out of the deny list is a widening, naming the call") {
  const DiffOutcome o = diff_after([](const TempDir& dir) { replace_in(dir / "org.yaml", "deny: [ptrace, ", "deny: ["); });
  INFO(o.text.out);
  CHECK(contains(o.text.out, "WIDENING syscalls ptrace: errno:EPERM -> allow\n"));
  CHECK(o.failing.exit_code == 1);
}

TEST_CASE("diff: a new allowed syscall in an allowlist is a widening") {
  TempDir dir;
  write_file(dir / "a.yaml", read_file(review_data() + "/../policies/demo.yaml"));
  std::string text = read_file(dir / "a.yaml");
  text.replace(text.find("allow: [read,"), 13, "allow: [read, mkdirat,");
  write_file(dir / "b.yaml", text);
  const Run r = aasmc({"diff", "a.yaml", "b.yaml", "--fail-on-widening"}, dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "WIDENING syscalls mkdirat: errno:EPERM -> allow\n"));
}

// The launcher refuses a plan on an architecture it has no program for: a
// plan for fewer is narrower there, not "allow" for every call (found by
// the first-hour replay: 26 WIDENING rows for an aarch64-only plan).
TEST_CASE("diff: an architecture dropped is one narrowing targets row; one added widens") {
  TempDir dir;
  write_file(dir / "a.yaml", read_file(review_data() + "/../policies/demo.yaml"));
  REQUIRE(aasmc({"compile", "a.yaml", "-o", "both.bin"}, dir.path()).exit_code == 0);
  REQUIRE(aasmc({"compile", "a.yaml", "--arch", "aarch64", "-o", "arm.bin"}, dir.path()).exit_code == 0);
  const Run dropped = aasmc({"diff", "both.bin", "arm.bin", "--fail-on-widening"}, dir.path());
  INFO(dropped.out, dropped.err);
  CHECK(dropped.exit_code == 0);
  CHECK(dropped.out == "         targets architectures: x86_64, aarch64 -> aarch64\n1 change, 0 widenings\n");
  const Run added = aasmc({"diff", "arm.bin", "both.bin", "--fail-on-widening"}, dir.path());
  CHECK(added.exit_code == 1);
  CHECK(contains(added.out, "WIDENING targets architectures: aarch64 -> x86_64, aarch64\n"));
  CHECK_FALSE(contains(added.out, "syscalls"));
}

TEST_CASE("diff: a higher memory ceiling widens, a lower one and a narrower path do not") {
  const DiffOutcome higher = diff_after([](const TempDir& dir) { replace_in(dir / "team.yaml", "memory: 1Gi", "memory: 3Gi"); });
  INFO(higher.text.out);
  // The org's 2Gi still caps it.
  CHECK(contains(higher.text.out, "WIDENING resources memory: 1073741824 bytes -> 2147483648 bytes\n"));
  CHECK(higher.failing.exit_code == 1);

  const DiffOutcome lower = diff_after([](const TempDir& dir) {
    replace_in(dir / "team.yaml", "memory: 1Gi", "memory: 512Mi");
    replace_in(dir / "team.yaml", R"("/usr", "/etc", "${CWD}"])", R"("/usr", "${CWD}"])");
  });
  INFO(lower.text.out);
  CHECK(contains(lower.text.out, "         resources memory: 1073741824 bytes -> 536870912 bytes\n"));
  CHECK(contains(lower.text.out, "         filesystem /etc: "));
  CHECK_FALSE(contains(lower.text.out, "WIDENING"));
  CHECK(lower.failing.exit_code == 0);
  CHECK(lower.json["widenings"] == 0);
  for (const Json& change : lower.json["changes"]) CHECK(change["widening"] == false);
}

TEST_CASE("diff: the filesystem view losing a protected path or growing its tmpfs widens; a smaller tmpfs does not") {
  TempDir dir;
  const std::string profile = read_file(review_data() + "/../../profiles/coding-agent.yaml");
  write_file(dir / "old.yaml", profile);
  std::string unprotected = profile;
  const std::string hooks = R"(readonly: ["${CWD}/.git/hooks", )";
  unprotected.replace(unprotected.find(hooks), hooks.size(), "readonly: [");
  write_file(dir / "unprotected.yaml", unprotected);
  const Run r = aasmc({"diff", "old.yaml", "unprotected.yaml", "--fail-on-widening"}, dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "WIDENING filesystem view ${CWD}/.git/hooks: bind, protected"));
  CHECK(contains(r.out, " -> absent\n"));

  std::string larger = profile, smaller = profile;
  larger.replace(larger.find("tmp_size: 1Gi"), 13, "tmp_size: 2Gi");
  smaller.replace(smaller.find("tmp_size: 1Gi"), 13, "tmp_size: 512Mi");
  write_file(dir / "larger.yaml", larger);
  write_file(dir / "smaller.yaml", smaller);
  const Run grown = aasmc({"diff", "old.yaml", "larger.yaml", "--fail-on-widening"}, dir.path());
  INFO(grown.out, grown.err);
  CHECK(grown.exit_code == 1);
  CHECK(contains(grown.out, "WIDENING filesystem view /tmp: private tmpfs, 1073741824 bytes"));
  const Run shrunk = aasmc({"diff", "old.yaml", "smaller.yaml", "--fail-on-widening"}, dir.path());
  INFO(shrunk.out, shrunk.err);
  CHECK(shrunk.exit_code == 0);
  CHECK(contains(shrunk.out, "         filesystem view /tmp: private tmpfs, 1073741824 bytes"));
}

TEST_CASE("diff: the same plan twice has no change; unreadable input exits 3") {
  TempDir dir;
  copy_cascade(dir);
  compile_in(dir, "plan.bin");
  const Run same = aasmc({"diff", "plan.bin", "plan.bin", "--fail-on-widening"}, dir.path());
  CHECK(same.exit_code == 0);
  CHECK(same.out == "0 changes, 0 widenings\n");
  CHECK(aasmc({"diff", "plan.bin", "missing.bin"}, dir.path()).exit_code == 3);
  CHECK(aasmc({"diff", "plan.bin"}, dir.path()).exit_code == 2);
}

// A one-document policy pinning DIR/tool (and DIR/lib when `two`), compiled to DIR/NAME.
void compile_pins(const TempDir& dir, const std::string& name, bool two = false) {
  write_file(dir / "pins.yaml", "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: pins, tier: agent}\nspec:\n"
                                "  resources: {pids: 64}\n  filesystem:\n    pinned: [\"" + (dir / "tool") + "\"" +
                                    (two ? ", \"" + (dir / "lib") + "\"" : "") + "]\n");
  const Run r = aasmc({"compile", "pins.yaml", "-o", name}, dir.path());
  INFO("stderr:\n", r.err);
  REQUIRE(r.exit_code == 0);
}

std::string pin_line(const std::string& path) {
  const std::vector<uint8_t> bytes = bytes_of(path);
  return path + " sha256:" + to_hex(sha256(bytes)) + ", " + std::to_string(bytes.size()) + " bytes";
}

TEST_CASE("verify: a changed pinned file makes the plan stale, naming the file and both digests") {
  TempDir dir;
  write_file(dir / "tool", "#!/bin/sh\necho one\n", 0755);
  compile_pins(dir, "plan.bin");
  const Run shown = aasmc({"show", "plan.bin"}, dir.path());
  CHECK(contains(shown.out, "pinned files (the launcher re-hashes each before anything runs):\n  " + pin_line(dir / "tool") + "\n"));
  const Run shown_json = aasmc({"show", "plan.bin", "--json"}, dir.path());
  CHECK(Json::parse(shown_json.out)["pinned"][0]["path"] == dir / "tool");
  const Run fresh = aasmc({"verify", "plan.bin", "pins.yaml"}, dir.path());
  INFO("stderr:\n", fresh.err);
  CHECK(fresh.exit_code == 0);

  const std::string before = to_hex(sha256(bytes_of(dir / "tool")));
  write_file(dir / "tool", "#!/bin/sh\necho two, longer\n", 0755);
  const std::string after = to_hex(sha256(bytes_of(dir / "tool")));
  const Run stale = aasmc({"verify", "plan.bin", "pins.yaml"}, dir.path());
  CHECK(stale.exit_code == 1);
  CHECK(contains(stale.err, "plan.bin:1:1: error: pinned file " + (dir / "tool") + " changed: the plan recorded sha256:" +
                                before + " (19 bytes), the file is now sha256:" + after + " (27 bytes) [AASM0134]"));
  CHECK_FALSE(contains(stale.err, "AASM0110"));  // the policy itself did not change

  const Run j = aasmc({"verify", "plan.bin", "pins.yaml", "--json"}, dir.path());
  CHECK(j.exit_code == 1);
  const Json report = Json::parse(j.out);
  CHECK(report["verdict"] == "stale");
  REQUIRE(report["changes"].size() == 1);
  CHECK(report["changes"][0]["kind"] == "pinned");
  CHECK(report["changes"][0]["path"] == dir / "tool");
  CHECK(report["changes"][0]["plan_sha256"] == "sha256:" + before);
  CHECK(report["changes"][0]["now_sha256"] == "sha256:" + after);
  const Run sarif = aasmc({"verify", "plan.bin", "pins.yaml", "--diagnostics-format=sarif"}, dir.path());
  CHECK(Json::parse(sarif.err)["runs"][0]["results"][0]["ruleId"] == "AASM0134");

  // Gone: the recompile cannot hash it, at the entry (exit 3, as any policy that does not compile).
  REQUIRE(::unlink((dir / "tool").c_str()) == 0);
  const Run gone = aasmc({"verify", "plan.bin", "pins.yaml"}, dir.path());
  CHECK(gone.exit_code == 3);
  CHECK(contains(gone.err, "pins.yaml:7:14: error: filesystem.pinned: " + (dir / "tool") + ": does not exist"));
}

TEST_CASE("diff: a pin removed or its digest changed is a widening; a pin added is not") {
  TempDir dir;
  write_file(dir / "tool", "one\n", 0755);
  write_file(dir / "lib", "lib\n");
  compile_pins(dir, "one.bin");
  compile_pins(dir, "two.bin", true);
  const std::string lib = pin_line(dir / "lib"), tool_before = pin_line(dir / "tool");
  const Run added = aasmc({"diff", "one.bin", "two.bin", "--fail-on-widening"}, dir.path());
  INFO(added.out);
  CHECK(added.exit_code == 0);
  CHECK(contains(added.out, "         pinned " + (dir / "lib") + ": not pinned -> " + lib.substr(lib.find(' ') + 1) + "\n"));
  const Run removed = aasmc({"diff", "two.bin", "one.bin", "--fail-on-widening"}, dir.path());
  CHECK(removed.exit_code == 1);
  CHECK(contains(removed.out, "WIDENING pinned " + (dir / "lib") + ": " + lib.substr(lib.find(' ') + 1) + " -> not pinned\n"));

  write_file(dir / "tool", "two\n", 0755);
  compile_pins(dir, "changed.bin");
  const Run changed = aasmc({"diff", "one.bin", "changed.bin", "--json"}, dir.path());
  const Json report = Json::parse(changed.out);
  REQUIRE(report["changes"].size() == 1);
  CHECK(report["changes"][0]["area"] == "pinned");
  CHECK(report["changes"][0]["widening"] == true);
  CHECK(report["changes"][0]["old"] == tool_before.substr(tool_before.find(' ') + 1));
}

TEST_CASE("show --textconv gives a readable git diff of two plans") {
  TempDir dir;
  copy_cascade(dir);
  const std::string repo = dir / "repo";
  make_dir(repo);
  const std::string git = "/usr/bin/git";
  auto git_ok = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {git, "-c", "user.name=t", "-c", "user.email=t@example.invalid"};
    argv.insert(argv.end(), args.begin(), args.end());
    const Run r = run(argv, repo);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };
  git_ok({"init", "-q"});
  // The recipe of docs/cli.md#reviewing-plans-in-git.
  write_file(repo + "/.gitattributes", "*.bin diff=aasm-plan\n");
  git_ok({"config", "diff.aasm-plan.textconv", binary("AASMC") + " show --textconv"});
  compile_in(dir, "repo/plan.bin");
  git_ok({"add", "."});
  git_ok({"commit", "-q", "-m", "plan"});
  replace_in(dir / "org.yaml", "deny: [ptrace, ", "deny: [ptrace, process_vm_readv, ");
  replace_in(dir / "agent.yaml", "pass: [PATH, HOME, LANG]", "pass: [PATH, HOME]");
  compile_in(dir, "repo/plan.bin");
  const Run diff = git_ok({"diff"});
  INFO(diff.out);
  CHECK_FALSE(contains(diff.out, "Binary files"));
  CHECK(contains(diff.out, "\n+  process_vm_readv\n"));
  CHECK(contains(diff.out, "\n-    pass LANG\n"));
  CHECK(contains(diff.out, "\n-plan format 1, identity sha256:"));
}

// A shell command line for `sh -c`, each word quoted.
std::string quoted(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) line += " '" + w + "'";
  return line;
}

TEST_CASE("the same sources compile to the same bytes from another directory, locale, TZ, umask and file order") {
  TempDir first, second;
  copy_cascade(first);
  copy_cascade(second);
  compile_in(first, "plan.bin");
  const std::string reference = read_file(first / "plan.bin");
  auto compile_with = [&](const std::string& prefix, const std::vector<std::string>& order) {
    const Run r = run({"/bin/sh", "-c", prefix + " exec" + quoted(with({binary("AASMC"), "compile", "-o", "again.bin"}, order))},
                      second.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return read_file(second / "again.bin");
  };
  SUBCASE("another directory") { CHECK(compile_with("", kCascade) == reference); }
  SUBCASE("another locale") { CHECK(compile_with("LC_ALL=C.UTF-8 LANG=de_DE.UTF-8 export LC_ALL LANG;", kCascade) == reference); }
  SUBCASE("another TZ") { CHECK(compile_with("TZ=Pacific/Kiritimati; export TZ;", kCascade) == reference); }
  SUBCASE("another umask") { CHECK(compile_with("umask 077;", kCascade) == reference); }
  SUBCASE("another file order") {
    CHECK(compile_with("", {"agent-extra.yaml", "agent.yaml", "team.yaml", "org.yaml"}) == reference);
    CHECK(compile_with("", {"team.yaml", "agent-extra.yaml", "org.yaml", "agent.yaml"}) == reference);
  }
}

}  // namespace
}  // namespace aasm::ktest
