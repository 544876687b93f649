// frontend/yaml_edit: the edits `aasmc suggest` makes keep the text around
// them byte for byte (comments, quoting, flow or block style), and the diff
// it prints is the edit. Each case states the whole expected text.
#include <doctest/doctest.h>

#include <llvm/Support/MemoryBuffer.h>

#include "frontend/yaml_edit.h"
#include "frontend/yaml_tree.h"

using namespace aasmc;

namespace {

struct Edited {
  std::string text;  // after the edits
  std::string diff;
  std::vector<EditPlan::Note> notes;
};

Edited edit(const std::string& text, const std::vector<PolicyEdit>& edits) {
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const unsigned id = sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "p.yaml"), llvm::SMLoc());
  std::vector<YamlDocument> docs = load_yaml_documents(id, diags);
  REQUIRE(docs.size() == 1);
  const llvm::StringRef buffer = sources.getMemoryBuffer(id)->getBuffer();
  const EditPlan plan = plan_policy_edits(buffer, docs[0], edits);
  return {apply_text_edits(buffer, plan.changes), unified_diff("p.yaml", buffer, plan.changes), plan.notes};
}

PolicyEdit add(const std::string& list, const std::string& item, const std::string& widens = "") {
  return {list, "add", item, 0, 0, widens};
}

const std::string kHead = "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: a, tier: agent}\n";

}  // namespace

TEST_CASE("yaml_edit: add to a flow list and a block list keeps comments and quoting") {
  const std::string text = kHead +
                           "spec:\n"
                           "  filesystem:\n"
                           "    read:\n"
                           "      allow: [\"/usr\", \"/etc\"]   # system\n"
                           "    write:\n"
                           "      allow:\n"
                           "        - /tmp   # scratch\n"
                           "  # end\n";
  const Edited e = edit(text, {add("filesystem.read.allow", "${HOME}/.gitconfig"), add("filesystem.write.allow", "${CWD}"),
                               add("filesystem.read.allow", "/usr"), add("filesystem.write.allow", "out")});
  CHECK(e.text == kHead +
                      "spec:\n"
                      "  filesystem:\n"
                      "    read:\n"
                      "      allow: [\"/usr\", \"/etc\", \"${HOME}/.gitconfig\"]   # system\n"
                      "    write:\n"
                      "      allow:\n"
                      "        - /tmp   # scratch\n"
                      "        - \"${CWD}\"\n"
                      "        - out\n"
                      "  # end\n");
  CHECK(e.notes.empty());
  CHECK(e.diff ==
        "--- p.yaml\n+++ p.yaml\n"
        "@@ -4,8 +4,10 @@\n"
        " spec:\n"
        "   filesystem:\n"
        "     read:\n"
        "-      allow: [\"/usr\", \"/etc\"]   # system\n"
        "+      allow: [\"/usr\", \"/etc\", \"${HOME}/.gitconfig\"]   # system\n"
        "     write:\n"
        "       allow:\n"
        "         - /tmp   # scratch\n"
        "+        - \"${CWD}\"\n"
        "+        - out\n"
        "   # end\n");
}

TEST_CASE("yaml_edit: missing lists are created beneath the deepest existing key, in its style") {
  SUBCASE("block parent") {
    const Edited e = edit(kHead + "spec:\n  filesystem:\n    read: {allow: []}\n  network:\n    outbound: none\n",
                          {add("filesystem.write.allow", "${CWD}"), add("syscalls.allow", "read"),
                           add("filesystem.read.allow", "/usr")});
    CHECK(e.text == kHead +
                        "spec:\n  filesystem:\n    read: {allow: [/usr]}\n    write:\n      allow: [\"${CWD}\"]\n"
                        "  network:\n    outbound: none\n  syscalls:\n    allow: [read]\n");
  }
  SUBCASE("flow parent") {
    const Edited e = edit(kHead + "spec: {filesystem: {read: {allow: [/usr]}}}\n", {add("filesystem.execute.allow", "/usr/bin/git")});
    CHECK(e.text == kHead + "spec: {filesystem: {read: {allow: [/usr]}, execute: {allow: [/usr/bin/git]}}}\n");
  }
}

TEST_CASE("yaml_edit: remove, set and change at line:col; a group gives way to its other members") {
  const std::string text = kHead +
                           "spec:\n"
                           "  syscalls:\n"
                           "    deny: [sethostname, \"@debug\", reboot]\n"
                           "    rules:\n"
                           "      - {syscall: kill, action: errno:EPERM}\n"
                           "  network:\n"
                           "    outbound: none\n";
  const Edited e = edit(text, {{"syscalls.deny", "remove", "sethostname", 6, 12, "@privileged"},
                               {"syscalls.deny", "remove", "ptrace", 6, 25, "@debug"},
                               {"syscalls.rules", "change", "kill", 8, 33, ""},
                               {"network.outbound", "set", "{allow: [tcp:443]}", 10, 15, "the network"},
                               {"network.outbound", "set", "{allow: [tcp:80]}", 10, 15, "the network"}});
  CHECK(e.text == kHead +
                      "spec:\n"
                      "  syscalls:\n"
                      "    # aasmc suggest: removing sethostname widens @privileged: review it before applying\n"
                      "    # aasmc suggest: removing ptrace widens @debug: review it before applying\n"
                      "    deny: [\"process_vm_readv\", \"process_vm_writev\", \"kcmp\", \"pidfd_getfd\", \"process_madvise\", "
                      "\"process_mrelease\", \"personality\", \"lookup_dcookie\", reboot]\n"
                      "    rules:\n"
                      "      - {syscall: kill, action: allow}\n"
                      "  network:\n"
                      "    # aasmc suggest: setting network.outbound widens the network: review it before applying\n"
                      "    outbound: {allow: [\"tcp:443\", \"tcp:80\"]}\n");
  CHECK(e.notes.size() == 3);
}

TEST_CASE("yaml_edit: what is already there, or has no place, changes nothing") {
  const std::string text = kHead + "spec:\n  filesystem:\n    read:\n      allow:\n        - /usr\n        - /etc\n";
  CHECK(edit(text, {add("filesystem.read.allow", "/usr")}).diff.empty());
  const Edited stale = edit(text, {{"syscalls.deny", "remove", "ptrace", 40, 3, ""}});
  CHECK(stale.diff.empty());
  REQUIRE(stale.notes.size() == 1);
  CHECK(stale.notes[0].kind == EditPlan::Note::Kind::kNoPlace);
  const Edited block = edit(text, {{"filesystem.read.allow", "remove", "/etc", 9, 11, ""}});
  CHECK(block.text == kHead + "spec:\n  filesystem:\n    read:\n      allow:\n        - /usr\n");
  const Edited emptied = edit(kHead + "spec:\n  syscalls:\n    deny:\n      - ptrace   # debuggers\n  # end\n",
                              {{"syscalls.deny", "remove", "ptrace", 7, 9, ""}});
  CHECK(emptied.text == kHead + "spec:\n  syscalls:\n    deny: []\n  # end\n");
}

TEST_CASE("yaml_edit: a last line without its newline gets one, once, and the diff says so") {
  const std::string text = kHead + "spec:\n  filesystem:\n    read:\n      allow:\n        - /usr";
  const Edited e = edit(text, {add("filesystem.read.allow", "/etc"), add("filesystem.write.allow", "/tmp")});
  CHECK(e.text == kHead + "spec:\n  filesystem:\n    read:\n      allow:\n        - /usr\n        - /etc\n    write:\n      allow: [/tmp]\n");
  CHECK(e.diff ==
        "--- p.yaml\n+++ p.yaml\n@@ -5,4 +5,7 @@\n   filesystem:\n     read:\n       allow:\n"
        "-        - /usr\n\\ No newline at end of file\n+        - /usr\n+        - /etc\n+    write:\n+      allow: [/tmp]\n");
}

TEST_CASE("yaml_edit: a group a name list cannot stand for is left as it is, with a comment to do it by hand") {
  // @privileged holds iopl, which aarch64 lacks: its names written out would
  // not compile for every target, and dropping them would widen x86_64.
  const std::string text = kHead + "spec:\n  syscalls:\n    deny: [\"@privileged\"]\n";
  const Edited e = edit(text, {{"syscalls.deny", "remove", "sethostname", 6, 12, "@privileged"}});
  CHECK(e.text == kHead +
                      "spec:\n  syscalls:\n"
                      "    # aasmc suggest: removing sethostname widens @privileged: review it before applying\n"
                      "    # aasmc suggest: by hand: @privileged here denies sethostname; some of its members exist only on "
                      "some architectures, so write out its other members by hand (aasmc groups)\n"
                      "    deny: [\"@privileged\"]\n");
  REQUIRE(e.notes.size() == 2);
  CHECK(e.notes[1].kind == EditPlan::Note::Kind::kByHand);

  SUBCASE("an allowed call some target lacks is added, with a warning") {
    const Edited a = edit(kHead + "spec:\n  syscalls:\n    allow: [read]\n", {add("syscalls.allow", "readlink")});
    CHECK(a.text == kHead + "spec:\n  syscalls:\n    allow: [read, readlink]\n");
    REQUIRE(a.notes.size() == 1);
    CHECK(a.notes[0].message == "readlink does not exist on aarch64: compile with --arch for the targets that have it");
  }
}
