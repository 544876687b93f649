// Issue 11, "no surprise in the semantics": what a policy means where a new
// user would guess otherwise. Each test fails on the code before the issue
// and has its control (the same step under a plan without the control, or
// with the relevant opt-in, succeeds).
//
// Safety: files are made in the test's temp dirs; the uid call keeps every
// id as it is (what glibc's posix_spawn does for GNU make).
#include <signal.h>

#include "harness.h"

using namespace aasm::ktest;

namespace {

constexpr int kKilled = 128 + SIGSYS;  // aasm-launch: 128 + the signal

// Reads the system and the probe; writes only rw/; secret/ is in no rule.
std::string write_only_tree(const TempDir& dir) {
  return "  filesystem:\n"
         "    read: {allow: " + flow_list({"/usr", "/etc", probe_dir()}) + "}\n"
         "    write: {allow: " + flow_list({dir / "rw"}) + "}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n";
}

// The coding-agent policy of the issue: the deny groups, `default: kill` so
// that a denied call shows as SIGSYS, `keep` capabilities kept.
std::string deny_groups(const std::string& keep = "") {
  return "  syscalls:\n    default: kill\n    deny: [\"@mount\", \"@privileged\", \"@debug\", \"@kernel\"]\n" +
         (keep.empty() ? std::string() : "  isolation:\n    linux_capabilities: [" + keep + "]\n");
}

}  // namespace

// gcc: "Cannot create temporary file in /tmp/" with /tmp writable, not readable.
TEST_CASE("semantics: a tree that may be written may be read") {
  TempDir dir;
  make_dir(dir / "rw");
  make_dir(dir / "secret");
  write_file(dir / "rw/file", "written\n");
  write_file(dir / "secret/file", "secret\n");
  const std::string plan = compile_spec(dir, "write-only", write_only_tree(dir));
  CHECK_RUN(probe(plan, {"read", dir / "rw/file"}), 0, "OK\n");
  CHECK_RUN(probe(plan, {"write", dir / "rw/new"}), 0, "OK\n");
  CHECK_RUN(probe(plan, {"read", dir / "rw/new"}), 0, "OK\n");
  // Nothing beyond the written tree.
  CHECK_RUN(probe(plan, {"read", dir / "secret/file"}), 1, "EACCES\n");

  SUBCASE("control: the secret tree is readable without the filesystem node") {
    const std::string open = compile_spec(dir, "open", "  resources:\n    pids: 64\n");
    CHECK_RUN(probe(open, {"read", dir / "secret/file"}), 0, "OK\n");
  }
}

// GNU make's recipe child: glibc's posix_spawn with POSIX_SPAWN_RESETIDS
// calls setresuid(-1, <own uid>, -1), which @privileged killed.
TEST_CASE("semantics: a uid call that keeps the ids passes @privileged unless CAP_SETUID is kept") {
  TempDir dir;
  CHECK_RUN(probe(compile_spec(dir, "deny-groups", deny_groups()), {"setresuid-keep"}), 0, "OK\n");
  const std::string every_allow_group =
      "  syscalls:\n    default: \"errno:EPERM\"\n"
      "    allow: [\"@startup\", \"@file-read\", \"@file-write\", \"@process\", \"@signal\", \"@memory\","
      " \"@time\", \"@ipc\", \"@network\"]\n";
  CHECK_RUN(probe(compile_spec(dir, "allow-groups", every_allow_group), {"setresuid-keep"}), 0, "OK\n");

  SUBCASE("control: with CAP_SETUID kept, @privileged denies it and @process no longer allows it") {
    CHECK_RUN(probe(compile_spec(dir, "deny-kept", deny_groups("CAP_SETUID")), {"setresuid-keep"}), kKilled, "");
    CHECK_RUN(probe(compile_spec(dir, "allow-kept",
                                 every_allow_group + "  isolation:\n    linux_capabilities: [CAP_SETUID]\n"),
                    {"setresuid-keep"}),
              1, "EPERM\n");
  }
}

TEST_CASE("semantics: GNU make runs its recipes under the deny groups and under an allowlist of every allow group") {
  TempDir dir;
  write_file(dir / "Makefile", "all:\n\tmkdir -p out && touch out/made && echo made\n");
  const std::string allow_groups = compile_spec(
      dir, "allow-groups",
      "  syscalls:\n    default: \"errno:EPERM\"\n"
      "    allow: [\"@startup\", \"@file-read\", \"@file-write\", \"@process\", \"@signal\", \"@memory\","
      " \"@time\", \"@ipc\", \"@network\"]\n");
  for (const std::string& plan : {compile_spec(dir, "deny-groups", deny_groups()), allow_groups}) {
    CAPTURE(plan);
    const Run r = launch(plan, {"/usr/bin/make", "-C", dir.path(), "-B"});
    INFO("stderr: ", r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("made\n") != std::string::npos);
  }

  SUBCASE("control: the same make under `deny: [setresuid]` fails, so make does call it") {
    const Run r = launch(compile_spec(dir, "deny-setresuid", "  syscalls:\n    deny: [setresuid]\n"),
                         {"/usr/bin/make", "-C", dir.path(), "-B"});
    CHECK(r.exit_code != 0);
  }
}

// docs/policy-language.md, "Cascades": a plan that constrains anything, even
// only resources, runs.
TEST_CASE("semantics: a resources-only plan runs, under its pids ceiling") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "pids-only", "  resources:\n    pids: 64\n");
  CHECK_RUN(launch(plan, {"/usr/bin/sh", "-c", "echo ran"}), 0, "ran\n");
  // The ceiling holds: 100 sleepers cannot all start under 64 tasks.
  const std::string bomb = "i=0; while [ $i -lt 100 ]; do /usr/bin/sleep 2 & i=$((i+1)); done 2>/dev/null; wait";
  const Run r = launch(plan, {"/usr/bin/sh", "-c", bomb});
  INFO("stderr: ", r.err);
  CHECK(r.err.find("the task ceiling was reached") != std::string::npos);

  SUBCASE("control: under a ceiling of 256 the same loop starts every sleeper") {
    const Run c = launch(compile_spec(dir, "pids-256", "  resources:\n    pids: 256\n"), {"/usr/bin/sh", "-c", bomb});
    CHECK(c.err.find("the task ceiling was reached") == std::string::npos);
  }
}

TEST_CASE("semantics: --dry-run states a filesystem verb no document constrains") {
  TempDir dir;
  const std::string reads = compile_spec(dir, "reads", "  filesystem:\n    read: {allow: [\"/usr\"]}\n");
  const Run r = run({binary("AASM_LAUNCH"), "--dry-run", reads});
  INFO(r.out);
  CHECK(r.out.find("file_write       unconstrained") != std::string::npos);
  CHECK(r.out.find("file_execute     unconstrained") != std::string::npos);

  SUBCASE("control: all three verbs confined, nothing is unconstrained") {
    const std::string all = compile_spec(
        dir, "all", "  filesystem:\n    read: {allow: [\"/usr\"]}\n    write: {allow: []}\n    execute: {allow: []}\n");
    CHECK(run({binary("AASM_LAUNCH"), "--dry-run", all}).out.find("unconstrained") == std::string::npos);
  }
}
