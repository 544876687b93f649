// What the filesystem view's launch tests share (view_launch_test.cpp,
// git_dirs_test.cpp): the shipped coding-agent profile against its control,
// compiled into a test's directory, and the launcher run as root or as
// nobody.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.h"

namespace aasm::ktest {

inline constexpr uid_t kNobody = 65534;

// The control: Landlock granting every right everywhere, nothing else.
inline constexpr const char* kAllowEverything = R"(apiVersion: aasm.dev/v1
kind: Policy
metadata: {name: allow-everything, tier: run}
spec:
  filesystem:
    read: {allow: ["/"]}
    write: {allow: ["/"]}
    execute: {allow: ["/"]}
)";

inline std::string coding_agent_profile() { return binary("AASM_PROFILES") + "/coding-agent.yaml"; }

// The shipped profile alone (`shipped`), or the control, compiled into
// `base`; the control's policy is written there first. Readable by every
// user, for a launcher run as nobody.
inline std::string compile_view_plan(const TempDir& base, bool shipped) {
  const std::string control = base / "allow-everything.yaml";
  if (!shipped) write_file(control, kAllowEverything);
  const std::string plan = base / (shipped ? "coding-agent.bin" : "allow-everything.bin");
  const Run r = run({binary("AASMC"), "compile", shipped ? coding_agent_profile() : control, "-o", plan});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  ::chmod(plan.c_str(), 0644);
  return plan;
}

// This process's mount table: a launch must leave it as it was.
inline std::string mountinfo() {
  std::ifstream in("/proc/self/mountinfo");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace aasm::ktest
