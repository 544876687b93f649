// The `when:` condition language (grammar/Condition.g4): parsed with the
// ANTLR4 runtime into a small AST whose every token keeps its offset in the
// condition text, so errors point at the exact column inside the YAML line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace aasmc {

struct ConditionTerm {
  std::variant<uint64_t, std::string> value;  // a number, or a constant's name
  size_t offset = 0;
  size_t length = 0;
};

// `A | B | ...`
struct ConditionValue {
  std::vector<ConditionTerm> terms;
};

struct ConditionTest {
  enum class Op { kEq, kNe, kLt, kLe, kGt, kGe, kMaskAny, kMaskEq, kMaskNe, kIn };
  Op op = Op::kEq;
  std::string operand;  // arg0..arg5 or an argument name
  size_t operand_offset = 0;
  ConditionValue mask;                // kMask*
  std::vector<ConditionValue> values; // one, or the members of `in {...}`
};

struct ConditionExpr {
  enum class Kind { kTest, kAnd, kOr, kNot };
  Kind kind = Kind::kTest;
  ConditionTest test;                   // kTest
  std::vector<ConditionExpr> children;  // kAnd, kOr: two; kNot: one
};

struct ConditionError {
  size_t offset = 0;
  std::string message;
};

inline constexpr size_t kMaxConditionBytes = 4096;
inline constexpr size_t kMaxConditionNesting = 64;

std::optional<ConditionExpr> parse_condition(std::string_view text, ConditionError& error);

// Builders that keep the shape above: `a op b op c` as ((a op b) op c), as
// C groups it (`kind` kAnd or kOr; a single part is itself), and `!a`.
ConditionExpr chained(ConditionExpr::Kind kind, std::vector<ConditionExpr> parts);
ConditionExpr negation(ConditionExpr operand);

}  // namespace aasmc
