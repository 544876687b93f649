#include "middle/condition_resolve.h"

#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include "support/diagnostics.h"
#include "tables/constants.h"
#include "tables/syscall_signatures.h"

namespace aasmc {

std::string condition_hex(uint64_t value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::format_hex(value, 0);
  return out;
}

namespace {

struct Operand {
  ResolvedArgument arg;
  std::string label;  // as written, for messages
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

// Depth-first in the text's order, stopping at the first error.
class Resolver {
 public:
  Resolver(llvm::StringRef syscall, const Target& target, ConditionError& error)
      : syscall_(syscall), target_(target), error_(error), signature_(find_signature(syscall, target)) {}

  std::optional<ResolvedCondition> resolve(const ConditionExpr& expr) {
    ResolvedCondition out;
    out.kind = expr.kind;
    if (expr.kind == ConditionExpr::Kind::kTest) {
      std::optional<ResolvedTest> resolved = test(expr.test);
      if (!resolved) return std::nullopt;
      out.test = std::move(*resolved);
      return out;
    }
    for (const ConditionExpr& child : expr.children) {
      std::optional<ResolvedCondition> resolved = resolve(child);
      if (!resolved) return std::nullopt;
      out.children.push_back(std::move(*resolved));
    }
    return out;
  }

 private:
  void fail(size_t offset, std::string message) { error_ = {offset, std::move(message)}; }

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
      out.arg.index = *index;
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
    out.arg = {*index, arg_type_bits(arg.type), arg_type_signed(arg.type)};
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
  std::optional<uint64_t> fit(const Operand& operand, const Value& v) {
    const ResolvedArgument& arg = operand.arg;
    if (arg.bits == 64) return v.value;
    const uint64_t w = arg.width_mask();
    if (v.value <= w && !v.negative) return v.value;
    if (arg.is_signed && v.negative && int64_t(v.value) >= -(int64_t(1) << (arg.bits - 1))) return v.value & w;
    fail(v.offset, "value " + (v.negative ? std::to_string(int64_t(v.value)) : condition_hex(v.value)) +
                       " does not fit in " + operand.label + ", which the kernel reads as a " +
                       std::to_string(arg.bits) + "-bit " + (arg.is_signed ? "signed" : "unsigned") + " integer");
    return std::nullopt;
  }

  // The value of an ordering comparison, encoded as ResolvedTest says.
  std::optional<uint64_t> ordered(const Operand& operand, const Value& v) {
    const ResolvedArgument& arg = operand.arg;
    if (arg.bits == 64) {
      if (!v.negative) return v.value;
      fail(v.offset, "ordering comparisons of 64-bit arguments are unsigned; a negative constant has no meaning there");
      return std::nullopt;
    }
    if (!arg.is_signed) return fit(operand, v);
    const uint64_t sign = uint64_t(1) << (arg.bits - 1);
    const int64_t s = int64_t(v.value);
    if (v.negative ? s >= -int64_t(sign) : v.value < sign) return (v.value ^ sign) & arg.width_mask();
    fail(v.offset, "value " + (v.negative ? std::to_string(s) : condition_hex(v.value)) + " is outside the range of " +
                       operand.label + ", a " + std::to_string(arg.bits) +
                       "-bit signed integer (ordering compares it as the kernel does, signed)");
    return std::nullopt;
  }

  std::optional<ResolvedTest> test(const ConditionTest& t) {
    const std::optional<Operand> arg = operand(t);
    if (!arg) return std::nullopt;
    using T = ConditionTest::Op;
    ResolvedTest out{t.op, arg->arg, 0, {}, t.operand_offset};
    const bool masked = t.op == T::kMaskAny || t.op == T::kMaskEq || t.op == T::kMaskNe;
    std::optional<Value> mask;  // resolved first: it comes first in the text
    if (masked && !(mask = value(t.mask))) return std::nullopt;
    std::vector<Value> values;
    for (const ConditionValue& v : t.values) {
      std::optional<Value> resolved = value(v);
      if (!resolved) return std::nullopt;
      values.push_back(*resolved);
    }
    switch (t.op) {
      case T::kEq:
      case T::kNe:
      case T::kIn:
        for (const Value& v : values) {
          const std::optional<uint64_t> fitted = fit(*arg, v);
          if (!fitted) return std::nullopt;
          out.values.push_back(*fitted);
        }
        return out;
      case T::kLt:
      case T::kLe:
      case T::kGt:
      case T::kGe: {
        const std::optional<uint64_t> encoded = ordered(*arg, values.at(0));
        if (!encoded) return std::nullopt;
        out.values.push_back(*encoded);
        return out;
      }
      case T::kMaskAny:
      case T::kMaskEq:
      case T::kMaskNe: break;
    }
    if (mask->negative) {
      fail(mask->offset, "a mask must not be a negative constant");
      return std::nullopt;
    }
    if (mask->value == 0) {
      fail(mask->offset, "the mask is 0, so the test can never be true");
      return std::nullopt;
    }
    if (mask->value & ~out.arg.width_mask()) {
      fail(mask->offset, "mask " + condition_hex(mask->value) + " has bits above the low " +
                             std::to_string(out.arg.bits) + " bits of " + arg->label + ", which the kernel ignores");
      return std::nullopt;
    }
    out.mask = mask->value;
    if (t.op == T::kMaskAny) return out;
    const Value& v = values.at(0);
    if (v.negative || (v.value & ~out.mask)) {
      fail(v.offset, "value " + condition_hex(v.value) + " has bits outside the mask " + condition_hex(out.mask) +
                         ", so `" + arg->label + " & " + condition_hex(out.mask) + "` can never equal it");
      return std::nullopt;
    }
    out.values.push_back(v.value);
    return out;
  }

  llvm::StringRef syscall_;
  const Target& target_;
  ConditionError& error_;
  const SyscallSignature* signature_;
};

}  // namespace

std::optional<ResolvedCondition> resolve_condition(const ConditionExpr& expr, llvm::StringRef syscall,
                                                   const Target& target, ConditionError& error) {
  return Resolver(syscall, target, error).resolve(expr);
}

}  // namespace aasmc
