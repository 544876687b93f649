// What `aasmc explain` and docs/conditions.md print as a condition - the
// normal form of a rule on a target - is itself a condition that compiles
// back to the same normal form, so to the same program (the lowering reads
// nothing else): over every rule of every policy in testdata/, the rules the
// compiler writes for network, IPC and process-creation controls, and every
// rule of every group, on every target.
#include <dirent.h>
#include <doctest/doctest.h>
#include <llvm/Support/MemoryBuffer.h>
#include <sys/stat.h>

#include <algorithm>

#include "backend/socket_rules.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"
#include "middle/condition_normalize.h"
#include "tables/syscall_groups.h"

namespace aasmc {
namespace {

std::vector<Target> targets() { return {all_targets().begin(), all_targets().end()}; }

// testdata/**/*.yaml but the policies that must be refused.
void yaml_files(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  REQUIRE_MESSAGE(d != nullptr, dir);
  while (dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name == "." || name == ".." || name == "broken") continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      yaml_files(path, out);
    else if (name.ends_with(".yaml"))
      out.push_back(path);
  }
  ::closedir(d);
}

// A printed normal form longer than a `when:` may be (kMaxConditionBytes:
// the socket rule for `outbound: none` prints some 5 KB) is checked a
// disjunct at a time: each reads back as that conjunct.
void reads_back(const NormalizedCondition& normal, const std::string& syscall, const Target& target,
                const std::string& printed) {
  if (printed.size() > kMaxConditionBytes) {
    for (const Conjunct& conj : normal.disjuncts) {
      const NormalizedCondition one{{conj}};
      reads_back(one, syscall, target, print_condition(one, syscall, target));
    }
    return;
  }
  CAPTURE(printed);
  ConditionError error;
  auto back = compile_condition(printed, syscall, target, error);
  REQUIRE_MESSAGE(back, error.message, " at ", error.offset);
  CHECK(*back == normal);
}

// Both printings: with the target's argument names, and without a target
// (names that differ between targets as argN).
size_t check_rules(const SyscallIR& syscalls) {
  size_t checked = 0;
  for (const SyscallRuleIR& rule : syscalls.rules) {
    if (!rule.when) continue;
    for (const Target& target : targets()) {
      auto it = rule.normalized.find(target.name);
      if (it == rule.normalized.end()) continue;
      const NormalizedCondition& normal = it->second;
      if (normal.always_true() || normal.never_true()) continue;  // printed `true` / `false`
      for (const std::string& printed :
           {print_condition(normal, rule.syscall, target), print_condition(normal, rule.syscall)}) {
        CAPTURE(rule.syscall);
        CAPTURE(std::string(target.name));
        reads_back(normal, rule.syscall, target, printed);
        ++checked;
      }
    }
  }
  return checked;
}

// The rules of the plan's programs: the IR's and the backend's socket rules.
size_t check_documents(const std::vector<PolicyDocument>& documents, Diagnostics& diags, const std::string& what) {
  auto policy = build_ir(documents, targets(), diags);
  if (!policy || diags.error_count()) return 0;
  auto ir = with_socket_rules(*policy);
  REQUIRE_MESSAGE(bool(ir), (ir ? "" : llvm::toString(ir.takeError())));
  if (!ir->syscalls) return 0;
  INFO(what);
  return check_rules(*ir->syscalls);
}

TEST_CASE("conditions: every normal form explain prints of a testdata rule compiles back to it") {
  const char* root = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(root != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  std::vector<std::string> files;
  yaml_files(root, files);
  std::sort(files.begin(), files.end());
  size_t checked = 0;
  for (const std::string& file : files) {
    llvm::SourceMgr sources;
    Diagnostics diags(sources);
    std::vector<PolicyDocument> documents;
    if (!load_policy_file(file, diags, documents) || diags.error_count()) continue;
    checked += check_documents(documents, diags, file);
  }
  MESSAGE(checked, " printed conditions read back");
  CHECK(checked > 100);
}

// The rules the compiler writes itself: socket families and types for each
// network posture, unix sockets, process creation.
TEST_CASE("conditions: the compiler's own rules print as conditions that compile back to them") {
  const char* const kSpecs[] = {
      "network: {outbound: none, bind: none}",
      "network: {outbound: none}",
      "network: {outbound: {allow: [\"tcp:443\"]}}",
      "network: {outbound: {allow: [\"tcp:443\", udp]}}",
      "filesystem: {read: {allow: [/usr]}}\n  ipc: {unix_sockets: deny}",
      "filesystem: {read: {allow: [/usr]}, execute: {allow: [/usr]}}\n  capabilities: {deny: [process_creation]}",
      "syscalls: {default: kill, allow: [\"@file-read\", \"@file-write\", \"@process\", \"@network\"]}",
  };
  size_t checked = 0;
  for (const char* spec : kSpecs) {
    const std::string text =
        std::string("apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: x, tier: agent}\nspec:\n  ") + spec + "\n";
    llvm::SourceMgr sources;
    Diagnostics diags(sources);
    std::vector<PolicyDocument> documents;
    load_policy_buffer(llvm::MemoryBuffer::getMemBufferCopy(text, "policy.yaml"), diags, documents);
    REQUIRE_MESSAGE(diags.error_count() == 0, text);
    const size_t n = check_documents(documents, diags, text);
    CHECK_MESSAGE(n > 0, text);
    checked += n;
  }
  MESSAGE(checked, " printed conditions read back");
}

TEST_CASE("conditions: every group rule compiles, and its printed normal form compiles back to it") {
  size_t checked = 0;
  for (const SyscallGroup& group : all_groups())
    for (const GroupRule& rule : group.rules)
      for (const Target& target : targets()) {
        if (!syscall_number(target, rule.syscall)) continue;
        CAPTURE(std::string(rule.when));
        ConditionError error;
        auto normal = compile_condition(rule.when, rule.syscall, target, error);
        REQUIRE_MESSAGE(normal, error.message);
        reads_back(*normal, rule.syscall.str(), target, print_condition(*normal, rule.syscall, target));
        ++checked;
      }
  CHECK(checked > 20);
}

}  // namespace
}  // namespace aasmc
