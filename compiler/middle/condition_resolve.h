// The first pass of the `when:` semantics, Kafel's expr_resolve_identifiers:
// a parsed condition (frontend/condition.h) resolved against one syscall on
// one target. Operand names become argument registers with the kernel type
// the syscall gives them, constant names their value on the target, and
// every value is checked against that type, so the normal-form algebra that
// follows (condition_normalize.h) never refuses a value. docs/conditions.md
// describes both passes and what each refuses.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/condition.h"
#include "tables/targets.h"

namespace aasmc {

// One argument register and how the kernel reads it.
struct ResolvedArgument {
  unsigned index = 0;  // arg0..arg5
  unsigned bits = 64;  // the low bits the kernel uses
  bool is_signed = false;
  uint64_t width_mask() const { return bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1; }
};

// A test whose values are numbers the argument can hold:
// - kEq, kNe, kIn: what the argument's low `bits` are compared with;
// - kLt..kGe: on a 64-bit argument the value (unsigned, as libseccomp
//   compares); on a narrower one the kernel's value in an order-preserving
//   encoding onto [0, width_mask()] (a signed type's sign bit flipped);
// - kMaskAny: `mask` alone, non-zero and within the width;
// - kMaskEq, kMaskNe: `mask`, and one value with no bit outside it.
struct ResolvedTest {
  ConditionTest::Op op = ConditionTest::Op::kEq;
  ResolvedArgument arg;
  uint64_t mask = 0;
  std::vector<uint64_t> values;
  size_t offset = 0;  // of the operand in the condition text
};

// The shape of ConditionExpr, over resolved tests.
struct ResolvedCondition {
  ConditionExpr::Kind kind = ConditionExpr::Kind::kTest;
  ResolvedTest test;                        // kTest
  std::vector<ResolvedCondition> children;  // kAnd, kOr: two; kNot: one
};

// The first error in the text's order carries the offset of the token at
// fault (the operand, the constant, the value).
std::optional<ResolvedCondition> resolve_condition(const ConditionExpr& expr, llvm::StringRef syscall,
                                                   const Target& target, ConditionError& error);

// A value as conditions and their errors print it: 0x-prefixed hex.
std::string condition_hex(uint64_t value);

}  // namespace aasmc
