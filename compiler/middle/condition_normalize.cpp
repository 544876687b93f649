#include "middle/condition_normalize.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <tuple>

#include "tables/syscall_signatures.h"

namespace aasmc {
namespace {

using Op = ArgComparison::Op;
constexpr uint64_t kAll = ~uint64_t(0);

// Internally an equality is kMaskedEq with mask ~0 (and an inequality
// kMaskedNe with mask ~0), so one set of rules covers both; ordering
// comparisons keep mask ~0. `offset` is where the comparison came from.
struct Cmp {
  ArgComparison c;
  size_t offset = 0;
};

bool is_order(Op op) { return op == Op::kLt || op == Op::kLe || op == Op::kGt || op == Op::kGe; }
bool is_point(const ArgComparison& c) { return c.op == Op::kMaskedEq && c.mask == kAll; }

bool holds(const ArgComparison& c, uint64_t x) {
  switch (c.op) {
    case Op::kEq: return x == c.value;
    case Op::kNe: return x != c.value;
    case Op::kLt: return x < c.value;
    case Op::kLe: return x <= c.value;
    case Op::kGt: return x > c.value;
    case Op::kGe: return x >= c.value;
    case Op::kMaskedEq: return (x & c.mask) == c.value;
    case Op::kMaskedNe: return (x & c.mask) != c.value;
  }
  return false;
}

// [lo, hi] of an ordering comparison (unsigned 64-bit); nullopt when empty.
std::optional<std::pair<uint64_t, uint64_t>> interval(const ArgComparison& c) {
  switch (c.op) {
    case Op::kLt: if (c.value == 0) return std::nullopt; return std::pair{uint64_t(0), c.value - 1};
    case Op::kLe: return std::pair{uint64_t(0), c.value};
    case Op::kGt: if (c.value == kAll) return std::nullopt; return std::pair{c.value + 1, kAll};
    case Op::kGe: return std::pair{c.value, kAll};
    default: return std::pair{uint64_t(0), kAll};
  }
}

ArgComparison point(unsigned arg, uint64_t v) { return {arg, Op::kMaskedEq, kAll, v}; }

// A single-bit kMaskedNe is a kMaskedEq on the other value of that bit.
ArgComparison canonical(ArgComparison c) {
  if (c.op == Op::kMaskedNe && std::has_single_bit(c.mask)) {
    c.op = Op::kMaskedEq;
    c.value ^= c.mask;
  }
  return c;
}

// One comparison equal to the one-sided-or-point interval [lo, hi], if any.
std::optional<ArgComparison> from_interval(unsigned arg, uint64_t lo, uint64_t hi) {
  if (lo == hi) return point(arg, lo);
  if (lo == 0) return ArgComparison{arg, Op::kLe, kAll, hi};
  if (hi == kAll) return ArgComparison{arg, Op::kGe, kAll, lo};
  return std::nullopt;
}

// What a ∧ b (same argument) is, as far as one comparison can say.
struct Combined {
  enum Kind { kUnsat, kOne, kNone } kind = kNone;
  ArgComparison c;
};

Combined combine(const ArgComparison& a, const ArgComparison& b) {
  if (a == b) return {Combined::kOne, a};
  if (is_point(a)) return holds(b, a.value) ? Combined{Combined::kOne, a} : Combined{Combined::kUnsat, {}};
  if (is_point(b)) return holds(a, b.value) ? Combined{Combined::kOne, b} : Combined{Combined::kUnsat, {}};
  const bool a_eq = a.op == Op::kMaskedEq, b_eq = b.op == Op::kMaskedEq;
  const bool a_ne = a.op == Op::kMaskedNe, b_ne = b.op == Op::kMaskedNe;
  if (a_eq && b_eq) {
    if ((a.value & b.mask) != (b.value & a.mask)) return {Combined::kUnsat, {}};
    return {Combined::kOne, {a.arg, Op::kMaskedEq, a.mask | b.mask, a.value | b.value}};
  }
  if ((a_eq && b_ne) || (a_ne && b_eq)) {
    const ArgComparison& eq = a_eq ? a : b;
    const ArgComparison& ne = a_eq ? b : a;
    const uint64_t common = eq.mask & ne.mask;
    // The bits both test disagree: eq already rules ne's value out.
    if ((eq.value & common) != (ne.value & common)) return {Combined::kOne, eq};
    // eq fixes every bit ne tests, and to ne's value.
    if ((ne.mask & ~eq.mask) == 0) return {Combined::kUnsat, {}};
    return {};
  }
  if (a_ne && b_ne) return {};
  if (is_order(a.op) && is_order(b.op)) {
    auto ia = interval(a), ib = interval(b);
    if (!ia || !ib) return {Combined::kUnsat, {}};
    const uint64_t lo = std::max(ia->first, ib->first), hi = std::min(ia->second, ib->second);
    if (lo > hi) return {Combined::kUnsat, {}};
    if (lo == ia->first && hi == ia->second) return {Combined::kOne, a};
    if (lo == ib->first && hi == ib->second) return {Combined::kOne, b};
    if (auto one = from_interval(a.arg, lo, hi)) return {Combined::kOne, *one};
    return {};
  }
  // One ordering comparison and one masked comparison.
  const ArgComparison& order = is_order(a.op) ? a : b;
  const ArgComparison& masked = is_order(a.op) ? b : a;
  auto range = interval(order);
  if (!range) return {Combined::kUnsat, {}};
  const auto [lo, hi] = *range;
  // The values with (x & mask) == value lie within [value, value | ~mask].
  const uint64_t mlo = masked.value, mhi = masked.value | ~masked.mask;
  const bool disjoint = mhi < lo || mlo > hi;
  if (masked.op == Op::kMaskedEq) {
    if (disjoint) return {Combined::kUnsat, {}};
    if (lo <= mlo && mhi <= hi) return {Combined::kOne, masked};
    return {};
  }
  // kMaskedNe
  if (disjoint) return {Combined::kOne, order};
  if (masked.mask == kAll) {  // x != v at an end of the interval narrows it
    const uint64_t v = masked.value;
    if (lo == hi) return {Combined::kUnsat, {}};
    if (v == lo)
      if (auto one = from_interval(order.arg, lo + 1, hi)) return {Combined::kOne, *one};
    if (v == hi)
      if (auto one = from_interval(order.arg, lo, hi - 1)) return {Combined::kOne, *one};
  }
  return {};
}

// b ⇒ a
bool implies(const ArgComparison& b, const ArgComparison& a) {
  if (a.arg != b.arg) return false;
  Combined both = combine(a, b);
  return both.kind == Combined::kOne && both.c == b;
}

class Normalizer {
 public:
  Normalizer(llvm::StringRef syscall, const Target& target, ConditionError& error)
      : syscall_(syscall), target_(target), error_(error) {}

  // ---- NNF tree
  struct Node {
    enum Kind { kTrue, kFalse, kCmp, kAnd, kOr } kind = kTrue;
    Cmp cmp;
    size_t offset = 0;  // the leftmost operand of the subtree
    std::vector<Node> children;
  };

  using Conj = std::vector<Cmp>;
  using Dnf = std::vector<Conj>;

  std::optional<NormalizedCondition> run(const ResolvedCondition& condition) {
    auto dnf = to_dnf(convert(condition, false));
    if (!dnf) return std::nullopt;
    return finish(std::move(*dnf));
  }

  bool fail(size_t offset, std::string message) {
    if (!failed_) error_ = {offset, std::move(message)};
    failed_ = true;
    return false;
  }

  std::string arg_label(unsigned index) const {
    std::string name = arg_display_name(syscall_, index, target_);
    return name.empty() ? "arg" + std::to_string(index) : name;
  }

  std::string describe(const ArgComparison& c) const {
    NormalizedCondition one;
    ArgComparison out = c;
    if (out.op == Op::kMaskedEq && out.mask == kAll) out.op = Op::kEq;
    if (out.op == Op::kMaskedNe && out.mask == kAll) out.op = Op::kNe;
    one.disjuncts.push_back({{out}});
    return print_condition(one, syscall_, target_);
  }

 private:
  Node leaf(const ResolvedArgument& arg, Op op, uint64_t mask, uint64_t value, size_t offset) {
    Node n;
    n.kind = Node::kCmp;
    n.cmp = {canonical({arg.index, op, mask, value}), offset};
    n.offset = offset;
    return n;
  }
  static Node constant(bool truth, size_t offset) {
    Node n;
    n.kind = truth ? Node::kTrue : Node::kFalse;
    n.offset = offset;
    return n;
  }
  static Node group(Node::Kind kind, std::vector<Node> children, size_t offset) {
    Node n;
    n.kind = kind;
    n.offset = offset;
    n.children = std::move(children);
    return n;
  }

  // x == v / x != v, honouring the argument's width.
  Node equality(const ResolvedArgument& arg, uint64_t value, bool equal, size_t at) {
    return leaf(arg, equal ? Op::kMaskedEq : Op::kMaskedNe, arg.width_mask(), value, at);
  }

  // An ordering comparison. 64-bit arguments keep libseccomp's unsigned
  // 64-bit comparison; narrower ones become masked equalities over the
  // aligned blocks covering the range (exact in the kernel's type). `u` is
  // the value as ResolvedTest encodes it.
  Node ordering(const ResolvedArgument& arg, Op op, uint64_t u, size_t at) {
    if (arg.bits == 64) {
      if ((op == Op::kLt && u == 0) || (op == Op::kGt && u == kAll)) return constant(false, at);
      if ((op == Op::kGe && u == 0) || (op == Op::kLe && u == kAll)) return constant(true, at);
      return leaf(arg, op, kAll, u, at);
    }
    const uint64_t w = arg.width_mask();
    const uint64_t sign = uint64_t(1) << (arg.bits - 1);
    uint64_t lo = 0, hi = w;
    switch (op) {
      case Op::kLt: if (u == 0) return constant(false, at); hi = u - 1; break;
      case Op::kLe: hi = u; break;
      case Op::kGt: if (u == w) return constant(false, at); lo = u + 1; break;
      case Op::kGe: lo = u; break;
      default: break;
    }
    if (lo == 0 && hi == w) return constant(true, at);
    std::vector<Node> blocks;
    for (uint64_t cur = lo;;) {
      uint64_t size = cur == 0 ? (w >> 1) + 1 : (cur & (~cur + 1));  // largest alignment of cur
      while (size > 1 && cur + (size - 1) > hi) size >>= 1;
      uint64_t value = cur;
      const uint64_t mask = w & ~(size - 1);
      if (arg.is_signed) value ^= sign;
      blocks.push_back(leaf(arg, Op::kMaskedEq, mask, value & mask, at));
      if (cur + (size - 1) >= hi) break;
      cur += size;
    }
    if (blocks.size() == 1) return std::move(blocks.front());
    return group(Node::kOr, std::move(blocks), at);
  }

  Node test(const ResolvedTest& t, bool negate) {
    const ResolvedArgument& arg = t.arg;
    const size_t at = t.offset;
    using T = ConditionTest::Op;
    switch (t.op) {
      case T::kEq:
      case T::kNe: return equality(arg, t.values.at(0), (t.op == T::kEq) != negate, at);
      case T::kLt: return ordering(arg, negate ? Op::kGe : Op::kLt, t.values.at(0), at);
      case T::kLe: return ordering(arg, negate ? Op::kGt : Op::kLe, t.values.at(0), at);
      case T::kGt: return ordering(arg, negate ? Op::kLe : Op::kGt, t.values.at(0), at);
      case T::kGe: return ordering(arg, negate ? Op::kLt : Op::kGe, t.values.at(0), at);
      case T::kIn: {
        std::vector<Node> members;
        for (const uint64_t v : t.values) members.push_back(equality(arg, v, !negate, at));
        if (members.size() == 1) return std::move(members.front());
        return group(negate ? Node::kAnd : Node::kOr, std::move(members), at);
      }
      case T::kMaskAny: {
        if (negate) return leaf(arg, Op::kMaskedEq, t.mask, 0, at);
        // A non-zero test of a multi-bit mask: any of its bits.
        std::vector<Node> bits;
        for (uint64_t rest = t.mask; rest; rest &= rest - 1) {
          const uint64_t bit = rest & (~rest + 1);
          bits.push_back(leaf(arg, Op::kMaskedEq, bit, bit, at));
        }
        if (bits.size() == 1) return std::move(bits.front());
        return group(Node::kOr, std::move(bits), at);
      }
      case T::kMaskEq:
      case T::kMaskNe: {
        const bool equal = (t.op == T::kMaskEq) != negate;
        return leaf(arg, equal ? Op::kMaskedEq : Op::kMaskedNe, t.mask, t.values.at(0), at);
      }
    }
    return constant(false, at);
  }

  // Negations pushed to the tests (De Morgan), as Kafel's expr_eliminate_negation.
  Node convert(const ResolvedCondition& e, bool negate) {
    switch (e.kind) {
      case ConditionExpr::Kind::kTest: return test(e.test, negate);
      case ConditionExpr::Kind::kNot: return convert(e.children.at(0), !negate);
      case ConditionExpr::Kind::kAnd:
      case ConditionExpr::Kind::kOr: break;
    }
    const bool is_and = (e.kind == ConditionExpr::Kind::kAnd) != negate;
    std::vector<Node> children;
    for (const ResolvedCondition& child : e.children) children.push_back(convert(child, negate));
    const size_t offset = children.front().offset;
    return group(is_and ? Node::kAnd : Node::kOr, std::move(children), offset);
  }

  // ---- DNF

  // Merges comparisons on the same argument where one comparison can say
  // it. False when the conjunct is unsatisfiable. Comparisons that cannot be
  // merged stay side by side (`stuck` says so).
  static bool merge(Conj& conj, bool* stuck = nullptr) {
    std::stable_sort(conj.begin(), conj.end(), [](const Cmp& a, const Cmp& b) { return a.c.arg < b.c.arg; });
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = 0; i < conj.size() && !changed; ++i) {
        for (size_t j = i + 1; j < conj.size() && conj[j].c.arg == conj[i].c.arg; ++j) {
          Combined both = combine(conj[i].c, conj[j].c);
          if (both.kind == Combined::kUnsat) return false;
          if (both.kind == Combined::kOne) {
            conj[i].c = canonical(both.c);
            conj[i].offset = std::min(conj[i].offset, conj[j].offset);
            conj.erase(conj.begin() + long(j));
            changed = true;
            break;
          }
        }
      }
    }
    if (stuck) {
      *stuck = false;
      for (size_t i = 1; i < conj.size(); ++i) *stuck |= conj[i].c.arg == conj[i - 1].c.arg;
    }
    return true;
  }

  std::optional<Dnf> to_dnf(const Node& n) {
    switch (n.kind) {
      case Node::kTrue: return Dnf{Conj{}};
      case Node::kFalse: return Dnf{};
      case Node::kCmp: return Dnf{Conj{n.cmp}};
      case Node::kOr: {
        Dnf out;
        for (const Node& child : n.children) {
          auto d = to_dnf(child);
          if (!d) return std::nullopt;
          out.insert(out.end(), d->begin(), d->end());
          if (out.size() > kMaxConditionConjuncts) return too_large(n.offset);
        }
        return out;
      }
      case Node::kAnd: {
        Dnf acc{Conj{}};
        for (const Node& child : n.children) {
          auto d = to_dnf(child);
          if (!d) return std::nullopt;
          Dnf next;
          for (const Conj& left : acc) {
            for (const Conj& right : *d) {
              Conj both = left;
              both.insert(both.end(), right.begin(), right.end());
              if (!merge(both)) continue;
              next.push_back(std::move(both));
              if (next.size() > kMaxConditionConjuncts) return too_large(n.offset);
            }
          }
          acc = std::move(next);
        }
        return acc;
      }
    }
    return std::nullopt;
  }

  std::nullopt_t too_large(size_t offset) {
    fail(offset, "the condition expands to more than " + std::to_string(kMaxConditionConjuncts) +
                     " alternatives when put in disjunctive normal form (each && of ||s multiplies them); "
                     "split it into several rules");
    return std::nullopt;
  }

  static bool conj_less(const Conj& a, const Conj& b) {
    auto key = [](const Cmp& c) { return std::make_tuple(c.c.arg, int(c.c.op), c.c.mask, c.c.value); };
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                        [&](const Cmp& x, const Cmp& y) { return key(x) < key(y); });
  }
  static bool conj_equal(const Conj& a, const Conj& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const Cmp& x, const Cmp& y) { return x.c == y.c; });
  }
  // Every comparison of `weaker` is implied by one of `stronger`'s.
  static bool subsumes(const Conj& weaker, const Conj& stronger) {
    for (const Cmp& a : weaker) {
      bool found = false;
      for (const Cmp& b : stronger) found |= implies(b.c, a.c);
      if (!found) return false;
    }
    return true;
  }

  std::optional<NormalizedCondition> finish(Dnf dnf) {
    Dnf kept;
    std::vector<bool> stuck_flags;
    for (Conj& conj : dnf) {
      bool stuck = false;
      if (!merge(conj, &stuck)) continue;
      auto key = [](const Cmp& c) { return std::make_tuple(c.c.arg, int(c.c.op), c.c.mask, c.c.value); };
      std::sort(conj.begin(), conj.end(), [&](const Cmp& a, const Cmp& b) { return key(a) < key(b); });
      kept.push_back(std::move(conj));
    }
    // Canonical order, no duplicates.
    std::stable_sort(kept.begin(), kept.end(), conj_less);
    kept.erase(std::unique(kept.begin(), kept.end(), conj_equal), kept.end());
    // Drop conjuncts implied by another (A || (A && B) is A).
    Dnf minimal;
    for (size_t i = 0; i < kept.size(); ++i) {
      bool redundant = false;
      for (size_t j = 0; j < kept.size() && !redundant; ++j)
        if (i != j && subsumes(kept[j], kept[i]) && !(subsumes(kept[i], kept[j]) && j > i)) redundant = true;
      if (!redundant) minimal.push_back(kept[i]);
    }
    // What remains must compare each argument once.
    for (const Conj& conj : minimal) {
      for (size_t i = 1; i < conj.size(); ++i) {
        if (conj[i].c.arg != conj[i - 1].c.arg) continue;
        const Cmp& first = conj[i - 1].offset <= conj[i].offset ? conj[i - 1] : conj[i];
        const Cmp& second = conj[i - 1].offset <= conj[i].offset ? conj[i] : conj[i - 1];
        const std::string name = arg_label(first.c.arg);
        fail(second.offset,
             "libseccomp compares each argument at most once per rule, and `" + describe(first.c) + " && " +
                 describe(second.c) + "` needs two comparisons of " + name +
                 " that no single comparison expresses; split the condition into several rules (for example, a "
                 "rule with the opposite action for the excluded values, or `" +
                 name + " in {...}` listing the allowed ones)");
        return std::nullopt;
      }
    }
    NormalizedCondition out;
    for (const Conj& conj : minimal) {
      Conjunct c;
      for (const Cmp& cmp : conj) {
        ArgComparison a = cmp.c;
        if (a.op == Op::kMaskedEq && a.mask == kAll) a.op = Op::kEq;
        if (a.op == Op::kMaskedNe && a.mask == kAll) a.op = Op::kNe;
        c.comparisons.push_back(a);
      }
      out.disjuncts.push_back(std::move(c));
    }
    return out;
  }

  llvm::StringRef syscall_;
  const Target& target_;
  ConditionError& error_;
  bool failed_ = false;
};

std::string print_with(const NormalizedCondition& condition, const std::function<std::string(unsigned)>& name) {
  if (condition.never_true()) return "false";
  if (condition.always_true()) return "true";
  std::string out;
  const bool several = condition.disjuncts.size() > 1;
  for (size_t d = 0; d < condition.disjuncts.size(); ++d) {
    const Conjunct& conj = condition.disjuncts[d];
    if (d) out += " || ";
    const bool paren = several && conj.comparisons.size() > 1;
    if (paren) out += "(";
    for (size_t i = 0; i < conj.comparisons.size(); ++i) {
      const ArgComparison& c = conj.comparisons[i];
      if (i) out += " && ";
      const std::string arg = name(c.arg);
      const char* op = "==";
      switch (c.op) {
        case Op::kEq: case Op::kMaskedEq: op = "=="; break;
        case Op::kNe: case Op::kMaskedNe: op = "!="; break;
        case Op::kLt: op = "<"; break;
        case Op::kLe: op = "<="; break;
        case Op::kGt: op = ">"; break;
        case Op::kGe: op = ">="; break;
      }
      if (c.op == Op::kMaskedEq || c.op == Op::kMaskedNe)
        out += "(" + arg + " & " + condition_hex(c.mask) + ") " + op + " " + condition_hex(c.value);
      else
        out += arg + " " + op + " " + condition_hex(c.value);
    }
    if (paren) out += ")";
  }
  return out;
}

}  // namespace

std::optional<NormalizedCondition> normalize_condition(const ResolvedCondition& condition, llvm::StringRef syscall,
                                                       const Target& target, ConditionError& error) {
  return Normalizer(syscall, target, error).run(condition);
}

std::optional<NormalizedCondition> normalize_condition(const ConditionExpr& expr, llvm::StringRef syscall,
                                                       const Target& target, ConditionError& error) {
  const std::optional<ResolvedCondition> resolved = resolve_condition(expr, syscall, target, error);
  if (!resolved) return std::nullopt;
  return normalize_condition(*resolved, syscall, target, error);
}

std::optional<NormalizedCondition> compile_condition(std::string_view text, llvm::StringRef syscall,
                                                     const Target& target, ConditionError& error) {
  auto parsed = parse_condition(text, error);
  if (!parsed) return std::nullopt;
  return normalize_condition(*parsed, syscall, target, error);
}

std::string print_condition(const NormalizedCondition& condition, llvm::StringRef syscall) {
  return print_with(condition, [&](unsigned index) {
    std::string name = arg_display_name(syscall, index);
    return name.empty() ? "arg" + std::to_string(index) : name;
  });
}

std::string print_condition(const NormalizedCondition& condition, llvm::StringRef syscall, const Target& target) {
  return print_with(condition, [&](unsigned index) {
    std::string name = arg_display_name(syscall, index, target);
    return name.empty() ? "arg" + std::to_string(index) : name;
  });
}

bool evaluate_condition(const NormalizedCondition& condition, const uint64_t (&args)[6]) {
  for (const Conjunct& conj : condition.disjuncts) {
    bool all = true;
    for (const ArgComparison& c : conj.comparisons) all = all && c.arg < 6 && holds(c, args[c.arg]);
    if (all) return true;
  }
  return false;
}

bool condition_implies(const NormalizedCondition& narrower, const NormalizedCondition& wider) {
  const auto conjunct_implies = [](const Conjunct& b, const Conjunct& a) {  // b ⇒ a
    return std::all_of(a.comparisons.begin(), a.comparisons.end(), [&](const ArgComparison& need) {
      return std::any_of(b.comparisons.begin(), b.comparisons.end(),
                         [&](const ArgComparison& have) { return implies(have, need); });
    });
  };
  return std::all_of(narrower.disjuncts.begin(), narrower.disjuncts.end(), [&](const Conjunct& b) {
    return std::any_of(wider.disjuncts.begin(), wider.disjuncts.end(), [&](const Conjunct& a) { return conjunct_implies(b, a); });
  });
}

}  // namespace aasmc
