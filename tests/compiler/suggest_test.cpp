// `aasmc suggest` as a user runs it (docs/cli.md#aasmc-suggest): its exit
// codes, what it prints where, and that it never writes a policy file. The
// edits themselves are yaml_edit_test.cpp's; the loop from a deny-all start
// under the real kernel is tests/kernel/suggest_loop_test.cpp.
#include "harness.h"

namespace aasm::ktest {
namespace {

const std::string kPolicy =
    "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: mine, tier: agent}\n"
    "spec:\n  filesystem:\n    read: {allow: [\"/usr\"]}   # keep me\n  syscalls:\n    deny: [ptrace]\n";

std::string entry(const std::string& edits, const std::string& note = "") {
  return R"({"layer": "landlock_fs", "syscall": "", "rights": ["read_file"], "path": "${HOME}/.ssh/id_rsa", "port": 0,
             "count": 1, "edits": [)" + edits + R"(], "note": ")" + note + "\"}";
}
const std::string kReadEdit =
    R"({"document": "mine", "file": "mine.yaml", "list": "filesystem.read.allow", "op": "add", "item": "${HOME}/.ssh/id_rsa", "line": 0, "col": 0, "widens": "${HOME}/.ssh"})";

Run suggest(const TempDir& dir, const std::string& log, std::vector<std::string> policies = {"mine.yaml"}) {
  write_file(dir / "r.json", log);
  std::vector<std::string> argv = {binary("AASMC"), "suggest", "r.json"};
  argv.insert(argv.end(), policies.begin(), policies.end());
  return run(argv, dir.path());
}

}  // namespace

TEST_CASE("suggest: a receipt's edit is a diff on stdout, its widening a warning and a comment; the file is untouched") {
  TempDir dir;
  write_file(dir / "mine.yaml", kPolicy);
  const Run r = suggest(dir, R"({"denials": {"provenance": true, "dropped": 0, "unseen": [], "entries": [)" + entry(kReadEdit) + "]}}");
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out ==
        "--- mine.yaml\n+++ mine.yaml\n@@ -3,6 +3,7 @@\n metadata: {name: mine, tier: agent}\n spec:\n   filesystem:\n"
        "+    # aasmc suggest: adding ${HOME}/.ssh/id_rsa widens ${HOME}/.ssh: review it before applying\n"
        "-    read: {allow: [\"/usr\"]}   # keep me\n"
        "+    read: {allow: [\"/usr\", \"${HOME}/.ssh/id_rsa\"]}   # keep me\n"
        "   syscalls:\n     deny: [ptrace]\n");
  CHECK(contains(r.err, "mine.yaml:6:11: warning: adding ${HOME}/.ssh/id_rsa widens ${HOME}/.ssh: review it before applying [AASM0121]"));
  CHECK(read_file(dir / "mine.yaml") == kPolicy);

  SUBCASE("a denial log (the section, or its entries) is read the same") {
    CHECK(suggest(dir, R"({"entries": [)" + entry(kReadEdit) + "]}").out == r.out);
    CHECK(suggest(dir, "[" + entry(kReadEdit) + "]").out == r.out);
  }
  // The --denials=full report's text for the same denial.
  const std::string report = "aasm-launch: denials: 1 distinct\n"
                             "  read_file ${HOME}/.ssh/id_rsa -> EACCES  x1\n"
                             "    seen by: tracer (landlock_fs)\n"
                             "    refused by mine.yaml:6:11 (mine): filesystem.read.allow\n"
                             "    edit: add ${HOME}/.ssh/id_rsa to filesystem.read.allow in mine.yaml  "
                             "[warning: widens ${HOME}/.ssh]\n";
  SUBCASE("so is the text of the --denials=full report, which names the path, the right, the line and the edit") {
    const Run text = suggest(dir, report);
    INFO("stderr: ", text.err);
    CHECK(text.exit_code == 1);
    CHECK(text.out == r.out);
  }
  SUBCASE("and as saved with 2> FILE: the command's own lines before the report, the shell's after it, are not the report's") {
    const Run saved = suggest(dir, "fatal: could not open '${HOME}/.ssh/id_rsa': Permission denied\n"
                                   "aasm-launch: note: optional path '${CWD}/.git' does not exist here\n" +
                                       report + "exit status 128\n");
    INFO("stderr: ", saved.err);
    CHECK(saved.exit_code == 1);
    CHECK(saved.out == r.out);
    // The command could have printed that text: said, where a receipt is not.
    CHECK(contains(saved.err, "r.json:1:1: warning: these edits come from the text of a --denials report"));
    CHECK(contains(saved.err, "[AASM0126]"));
    CHECK_FALSE(contains(r.err, "AASM0126"));
  }
}

TEST_CASE("suggest: a text report's edits of every kind are read back as the report wrote them") {
  TempDir dir;
  write_file(dir / "mine.yaml", kPolicy);
  // No "refused by" line names the edit's document here: the given file the
  // edit names holds it.
  const Run r = suggest(dir, "aasm-launch: denials: 2 distinct (and 1 by design, not denials)\n"
                             "  ptrace -> EPERM  x2\n"
                             "    edit: remove ptrace from syscalls.deny at mine.yaml:8:12 (or the group there that holds "
                             "it)  [warning: widens @debug]\n"
                             "  clone3 -> ENOSYS  x1  (by design)\n"
                             "    by design, not a denial: the plan answers clone3 errno:ENOSYS\n"
                             "  execute /opt/tool -> EACCES  x1\n"
                             "    the witness did not resolve the path\n");
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "-    deny: [ptrace]\n+    deny: []\n"));
  CHECK(contains(r.err, "r.json:1:1: warning: execute /opt/tool -> EACCES: no edit: the witness did not resolve the path [AASM0125]"));
  CHECK_FALSE(contains(r.err, "clone3"));
  CHECK(read_file(dir / "mine.yaml") == kPolicy);
}

TEST_CASE("suggest: nothing to suggest exits 0; an entry without an edit is a warning with its note") {
  TempDir dir;
  write_file(dir / "mine.yaml", kPolicy);
  const Run none = suggest(dir, "[" + entry("", "the witness did not resolve the path") + "]");
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());
  CHECK(contains(none.err, "r.json:1:1: warning: read_file ${HOME}/.ssh/id_rsa: no edit: the witness did not resolve the path [AASM0125]"));
  const std::string done = R"({"document": "mine", "file": "mine.yaml", "list": "filesystem.read.allow", "op": "add", "item": "/usr", "line": 0, "col": 0, "widens": ""})";
  CHECK_RUN(suggest(dir, "[" + entry(done) + "]"), 0, "");  // already granted
  // An answer by design (clone3's ENOSYS) is no denial: not even a warning.
  const Run by_design = suggest(dir, R"([{"layer": "seccomp", "syscall": "clone3", "errno": "ENOSYS", "count": 1, "edits": [],
                                         "note": "by design, not a denial", "by_design": true}])");
  CHECK_RUN(by_design, 0, "");
  CHECK(by_design.err.empty());
}

TEST_CASE("suggest: an input it cannot use exits 3 and prints no diff") {
  TempDir dir;
  write_file(dir / "mine.yaml", kPolicy);
  SUBCASE("not JSON") {
    const Run r = suggest(dir, "not json");
    CHECK_RUN(r, 3, "");
    CHECK(contains(r.err, "r.json:1:1: error: not JSON: expected a receipt (aasm-launch --receipt) or a denial log [AASM0120]"));
  }
  SUBCASE("the text of a --denials report that names no edit (a plan without provenance): it says to give the receipt") {
    const Run r = suggest(dir, "aasm-launch: denials: 1 distinct\n"
                               "aasm-launch: denials: no provenance in this plan (compiled by an older aasmc): recompile "
                               "it to see the policy line behind each denial\n  read_file /x -> EACCES  x1\n");
    CHECK_RUN(r, 3, "");
    CHECK(contains(r.err, "r.json:1:1: error: this text of aasm-launch's --denials report names no edit aasmc suggest "
                          "can read (a plan without provenance, or no denial): run the command again with --receipt FILE "
                          "and give that file"));
  }
  SUBCASE("an edit for a document no file given holds") {
    const Run r = suggest(dir, "[" + entry(R"({"document": "org", "file": "org.yaml", "list": "syscalls.allow", "op": "add", "item": "read", "line": 0, "col": 0, "widens": ""})") + "]");
    CHECK_RUN(r, 3, "");
    CHECK(contains(r.err, "which no policy file given holds: name that file too [AASM0122]"));
  }
  SUBCASE("a line:col the file no longer has there (changed since the plan was compiled)") {
    const Run r = suggest(dir, "[" + entry(R"({"document": "mine", "file": "mine.yaml", "list": "syscalls.deny", "op": "remove", "item": "ptrace", "line": 8, "col": 3, "widens": ""})") + "]");
    CHECK_RUN(r, 3, "");
    CHECK(contains(r.err, "mine.yaml:8:3: error: syscalls.deny: no scalar starts here: was the file changed since the plan was compiled? [AASM0123]"));
  }
  SUBCASE("a policy with errors") {
    write_file(dir / "mine.yaml", "apiVersion: aasm.dev/v1\nkind: Nope\n");
    CHECK_RUN(suggest(dir, "[]"), 3, "");
  }
  CHECK(run({binary("AASMC"), "suggest", "r.json"}, dir.path()).exit_code == 2);
}

}  // namespace aasm::ktest
