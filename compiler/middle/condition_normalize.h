// The second pass of the `when:` semantics, the normal-form algebra (Kafel's
// expr_eliminate_negation and what follows it): a condition resolved against
// one syscall on one target (condition_resolve.h) rewritten into the form
// libseccomp rules take: a disjunction of conjuncts, each comparing every
// argument at most once. docs/conditions.md describes the steps and what is
// refused.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/condition.h"
#include "middle/condition_resolve.h"
#include "tables/targets.h"

namespace aasmc {

// One libseccomp comparison of one 64-bit syscall argument register
// (scmp_arg_cmp). kEq..kGe compare the whole register, unsigned; kMasked*
// compare (arg & mask) with value. `mask` is ~0 for kEq..kGe.
struct ArgComparison {
  unsigned arg = 0;
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kMaskedEq, kMaskedNe };
  Op op = Op::kEq;
  uint64_t mask = ~uint64_t(0);
  uint64_t value = 0;
  friend bool operator==(const ArgComparison&, const ArgComparison&) = default;
};

struct Conjunct {
  std::vector<ArgComparison> comparisons;  // sorted by arg, at most one per argument
  friend bool operator==(const Conjunct&, const Conjunct&) = default;
};

// Disjunctive normal form: no disjunct = never true; a single empty
// conjunct = always true. Canonical: conjuncts sorted, no duplicates, none
// implied by another.
struct NormalizedCondition {
  std::vector<Conjunct> disjuncts;
  bool always_true() const { return disjuncts.size() == 1 && disjuncts[0].comparisons.empty(); }
  bool never_true() const { return disjuncts.empty(); }
  friend bool operator==(const NormalizedCondition&, const NormalizedCondition&) = default;
};

// Every call `narrower` matches, `wider` matches too: each conjunct of
// `narrower` implies one of `wider`'s (sufficient, as the normal form is
// minimal; two forms that say the same in other words may not be seen to).
bool condition_implies(const NormalizedCondition& narrower, const NormalizedCondition& wider);

// The most conjuncts a normal form may have before the condition is refused.
inline constexpr size_t kMaxConditionConjuncts = 256;

// Errors carry the offset, inside the condition text, of the token at fault:
// here only a normal form too large, or one comparing an argument twice.
std::optional<NormalizedCondition> normalize_condition(const ResolvedCondition& condition, llvm::StringRef syscall,
                                                       const Target& target, ConditionError& error);

// resolve_condition + the above.
std::optional<NormalizedCondition> normalize_condition(const ConditionExpr& expr, llvm::StringRef syscall,
                                                       const Target& target, ConditionError& error);

// parse_condition + resolve_condition + normalize_condition.
std::optional<NormalizedCondition> compile_condition(std::string_view text, llvm::StringRef syscall,
                                                     const Target& target, ConditionError& error);

// `(request & 0xffffffff) == 0x5412 || (request & 0xffffffff) == 0x541c`,
// with argument names where known (names that differ between targets, as
// clone's, print as argN unless a target is given).
std::string print_condition(const NormalizedCondition& condition, llvm::StringRef syscall);
std::string print_condition(const NormalizedCondition& condition, llvm::StringRef syscall, const Target& target);

// Evaluates the normal form on concrete argument registers (for tests and
// for `aasmc explain`-style checks): what the generated filter would answer.
bool evaluate_condition(const NormalizedCondition& condition, const uint64_t (&args)[6]);

}  // namespace aasmc
