// Content-pinned files (filesystem.pinned, issue 16): the launcher re-hashes
// each pinned file before anything runs and refuses a changed one, naming
// the file and both digests; a pinned command is executed from the very
// descriptor its content was checked through. Real binaries, the real
// kernel: a pinned executable replaced after the compile is refused before
// exec (its marker file never appears), and its control, the unchanged
// file, runs.
#include <nlohmann/json.hpp>

#include "harness.h"
#include "plan/plan.h"

using namespace aasm::ktest;

namespace {

// Reads the system and `dir`, writes `dir`; executes /usr and `dir` when
// `confine_execute` (then the safe default @descriptor-exec refuses
// execveat(AT_EMPTY_PATH), and the launcher goes through /proc/self/fd),
// else leaves execute to the host (execveat itself).
std::string pinned_plan(const TempDir& dir, const std::string& name, const std::string& pinned,
                        bool confine_execute = true) {
  return compile_spec(dir, name,
                      "  filesystem:\n"
                      "    read: {allow: [\"/usr\", \"/etc\", \"" + dir.path() + "\"]}\n"
                      "    write: {allow: [\"" + dir.path() + "\"]}\n" +
                          (confine_execute ? "    execute: {allow: [\"/usr\", \"" + dir.path() + "\"]}\n" : "") +
                          "    pinned: [\"" + pinned + "\"]\n");
}

std::string hex_sha256(const std::string& path) {
  const std::string text = read_file(path);
  return aasm::to_hex(aasm::sha256(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size())));
}

// Under the filesystem view: reads the system, `more` (entries ending in ", ")
// and `dir`, executes /usr and `dir`, pins `pinned` (a flow list's entries).
std::string view_plan(const TempDir& dir, const std::string& name, const std::string& more, const std::string& pinned) {
  return compile_spec(dir, name,
                      "  filesystem:\n"
                      "    read: {allow: [\"/usr\", \"/etc\", " + more + "\"" + dir.path() + "\"]}\n"
                      "    write: {allow: []}\n"
                      "    execute: {allow: [\"/usr\", \"" + dir.path() + "\"]}\n"
                      "    pinned: [" + pinned + "]\n"
                      "  syscalls: {deny: [\"@mount\"]}\n"
                      "  isolation: {filesystem_view: true}\n");
}

// The receipt at `path` is valid against schemas/receipt.schema.json.
void check_receipt_schema(const std::string& path) {
  const Run schema = run({"/usr/bin/python3", std::string(std::getenv("AASM_SOURCE_ROOT")) + "/tests/schema/check_receipt.py", path});
  INFO("schema: ", schema.out, schema.err);
  CHECK(schema.exit_code == 0);
}

// DIR/tool: a copy of touch, which makes the marker it is given.
void install_tool(const TempDir& dir) { write_file(dir / "tool", read_file("/usr/bin/touch"), 0755); }

}  // namespace

TEST_CASE("attack: a pinned executable replaced between compile and launch is refused before exec") {
  TempDir dir;
  install_tool(dir);
  const std::string plan = pinned_plan(dir, "pinned", dir / "tool");
  const std::string compiled = hex_sha256(dir / "tool");

  SUBCASE("control: the unchanged file runs, exec'd from its checked descriptor") {
    CHECK_RUN(launch(plan, {dir / "tool", dir / "marker"}), 0, "");
    CHECK(exists(dir / "marker"));
  }
  SUBCASE("replaced (a new file renamed over it): refused, naming the file and both digests; nothing ran") {
    write_file(dir / "new", "#!/bin/sh\ntouch " + (dir / "replaced-ran") + "\n", 0755);
    REQUIRE(::rename((dir / "new").c_str(), (dir / "tool").c_str()) == 0);
    const Run r = launch(plan, {dir / "tool", dir / "marker"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 125);
    CHECK(contains(r.err, "pinned_files: stale: pinned file " + (dir / "tool") + " changed: plan sha256:" + compiled +
                              ", now sha256:" + hex_sha256(dir / "tool")));
    CHECK_FALSE(exists(dir / "marker"));
    CHECK_FALSE(exists(dir / "replaced-ran"));
  }
  SUBCASE("rewritten in place, same size: refused; nothing ran") {
    std::string text = read_file(dir / "tool");
    text[text.size() / 2] ^= 1;
    write_file(dir / "tool", text, 0755);
    const Run r = launch(plan, {dir / "tool", dir / "marker"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 125);
    CHECK(contains(r.err, "pinned_files: stale: pinned file " + (dir / "tool") + " changed"));
    CHECK_FALSE(exists(dir / "marker"));
  }
  SUBCASE("gone: refused, naming it") {
    REQUIRE(::unlink((dir / "tool").c_str()) == 0);
    const Run r = run({binary("AASM_LAUNCH"), plan, "--", "/usr/bin/touch", dir / "marker"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 125);
    CHECK(contains(r.err, "pinned_files: stale: pinned file " + (dir / "tool") + " cannot be read (No such file or directory)"));
    CHECK_FALSE(exists(dir / "marker"));
  }
}

TEST_CASE("a pinned command is exec'd from its descriptor: execveat, or /proc/self/fd where the plan refuses execveat") {
  TempDir dir;
  // A script shows the path its interpreter was handed: the descriptor's, not the file's name.
  write_file(dir / "script", "#!/bin/sh\necho \"$0\"\n", 0755);
  SUBCASE("filesystem.execute confined: @descriptor-exec refuses execveat(AT_EMPTY_PATH), /proc/self/fd/N runs it") {
    const Run r = launch(pinned_plan(dir, "confined", dir / "script"), {dir / "script"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.starts_with("/proc/self/fd/"));
  }
  SUBCASE("execute left to the host: execveat(fd, \"\", AT_EMPTY_PATH) runs it") {
    const Run r = launch(pinned_plan(dir, "open-exec", dir / "script", false), {dir / "script"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.starts_with("/dev/fd/"));
  }
  SUBCASE("control: a command that is not pinned is exec'd by its path") {
    const Run r = launch(pinned_plan(dir, "other", "/usr/bin/env"), {dir / "script"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == dir / "script" + "\n");
  }
}

TEST_CASE("a pinned command runs under the filesystem view from its descriptor, through the view's /proc") {
  TempDir dir("/var/tmp");  // /tmp would be the view's private tmpfs
  write_file(dir / "script", "#!/bin/sh\necho \"$0\"\n", 0755);
  const std::string plan = view_plan(dir, "view", "\"/proc\", ", "\"" + (dir / "script") + "\", \"/usr/bin/dash\"");
  // From inside the view: its working directory must be a tree the view binds.
  const std::string launcher = binary("AASM_LAUNCH");
  const Run script = run({launcher, plan, "--", dir / "script"}, dir.path());
  INFO("stderr: ", script.err);
  CHECK(script.exit_code == 0);
  CHECK(script.out.starts_with("/proc/self/fd/"));
  const Run dash = run({launcher, plan, "--", "/usr/bin/dash", "-c", "echo ran"}, dir.path());
  INFO("stderr: ", dash.err);
  CHECK(dash.exit_code == 0);
  CHECK(dash.out == "ran\n");

  SUBCASE("a view without /proc, whose plan refuses execveat: refused before anything runs, naming the fix") {
    const std::string no_proc = view_plan(dir, "view-no-proc", "", "\"/usr/bin/dash\"");
    const Run refused = run({launcher, no_proc, "--", "/usr/bin/dash", "-c", "touch " + (dir / "ran")}, dir.path());
    CHECK(refused.exit_code == 125);
    CHECK(contains(refused.err, "pinned_files: the command /usr/bin/dash is pinned"));
    CHECK(contains(refused.err, "add /proc to filesystem.read"));
    CHECK_FALSE(exists(dir / "ran"));
    // Control: a command that is not pinned runs under the same plan.
    CHECK_RUN(run({launcher, no_proc, "--", dir / "script"}, dir.path()), 0, dir / "script" + "\n");
  }
}

TEST_CASE("pinned files: --dry-run prints each as re-hashed here, the receipt records each as checked") {
  TempDir dir;
  install_tool(dir);
  const std::string plan = pinned_plan(dir, "pinned", dir / "tool");
  const std::string launcher = binary("AASM_LAUNCH");
  const Run fresh = run({launcher, "--dry-run", plan});
  INFO("stdout: ", fresh.out, "\nstderr: ", fresh.err);
  CHECK(fresh.exit_code == 0);
  CHECK(contains(fresh.out, "pinned files (re-hashed here):\n  " + (dir / "tool") + " sha256:" + hex_sha256(dir / "tool")));
  CHECK(contains(fresh.out, " bytes: unchanged\n"));
  CHECK(contains(fresh.out, "pinned_files"));

  const Run ran = run({launcher, "--receipt", dir / "receipt.json", plan, "--", dir / "tool", dir / "marker"});
  INFO("stderr: ", ran.err);
  REQUIRE(ran.exit_code == 0);
  const nlohmann::json receipt = nlohmann::json::parse(read_file(dir / "receipt.json"));
  REQUIRE(receipt.at("pinned").size() == 1);
  CHECK(receipt["pinned"][0]["path"] == dir / "tool");
  CHECK(receipt["pinned"][0]["sha256"] == "sha256:" + hex_sha256(dir / "tool"));
  CHECK(receipt["pinned"][0]["checked"] == "unchanged (the command, exec'd from this descriptor)");
  bool control_found = false;
  for (const nlohmann::json& c : receipt["controls"])
    if (c["domain"] == "pinned_files") {
      control_found = true;
      CHECK(c["achieved"] == "enforced");
      CHECK(c["basis"].get<std::string>().starts_with("measured: "));
    }
  CHECK(control_found);
  check_receipt_schema(dir / "receipt.json");

  write_file(dir / "tool", "#!/bin/sh\nexit 0\n", 0755);
  const Run stale = run({launcher, "--dry-run", plan});
  CHECK(stale.exit_code == 125);
  CHECK(contains(stale.out, "bytes: CHANGED: now sha256:" + hex_sha256(dir / "tool")));
  CHECK(contains(stale.out, "verdict: the launch would be refused: pinned_files: stale: pinned file " + (dir / "tool")));
  // A refused launch's receipt records which pin changed, and that nothing started.
  const Run refused = run({launcher, "--receipt", dir / "refused.json", plan, "--", dir / "tool"});
  CHECK(refused.exit_code == 125);
  const nlohmann::json r = nlohmann::json::parse(read_file(dir / "refused.json"));
  CHECK(r["pinned"][0]["checked"] == "CHANGED: now sha256:" + hex_sha256(dir / "tool") + ", 17 bytes");
  CHECK(r["command"]["outcome"] == "not started");
  check_receipt_schema(dir / "refused.json");
}
