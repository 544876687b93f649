#include "backend/syscall_regions.h"

#include <linux/seccomp.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>

#include "middle/syscall_semantics.h"

namespace aasmc {
namespace {

using Op = ArgTest::Op;
using Rules = std::vector<ArgRule>;

constexpr uint64_t kAll = ~uint64_t(0);
// Past this many cubes in one intermediate set the call is refused.
constexpr size_t kMaxWorkingCubes = 8192;

// Per argument the bits compared and the value they must have.
struct Cube {
  std::array<uint64_t, 6> mask{}, value{};
};
using Cubes = std::vector<Cube>;

// Set when a set outgrows kMaxWorkingCubes: the expansion stops there (the
// sets go empty) and the call is refused.
struct Budget {
  bool exceeded = false;
  void check(Cubes& cubes) {
    if (cubes.size() > kMaxWorkingCubes) exceeded = true;
    if (exceeded) cubes.clear();
  }
};

std::optional<Cube> intersect(const Cube& a, const Cube& b) {
  Cube out;
  for (size_t i = 0; i < 6; ++i) {
    if ((a.value[i] ^ b.value[i]) & a.mask[i] & b.mask[i]) return std::nullopt;
    out.mask[i] = a.mask[i] | b.mask[i];
    out.value[i] = (a.value[i] & a.mask[i]) | (b.value[i] & b.mask[i]);
  }
  return out;
}

// a without b, as disjoint cubes (the sharp product): fix, bit by bit, each
// bit b compares and a does not, the first one to differ from b's value.
Cubes sharp(const Cube& a, const Cube& b) {
  if (!intersect(a, b)) return {a};
  Cubes out;
  Cube rest = a;
  for (size_t i = 0; i < 6; ++i)
    for (int bit = 63; bit >= 0; --bit) {
      const uint64_t m = uint64_t(1) << bit;
      if (!(b.mask[i] & m) || (a.mask[i] & m)) continue;
      Cube piece = rest;
      piece.mask[i] |= m;
      piece.value[i] |= ~b.value[i] & m;
      out.push_back(piece);
      rest.mask[i] |= m;
      rest.value[i] |= b.value[i] & m;
    }
  return out;  // what is left of `rest` lies inside b
}

Cubes difference(Cubes a, const Cubes& b, Budget& budget) {
  for (const Cube& cube : b) {
    if (a.empty()) break;
    Cubes next;
    for (const Cube& x : a)
      for (const Cube& piece : sharp(x, cube)) next.push_back(piece);
    budget.check(next);
    a = std::move(next);
  }
  return a;
}

Cubes intersect(const Cubes& a, const Cubes& b, Budget& budget) {
  Cubes out;
  for (const Cube& x : a)
    for (const Cube& y : b)
      if (auto both = intersect(x, y)) out.push_back(*both);
  budget.check(out);
  return out;
}

Cube cube_of(unsigned arg, uint64_t mask, uint64_t value) {
  Cube c;
  c.mask[arg] = mask;
  c.value[arg] = value & mask;
  return c;
}

// x < v (less) or x > v (!less), unsigned over 64 bits: per bit where they
// first differ, the bits above equal to v's.
Cubes ordered(unsigned arg, uint64_t v, bool less) {
  Cubes out;
  for (int bit = 63; bit >= 0; --bit) {
    const uint64_t m = uint64_t(1) << bit;
    if (bool(v & m) != less) continue;
    const uint64_t above = bit == 63 ? 0 : kAll << (bit + 1);
    out.push_back(cube_of(arg, above | m, (v & above) | (less ? 0 : m)));
  }
  return out;
}

// One comparison as disjoint cubes (at most 65).
Cubes cubes_of(const ArgTest& t, unsigned arg) {
  Cubes out;
  switch (t.op) {
    case Op::kAny: return {Cube{}};
    case Op::kEq: return {cube_of(arg, kAll, t.value)};
    case Op::kMaskedEq: return {cube_of(arg, t.mask, t.value)};
    case Op::kNe: return sharp(Cube{}, cube_of(arg, kAll, t.value));
    case Op::kLt: return ordered(arg, t.value, true);
    case Op::kGt: return ordered(arg, t.value, false);
    case Op::kLe: out = ordered(arg, t.value, true); break;
    case Op::kGe: out = ordered(arg, t.value, false); break;
  }
  out.push_back(cube_of(arg, kAll, t.value));
  return out;
}

// A rule's region as cubes, and a set of rules' (possibly overlapping) as
// disjoint cubes.
Cubes cubes_of(const ArgRule& rule, Budget& budget) {
  Cubes out{Cube{}};
  for (unsigned i = 0; i < 6; ++i)
    if (rule.args[i].op != Op::kAny) out = intersect(out, cubes_of(rule.args[i], i), budget);
  return out;
}

Cubes cubes_of(const Rules& rules, Budget& budget) {
  Cubes out;
  for (const ArgRule& rule : rules)
    for (const Cube& cube : difference(cubes_of(rule, budget), out, budget)) out.push_back(cube);
  budget.check(out);
  return out;
}

ArgRule rule_of(const Cube& cube) {
  ArgRule rule;
  for (size_t i = 0; i < 6; ++i)
    if (cube.mask[i] == kAll) rule.args[i] = {Op::kEq, kAll, cube.value[i]};
    else if (cube.mask[i]) rule.args[i] = {Op::kMaskedEq, cube.mask[i], cube.value[i]};
  return rule;
}

Rules rules_of(const Cubes& cubes) {
  Rules out;
  for (const Cube& cube : cubes) out.push_back(rule_of(cube));
  return out;
}

// A normal form as rules, its comparisons kept: a masked != (which no
// SCMP_CMP_ op has) becomes one masked == per bit of its mask, as the
// seccomp lowering splits it.
Rules rules_of(const NormalizedCondition& condition) {
  Rules out;
  for (const Conjunct& conjunct : condition.disjuncts) {
    Rules partial{ArgRule{}};
    for (const ArgComparison& c : conjunct.comparisons) {
      std::vector<ArgTest> alternatives;
      switch (c.op) {
        case ArgComparison::Op::kEq: alternatives.push_back({Op::kEq, kAll, c.value}); break;
        case ArgComparison::Op::kNe: alternatives.push_back({Op::kNe, kAll, c.value}); break;
        case ArgComparison::Op::kLt: alternatives.push_back({Op::kLt, kAll, c.value}); break;
        case ArgComparison::Op::kLe: alternatives.push_back({Op::kLe, kAll, c.value}); break;
        case ArgComparison::Op::kGt: alternatives.push_back({Op::kGt, kAll, c.value}); break;
        case ArgComparison::Op::kGe: alternatives.push_back({Op::kGe, kAll, c.value}); break;
        case ArgComparison::Op::kMaskedEq:
          alternatives.push_back(c.mask == kAll ? ArgTest{Op::kEq, kAll, c.value}
                                                : ArgTest{Op::kMaskedEq, c.mask, c.value & c.mask});
          break;
        case ArgComparison::Op::kMaskedNe:
          for (int bit = 63; bit >= 0; --bit)
            if (const uint64_t b = uint64_t(1) << bit; c.mask & b)
              alternatives.push_back({Op::kMaskedEq, b, ~c.value & b});
          break;
      }
      Rules next;
      for (const ArgRule& rule : partial)
        for (const ArgTest& alternative : alternatives) {
          next.push_back(rule);
          next.back().args[c.arg] = alternative;
        }
      partial = std::move(next);
    }
    out.insert(out.end(), partial.begin(), partial.end());
  }
  return out;
}

// Whether some argument values satisfy both rules: per argument compared by
// both, some cube of each meets.
bool overlaps(const ArgRule& a, const ArgRule& b) {
  for (unsigned i = 0; i < 6; ++i) {
    if (a.args[i].op == Op::kAny || b.args[i].op == Op::kAny) continue;
    bool meet = false;
    for (const Cube& x : cubes_of(a.args[i], i))
      for (const Cube& y : cubes_of(b.args[i], i))
        if (!meet && intersect(x, y)) meet = true;
    if (!meet) return false;
  }
  return true;
}

bool overlaps(const Rules& a, const Rules& b) {
  for (const ArgRule& x : a)
    for (const ArgRule& y : b)
      if (overlaps(x, y)) return true;
  return false;
}

const Rules kEverywhere{ArgRule{}};

// One candidate answer of a call: the main program's (disjoint among
// themselves) or a rule's.
struct Piece {
  uint32_t answer;
  bool main;
  Rules region;
};

// Which piece wins where two hold (middle/syscall_semantics.h): the
// stricter action; at equal rank the main program's, then the larger value.
bool wins_over(const Piece& a, const Piece& b) {
  if (action_rank(a.answer) != action_rank(b.answer)) return action_rank(a.answer) > action_rank(b.answer);
  if (a.main != b.main) return a.main;
  return a.answer > b.answer;
}

// The main program's answers for `name`, disjoint (base_action of the specification).
std::vector<Piece> main_pieces(const SyscallIR& ir, const Target& target, const std::string& name, Budget& budget) {
  const uint32_t deny = seccomp_return_value(ir.default_action.value);
  const uint32_t allow = SECCOMP_RET_ALLOW;
  std::vector<Piece> pieces;
  if (ir.mode == SyscallIR::Mode::kDenylist) {
    pieces.push_back({ir.denied.count(name) || is_io_uring(name) ? deny : allow, true, kEverywhere});
  } else if (ir.denied.count(name)) {
    pieces.push_back({deny, true, kEverywhere});
  } else if (ir.allowed.count(name)) {
    pieces.push_back({allow, true, kEverywhere});
  } else if (auto it = ir.conditionally_allowed.find(name); it != ir.conditionally_allowed.end() &&
                                                            it->second.count(target.name)) {
    Rules allowed = rules_of(it->second.at(target.name));
    pieces.push_back({deny, true, rules_of(difference({Cube{}}, cubes_of(allowed, budget), budget))});
    pieces.push_back({allow, true, std::move(allowed)});
  } else {
    pieces.push_back({deny, true, kEverywhere});
  }
  if (answers_enosys_by_design(name))
    for (Piece& piece : pieces)
      if (piece.answer != SECCOMP_RET_KILL_PROCESS) piece.answer = SECCOMP_RET_ERRNO | ENOSYS;
  return pieces;
}

// nullopt when the regions outgrow the budget or kMaxRegionCubes.
std::optional<std::vector<AnsweredRegion>> answers_of(const SyscallIR& ir, const Target& target,
                                                      const std::string& name, uint32_t default_answer) {
  Budget budget;
  std::vector<Piece> pieces = main_pieces(ir, target, name, budget);
  for (const SyscallRuleIR& rule : ir.rules)
    if (rule.syscall == name && rule.action.kind != Action::Kind::kAllow)
      if (auto it = rule.normalized.find(target.name); it != rule.normalized.end())
        pieces.push_back({seccomp_return_value(rule.action), false, rules_of(it->second)});
  std::stable_sort(pieces.begin(), pieces.end(), wins_over);
  // Each piece holds where it holds and no piece before it does: kept as
  // written where no earlier piece overlaps it, else cut down in cubes.
  std::map<uint32_t, Rules> by_answer;
  for (size_t k = 0; k < pieces.size(); ++k) {
    Rules region = pieces[k].region;
    std::optional<Cubes> cut;
    for (size_t j = 0; j < k && !region.empty(); ++j) {
      if (!overlaps(region, pieces[j].region)) continue;
      cut = difference(cubes_of(region, budget), cubes_of(pieces[j].region, budget), budget);
      region = rules_of(*cut);
    }
    if (pieces[k].answer == default_answer || region.empty()) continue;
    Rules& out = by_answer[pieces[k].answer];
    out.insert(out.end(), region.begin(), region.end());
  }
  std::vector<AnsweredRegion> out;
  size_t total = 0;
  for (auto& [answer, rules] : by_answer) {
    std::sort(rules.begin(), rules.end());
    rules.erase(std::unique(rules.begin(), rules.end()), rules.end());
    total += rules.size();
    out.push_back({answer, std::move(rules)});
  }
  if (budget.exceeded || total > kMaxRegionCubes) return std::nullopt;
  return out;
}

}  // namespace

bool ArgTest::holds(uint64_t arg) const {
  switch (op) {
    case Op::kAny: return true;
    case Op::kEq: return arg == value;
    case Op::kNe: return arg != value;
    case Op::kLt: return arg < value;
    case Op::kLe: return arg <= value;
    case Op::kGt: return arg > value;
    case Op::kGe: return arg >= value;
    case Op::kMaskedEq: return (arg & mask) == value;
  }
  return false;
}

bool ArgRule::contains(const uint64_t (&values)[6]) const {
  for (size_t i = 0; i < 6; ++i)
    if (!args[i].holds(values[i])) return false;
  return true;
}

std::optional<bool> condition_covers(const NormalizedCondition& wider, const NormalizedCondition& narrower) {
  Budget budget;
  const Cubes outside = difference(cubes_of(rules_of(narrower), budget), cubes_of(rules_of(wider), budget), budget);
  if (budget.exceeded) return std::nullopt;
  return outside.empty();
}

llvm::Expected<TargetAnswers> syscall_answers(const SyscallIR& ir, const Target& target) {
  TargetAnswers out;
  out.default_answer =
      ir.mode == SyscallIR::Mode::kAllowlist ? seccomp_return_value(ir.default_action.value) : SECCOMP_RET_ALLOW;
  std::set<std::string> names;
  for (const FallbackCall& call : fallback_calls()) names.insert(call.name.str());
  for (llvm::StringRef call : io_uring_calls()) names.insert(call.str());
  for (const auto& [name, entry] : ir.allowed) names.insert(name);
  for (const auto& [name, by_target] : ir.conditionally_allowed) names.insert(name);
  for (const auto& [name, from] : ir.denied) names.insert(name);
  for (const SyscallRuleIR& rule : ir.rules) names.insert(rule.syscall);
  for (const std::string& name : names) {
    if (!syscall_number(target, name)) continue;
    std::optional<std::vector<AnsweredRegion>> answers = answers_of(ir, target, name, out.default_answer);
    if (!answers)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "%s on %s: its argument rules need more than %zu comparisons",
                                     name.c_str(), target.name, kMaxRegionCubes);
    if (!answers->empty()) out.by_call.emplace(name, std::move(*answers));
  }
  return out;
}

}  // namespace aasmc
