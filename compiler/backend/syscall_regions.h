// A syscall's answer as a function of its arguments, for formats that hold
// one filter of per-call rules instead of aasm's stacked programs (the OCI
// runtime spec's linux.seccomp): the answers of middle/syscall_semantics.h's
// specification, per call, as regions of argument space that two answers
// never share. Disjoint answers need no rule order: libseccomp, which runc
// and crun build their filter with, leaves overlapping rules of different
// actions undefined and lets an unconditional rule swallow conditional ones.
// A rule's own comparisons are kept as written where no stronger answer
// overlaps them (a masked != split per bit, as the seccomp lowering does);
// where one does, both become cubes (per argument a mask and the value its
// masked bits must have: every comparison is a union of them, so the
// difference is exact) and the stronger one is cut out. A call whose
// regions grow past kMaxRegionCubes is refused, never approximated.
#pragma once

#include <llvm/Support/Error.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "middle/condition_normalize.h"
#include "middle/ir.h"
#include "tables/targets.h"

namespace aasmc {

// One comparison of one argument register, as an OCI profile's args entry
// writes it (SCMP_CMP_*): kAny compares nothing; kEq..kGe the whole
// register, unsigned; kMaskedEq (arg & mask) == value.
struct ArgTest {
  enum class Op : uint8_t { kAny, kEq, kNe, kLt, kLe, kGt, kGe, kMaskedEq };
  Op op = Op::kAny;
  uint64_t mask = 0;
  uint64_t value = 0;
  auto operator<=>(const ArgTest&) const = default;
  bool holds(uint64_t arg) const;
};

// One profile entry's args: ANDed, at most one comparison per argument.
struct ArgRule {
  std::array<ArgTest, 6> args{};
  auto operator<=>(const ArgRule&) const = default;
  bool contains(const uint64_t (&values)[6]) const;
  bool everything() const { return *this == ArgRule{}; }
};

// One answer (a SECCOMP_RET_* value) where any of its rules holds. The
// rules of one answer may overlap each other; those of two answers never do.
struct AnsweredRegion {
  uint32_t answer = 0;
  std::vector<ArgRule> rules;  // sorted
};

struct TargetAnswers {
  uint32_t default_answer = 0;  // what a call of the table not listed gets
  // Per call the target knows, the answers other than default_answer,
  // disjoint, by answer; a call absent gets default_answer.
  std::map<std::string, std::vector<AnsweredRegion>> by_call;
};

inline constexpr size_t kMaxRegionCubes = 256;

// Errors name the call whose regions are too large.
llvm::Expected<TargetAnswers> syscall_answers(const SyscallIR& ir, const Target& target);

// Whether `wider` holds wherever `narrower` does, exactly (the difference of
// their cubes is empty), where condition_implies sees only a conjunct inside
// one conjunct: the export's complement of a safe default is 33 cubes that
// together, not one by one, cover `pid == 0 || new_limit == 0`. nullopt when
// the cubes outgrow the working budget.
std::optional<bool> condition_covers(const NormalizedCondition& wider, const NormalizedCondition& narrower);

}  // namespace aasmc
