// What a compiled plan answers a call on one architecture: its programs for
// that architecture, run as the kernel stacks them by the userspace
// interpreter (bpf::run_stack). The moby-profile and compiler-import tests
// compare such answers with moby's table and with other plans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"
#include "plan/plan.h"

namespace aasm::ktest {

struct PlanAnswers {
  uint32_t audit_arch = 0;
  std::vector<plan::SeccompProgram> programs;  // install order

  // The SECCOMP_RET_* value for call `nr` with `args` (the rest zero).
  uint32_t answer(long nr, const std::vector<uint64_t>& args = {}) const;
};

// The programs of the plan file at `plan_path` for `audit_arch`.
PlanAnswers plan_answers(const std::string& plan_path, uint32_t audit_arch);

// `aasmc compile POLICY... EXTRA... -o DIR/NAME.plan` with the real aasmc, and
// the plan's answers for `audit_arch`; the compile must succeed.
PlanAnswers compile_answers(const TempDir& dir, const std::vector<std::string>& policies, uint32_t audit_arch,
                            const std::vector<std::string>& extra = {}, const std::string& name = "answers");

}  // namespace aasm::ktest
