#include "middle/condition_normalize.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <bit>
#include <functional>
#include <tuple>

#include "support/diagnostics.h"
#include "tables/constants.h"
#include "tables/syscall_signatures.h"

namespace aasmc {
namespace {

using Op = ArgComparison::Op;
constexpr uint64_t kAll = ~uint64_t(0);

std::string hex(uint64_t v) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format_hex(v, 0);
  return out;
}

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

// ---------------------------------------------------------------------------
// Operands, values

struct Operand {
  unsigned index = 0;
  unsigned bits = 64;
  bool is_signed = false;
  std::string label;  // for messages
  uint64_t width_mask() const { return bits == 64 ? kAll : (uint64_t(1) << bits) - 1; }
};

struct Value {
  uint64_t value = 0;
  size_t offset = 0;
  bool negative = false;  // came from a negative named constant
};

std::string join(const std::vector<llvm::StringRef>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i].str();
  return out;
}

class Normalizer {
 public:
  Normalizer(llvm::StringRef syscall, const Target& target, ConditionError& error)
      : syscall_(syscall), target_(target), error_(error), signature_(find_signature(syscall, target)) {}

  // ---- NNF tree
  struct Node {
    enum Kind { kTrue, kFalse, kCmp, kAnd, kOr } kind = kTrue;
    Cmp cmp;
    size_t offset = 0;  // the leftmost operand of the subtree
    std::vector<Node> children;
  };

  using Conj = std::vector<Cmp>;
  using Dnf = std::vector<Conj>;

  std::optional<NormalizedCondition> run(const ConditionExpr& expr) {
    auto tree = convert(expr, false);
    if (!tree) return std::nullopt;
    auto dnf = to_dnf(*tree);
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
  std::optional<Operand> operand(const ConditionTest& test) {
    const std::string& name = test.operand;
    const size_t at = test.operand_offset;
    Operand out;
    std::optional<unsigned> index;
    if (name.size() == 4 && name.compare(0, 3, "arg") == 0 && name[3] >= '0' && name[3] <= '5') index = unsigned(name[3] - '0');
    if (!signature_) {
      if (!index) {
        fail(at, "unknown operand '" + name + "': aasmc knows no argument names for " + syscall_.str() +
                     "; use arg0..arg5");
        return std::nullopt;
      }
      out.index = *index;
      out.label = name;
      return out;
    }
    if (!index) {
      for (unsigned i = 0; i < signature_->count; ++i) {
        const ArgSpec& arg = signature_->args[i];
        if ((arg.name && name == arg.name) || (arg.kernel_name && name == arg.kernel_name)) index = i;
      }
      if (!index) {
        std::vector<llvm::StringRef> names = operand_names(syscall_, target_);
        std::string message = "unknown operand '" + name + "' for " + syscall_.str();
        const std::string guess = closest_match(name, names);
        if (!guess.empty()) message += "; did you mean '" + guess + "'?";
        std::vector<llvm::StringRef> primary;
        for (unsigned i = 0; i < signature_->count; ++i)
          if (signature_->args[i].name) primary.push_back(signature_->args[i].name);
        message += " (" + syscall_.str() + "'s operands: " + (primary.empty() ? "" : join(primary) + ", ") + "arg0..arg" +
                   std::to_string(signature_->count - 1) + ")";
        if (signature_->note) message += std::string("; ") + signature_->note;
        fail(at, message);
        return std::nullopt;
      }
    } else if (*index >= signature_->count) {
      fail(at, syscall_.str() + " takes " + std::to_string(signature_->count) + " argument" +
                   (signature_->count == 1 ? "" : "s") + "; " + name +
                   " is not one of them (the register holds whatever the caller left there)");
      return std::nullopt;
    }
    const ArgSpec& arg = signature_->args[*index];
    out.index = *index;
    out.bits = arg_type_bits(arg.type);
    out.is_signed = arg_type_signed(arg.type);
    out.label = name;
    return out;
  }

  std::optional<Value> value(const ConditionValue& v) {
    Value out;
    out.offset = v.terms.empty() ? 0 : v.terms.front().offset;
    bool any_negative = false;
    for (const ConditionTerm& term : v.terms) {
      if (const uint64_t* number = std::get_if<uint64_t>(&term.value)) {
        out.value |= *number;
        continue;
      }
      const std::string& name = std::get<std::string>(term.value);
      const NamedConstant* constant = find_constant(name);
      if (!constant) {
        std::string message = "unknown constant '" + name + "'";
        const std::string guess = closest_match(name, constant_names());
        if (!guess.empty()) message += "; did you mean '" + guess + "'?";
        fail(term.offset, message);
        return std::nullopt;
      }
      auto resolved = constant_value(*constant, target_);
      if (!resolved) {
        fail(term.offset, "constant '" + name + "' is not defined on " + std::string(target_.name));
        return std::nullopt;
      }
      out.value |= *resolved;
      any_negative |= constant->negative;
    }
    if (any_negative && v.terms.size() > 1) {
      fail(out.offset, "a negative constant cannot be combined with '|'");
      return std::nullopt;
    }
    out.negative = any_negative;
    return out;
  }

  // The value an equality test compares the argument's low `bits` with.
  std::optional<uint64_t> fit(const Operand& arg, const Value& v, const char* what) {
    if (arg.bits == 64) return v.value;
    const uint64_t w = arg.width_mask();
    if (v.value <= w && !v.negative) return v.value;
    if (arg.is_signed && v.negative && int64_t(v.value) >= -(int64_t(1) << (arg.bits - 1))) return v.value & w;
    fail(v.offset, std::string(what) + " " + (v.negative ? std::to_string(int64_t(v.value)) : hex(v.value)) +
                       " does not fit in " + arg.label + ", which the kernel reads as a " + std::to_string(arg.bits) +
                       "-bit " + (arg.is_signed ? "signed" : "unsigned") + " integer");
    return std::nullopt;
  }

  Node leaf(const Operand& arg, Op op, uint64_t mask, uint64_t value, size_t offset) {
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
  std::optional<Node> equality(const Operand& arg, const Value& v, bool equal, size_t at) {
    auto fitted = fit(arg, v, "value");
    if (!fitted) return std::nullopt;
    return leaf(arg, equal ? Op::kMaskedEq : Op::kMaskedNe, arg.width_mask(), *fitted, at);
  }

  // An ordering comparison. 64-bit arguments keep libseccomp's unsigned
  // 64-bit comparison; narrower ones become masked equalities over the
  // aligned blocks covering the range (exact in the kernel's type).
  std::optional<Node> ordering(const Operand& arg, Op op, const Value& v, size_t at) {
    if (arg.bits == 64) {
      if (v.negative) {
        fail(v.offset, "ordering comparisons of 64-bit arguments are unsigned; a negative constant has no meaning there");
        return std::nullopt;
      }
      const uint64_t x = v.value;
      if ((op == Op::kLt && x == 0) || (op == Op::kGt && x == kAll)) return constant(false, at);
      if ((op == Op::kGe && x == 0) || (op == Op::kLe && x == kAll)) return constant(true, at);
      return leaf(arg, op, kAll, x, at);
    }
    const uint64_t w = arg.width_mask();
    const uint64_t sign = uint64_t(1) << (arg.bits - 1);
    // Order-preserving encoding of the kernel's value into [0, w].
    uint64_t u;
    if (!arg.is_signed) {
      if (v.negative || v.value > w) {
        fit(arg, v, "value");
        return std::nullopt;
      }
      u = v.value;
    } else {
      const int64_t s = int64_t(v.value);
      const bool ok = v.negative ? s >= -int64_t(sign) : v.value < sign;
      if (!ok) {
        fail(v.offset, "value " + (v.negative ? std::to_string(s) : hex(v.value)) + " is outside the range of " +
                           arg.label + ", a " + std::to_string(arg.bits) +
                           "-bit signed integer (ordering compares it as the kernel does, signed)");
        return std::nullopt;
      }
      u = (v.value ^ sign) & w;
    }
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

  std::optional<Node> test(const ConditionTest& t, bool negate) {
    auto arg = operand(t);
    if (!arg) return std::nullopt;
    const size_t at = t.operand_offset;
    using T = ConditionTest::Op;
    const bool masked = t.op == T::kMaskAny || t.op == T::kMaskEq || t.op == T::kMaskNe;
    std::optional<Value> mask_value;  // resolved first: it comes first in the text
    if (masked && !(mask_value = value(t.mask))) return std::nullopt;
    std::vector<Value> values;
    for (const ConditionValue& v : t.values) {
      auto resolved = value(v);
      if (!resolved) return std::nullopt;
      values.push_back(*resolved);
    }
    switch (t.op) {
      case T::kEq:
      case T::kNe: return equality(*arg, values.at(0), (t.op == T::kEq) != negate, at);
      case T::kLt: return ordering(*arg, negate ? Op::kGe : Op::kLt, values.at(0), at);
      case T::kLe: return ordering(*arg, negate ? Op::kGt : Op::kLe, values.at(0), at);
      case T::kGt: return ordering(*arg, negate ? Op::kLe : Op::kGt, values.at(0), at);
      case T::kGe: return ordering(*arg, negate ? Op::kLt : Op::kGe, values.at(0), at);
      case T::kIn: {
        std::vector<Node> members;
        for (const Value& v : values) {
          auto one = equality(*arg, v, !negate, at);
          if (!one) return std::nullopt;
          members.push_back(std::move(*one));
        }
        if (members.size() == 1) return std::move(members.front());
        return group(negate ? Node::kAnd : Node::kOr, std::move(members), at);
      }
      case T::kMaskAny:
      case T::kMaskEq:
      case T::kMaskNe: break;
    }
    const uint64_t mask = mask_value->value;
    if (mask_value->negative) {
      fail(mask_value->offset, "a mask must not be a negative constant");
      return std::nullopt;
    }
    if (mask == 0) {
      fail(mask_value->offset, "the mask is 0, so the test can never be true");
      return std::nullopt;
    }
    if (mask & ~arg->width_mask()) {
      fail(mask_value->offset, "mask " + hex(mask) + " has bits above the low " + std::to_string(arg->bits) +
                                   " bits of " + arg->label + ", which the kernel ignores");
      return std::nullopt;
    }
    if (t.op == T::kMaskAny) {
      if (negate) return leaf(*arg, Op::kMaskedEq, mask, 0, at);
      // A non-zero test of a multi-bit mask: any of its bits.
      std::vector<Node> bits;
      for (uint64_t rest = mask; rest; rest &= rest - 1) {
        const uint64_t bit = rest & (~rest + 1);
        bits.push_back(leaf(*arg, Op::kMaskedEq, bit, bit, at));
      }
      if (bits.size() == 1) return std::move(bits.front());
      return group(Node::kOr, std::move(bits), at);
    }
    const Value& v = values.at(0);
    if (v.negative || (v.value & ~mask)) {
      fail(v.offset, "value " + hex(v.value) + " has bits outside the mask " + hex(mask) + ", so `" + arg->label +
                         " & " + hex(mask) + "` can never equal it");
      return std::nullopt;
    }
    const bool equal = (t.op == T::kMaskEq) != negate;
    return leaf(*arg, equal ? Op::kMaskedEq : Op::kMaskedNe, mask, v.value, at);
  }

  std::optional<Node> convert(const ConditionExpr& e, bool negate) {
    switch (e.kind) {
      case ConditionExpr::Kind::kTest: return test(e.test, negate);
      case ConditionExpr::Kind::kNot: return convert(e.children.at(0), !negate);
      case ConditionExpr::Kind::kAnd:
      case ConditionExpr::Kind::kOr: {
        const bool is_and = (e.kind == ConditionExpr::Kind::kAnd) != negate;
        std::vector<Node> children;
        for (const ConditionExpr& child : e.children) {
          auto c = convert(child, negate);
          if (!c) return std::nullopt;
          children.push_back(std::move(*c));
        }
        const size_t offset = children.front().offset;
        return group(is_and ? Node::kAnd : Node::kOr, std::move(children), offset);
      }
    }
    return std::nullopt;
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
  const SyscallSignature* signature_;
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
        out += "(" + arg + " & " + hex(c.mask) + ") " + op + " " + hex(c.value);
      else
        out += arg + " " + op + " " + hex(c.value);
    }
    if (paren) out += ")";
  }
  return out;
}

}  // namespace

std::optional<NormalizedCondition> normalize_condition(const ConditionExpr& expr, llvm::StringRef syscall,
                                                       const Target& target, ConditionError& error) {
  return Normalizer(syscall, target, error).run(expr);
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

}  // namespace aasmc
