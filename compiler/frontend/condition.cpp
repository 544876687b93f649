#include "frontend/condition.h"

#include <ConditionLexer.h>
#include <ConditionParser.h>
#include <antlr4-runtime.h>

#include <cerrno>
#include <cstdlib>

namespace aasmc {
namespace {

using aasm_grammar::ConditionLexer;
using aasm_grammar::ConditionParser;

// Keeps the first syntax error (lexer or parser) with its column.
class FirstErrorListener : public antlr4::BaseErrorListener {
 public:
  void syntaxError(antlr4::Recognizer*, antlr4::Token* token, size_t, size_t column, const std::string& message,
                   std::exception_ptr) override {
    if (error) return;
    std::string text = message;
    if (token && token->getType() == antlr4::Token::EOF) text = "the condition ends too early";
    error = ConditionError{column, text};
  }
  std::optional<ConditionError> error;
};

using P = ConditionParser;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The parse tree to the AST. The grammar accepts the forms C reads
// differently from what they seem to say; each is refused here with the
// C reading and the parenthesized fix-it (clang's -Wparentheses).
class Converter {
 public:
  Converter(std::string_view text, ConditionError& error) : text_(text), error_(error) {}

  std::optional<ConditionExpr> disjunction(P::DisjunctionContext* ctx) { return chain(ConditionExpr::Kind::kOr, ctx->conjunction()); }

 private:
  // `a || b || c` as ((a || b) || c), as C groups it.
  template <class Part>
  std::optional<ConditionExpr> chain(ConditionExpr::Kind kind, const std::vector<Part*>& parts) {
    std::vector<ConditionExpr> converted;
    for (Part* p : parts) {
      auto next = part(p);
      if (!next) return std::nullopt;
      converted.push_back(std::move(*next));
    }
    return chained(kind, std::move(converted));
  }
  std::optional<ConditionExpr> part(P::ConjunctionContext* ctx) { return chain(ConditionExpr::Kind::kAnd, ctx->unary()); }
  std::optional<ConditionExpr> part(P::UnaryContext* ctx) { return unary(ctx); }

  std::optional<ConditionExpr> unary(P::UnaryContext* ctx) {
    if (auto* c = dynamic_cast<P::GroupContext*>(ctx)) return disjunction(c->disjunction());
    if (auto* c = dynamic_cast<P::NotContext*>(ctx)) {
      P::UnaryContext* child = c->unary();
      if (!dynamic_cast<P::GroupContext*>(child) && !dynamic_cast<P::NotContext*>(child)) return not_before_test(c, child);
      auto inner = unary(child);
      if (!inner) return std::nullopt;
      return negation(std::move(*inner));
    }
    ConditionExpr out;
    ConditionTest& test = out.test;
    if (auto* c = dynamic_cast<P::ComparisonContext*>(ctx)) {
      operand(c->operand(), test);
      test.op = compare_op(c->op->getStart()->getType());
      if (!push_value(c->value(), ctx, slice(c->op), test.values)) return std::nullopt;
    } else if (auto* c = dynamic_cast<P::MemberContext*>(ctx)) {
      operand(c->operand(), test);
      test.op = ConditionTest::Op::kIn;
      for (auto* v : c->value())  // `|` inside `{}` is unambiguous: commas delimit
        if (!push_value(v, nullptr, "", test.values)) return std::nullopt;
    } else if (auto* c = dynamic_cast<P::MaskedCompareContext*>(ctx)) {
      if (!masked(c->operand(), c->value(0), c->op, c->value(1), ctx, test)) return std::nullopt;
    } else if (auto* c = dynamic_cast<P::MaskedContext*>(ctx)) {
      if (c->op && is_masked_equality(c->op)) {
        const std::string op = slice(c->op);
        // With a bare `A | B` on either side, C's reading has three levels; say only why.
        const bool plain = is_single(c->value(0)) && is_single(c->value(1));
        fail(start(c->AMP()), plain ? "C reads `" + slice(ctx) + "` as `" + slice(c->operand()) + " & (" + slice(c->value(0)) +
                                          " " + op + " " + slice(c->value(1)) + ")`: `" + op +
                                          "` binds tighter than `&`; write `" + fixed(ctx) + "`"
                                    : "in C, `" + op + "` binds tighter than `&`, and `|` looser than both; write `" +
                                          fixed(ctx) + "`");
        return std::nullopt;
      }
      if (!masked(c->operand(), c->value(0), c->op, c->op ? c->value(1) : nullptr, ctx, test)) return std::nullopt;
    } else {
      fail(0, "unrecognized condition");
      return std::nullopt;
    }
    return out;
  }

  // `x & M`, or `(x & M) == V` / `!= V`.
  bool masked(P::OperandContext* arg, P::ValueContext* mask, P::RelopContext* op, P::ValueContext* value,
              P::UnaryContext* ctx, ConditionTest& test) {
    operand(arg, test);
    if (!push_value(mask, ctx, "&", test.values)) return false;
    test.mask = std::move(test.values.back());
    test.values.clear();
    test.op = ConditionTest::Op::kMaskAny;
    if (!op) return true;
    if (!is_masked_equality(op))
      return fail(start(op), "a masked value is compared with `==` or `!=` only (libseccomp has no masked ordering)");
    test.op = op->getStart()->getType() == P::EQ ? ConditionTest::Op::kMaskEq : ConditionTest::Op::kMaskNe;
    return push_value(value, ctx, slice(op), test.values);
  }

  // `!x == V`: C applies `!` to the operand alone.
  std::nullopt_t not_before_test(P::NotContext* ctx, P::UnaryContext* test) {
    size_t left_end = test->getStart()->getStopIndex() + 1;  // the operand, or `(x & M)`
    std::string binding = "in";
    if (auto* c = dynamic_cast<P::MaskedCompareContext*>(test)) {
      left_end = c->RPAREN()->getSymbol()->getStopIndex() + 1;
      binding = slice(c->op);
    } else if (dynamic_cast<P::MaskedContext*>(test)) {
      binding = "&";
    } else if (auto* c = dynamic_cast<P::ComparisonContext*>(test)) {
      binding = slice(c->op);
    }
    const size_t left = test->getStart()->getStartIndex();
    const size_t end = test->getStop()->getStopIndex() + 1;
    const std::string fix = "write `!(" + fixed(test) + ")`";
    if (binding == "in") {  // not C's, but `!` still takes the operand alone
      fail(start(ctx->NOT()), "`!` applies to `" + slice(test->getStart()) + "` alone, as in C; " + fix);
      return std::nullopt;
    }
    fail(start(ctx->NOT()), "C reads `" + slice(ctx) + "` as `(!" + std::string(text_.substr(left, left_end - left)) +
                                ") " + std::string(trim(text_.substr(left_end, end - left_end))) + "`: `!` binds tighter than `" +
                                binding + "`; " + fix);
    return std::nullopt;
  }

  // The test as written, with the parentheses C needs to read it so.
  std::string fixed(P::UnaryContext* ctx) {
    auto masked_text = [&](P::OperandContext* arg, P::ValueContext* mask, P::RelopContext* op, P::ValueContext* value) {
      const std::string m = slice(arg) + " & " + value_text(mask);
      return op ? "(" + m + ") " + slice(op) + " " + value_text(value) : m;
    };
    if (auto* c = dynamic_cast<P::ComparisonContext*>(ctx)) return slice(c->operand()) + " " + slice(c->op) + " " + value_text(c->value());
    if (auto* c = dynamic_cast<P::MaskedCompareContext*>(ctx)) return masked_text(c->operand(), c->value(0), c->op, c->value(1));
    if (auto* c = dynamic_cast<P::MaskedContext*>(ctx))
      return masked_text(c->operand(), c->value(0), c->op, c->op ? c->value(1) : nullptr);
    return slice(ctx);
  }

  // One term, or parenthesized: nothing for C to read otherwise.
  static bool is_single(P::ValueContext* v) { return v->LPAREN() || v->terms()->term().size() == 1; }
  std::string value_text(P::ValueContext* v) { return is_single(v) ? slice(v) : "(" + slice(v) + ")"; }

  static bool is_masked_equality(P::RelopContext* op) {
    const size_t type = op->getStart()->getType();
    return type == P::EQ || type == P::NE;
  }

  static ConditionTest::Op compare_op(size_t token) {
    switch (token) {
      case P::NE: return ConditionTest::Op::kNe;
      case P::LT: return ConditionTest::Op::kLt;
      case P::LE: return ConditionTest::Op::kLe;
      case P::GT: return ConditionTest::Op::kGt;
      case P::GE: return ConditionTest::Op::kGe;
      default: return ConditionTest::Op::kEq;
    }
  }

  static void operand(P::OperandContext* ctx, ConditionTest& test) {
    test.operand = ctx->getText();
    test.operand_offset = ctx->getStart()->getStartIndex();
  }

  // A value after an operator of `test` (null inside `{}`): C reads a bare
  // `A | B` there as `(x == A) | B`, so it must be parenthesized.
  bool push_value(P::ValueContext* ctx, P::UnaryContext* test, const std::string& after, std::vector<ConditionValue>& into) {
    const auto terms = ctx->terms()->term();
    if (test && !is_single(ctx)) {
      antlr4::tree::TerminalNode* pipe = ctx->terms()->PIPE(0);
      const size_t left = test->getStart()->getStartIndex();
      const size_t first_end = terms.front()->getStop()->getStopIndex() + 1;
      const size_t end = ctx->getStop()->getStopIndex() + 1;
      const size_t rest = pipe->getSymbol()->getStopIndex() + 1;
      return fail(start(pipe), "C reads `" + slice(test) + "` as `(" + std::string(text_.substr(left, first_end - left)) +
                                   ") | " + std::string(trim(text_.substr(rest, end - rest))) + "`: `|` binds looser than `" +
                                   after + "`; write `" + fixed(test) + "`");
    }
    ConditionValue v;
    for (auto* term : terms) {
      const antlr4::Token* token = term->getStart();
      ConditionTerm t;
      t.offset = token->getStartIndex();
      t.length = token->getText().size();
      if (term->NUMBER()) {
        auto number = parse_number(token->getText());
        if (!number) return fail(t.offset, "integer '" + token->getText() + "' does not fit in 64 bits");
        t.value = *number;
      } else {
        t.value = token->getText();
      }
      v.terms.push_back(std::move(t));
    }
    into.push_back(std::move(v));
    return true;
  }

  static std::optional<uint64_t> parse_number(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    // strtoull's base 0 reads 0x.. as hex and 0.. as octal, as the grammar does.
    const unsigned long long value = std::strtoull(text.c_str(), &end, 0);
    if (errno == ERANGE || *end != '\0') return std::nullopt;
    return uint64_t(value);
  }

  static size_t start(antlr4::tree::TerminalNode* node) { return node->getSymbol()->getStartIndex(); }
  static size_t start(antlr4::ParserRuleContext* ctx) { return ctx->getStart()->getStartIndex(); }

  std::string slice(antlr4::Token* token) const { return token->getText(); }
  std::string slice(antlr4::ParserRuleContext* ctx) const {
    const size_t from = ctx->getStart()->getStartIndex();
    return std::string(text_.substr(from, ctx->getStop()->getStopIndex() + 1 - from));
  }

  bool fail(size_t offset, std::string message) {
    error_ = {offset, std::move(message)};
    return false;
  }

  std::string_view text_;
  ConditionError& error_;
};

std::optional<ConditionError> check_limits(std::string_view text) {
  if (text.size() > kMaxConditionBytes)
    return ConditionError{0, "condition is longer than " + std::to_string(kMaxConditionBytes) + " bytes"};
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    // The grammar is ASCII; ANTLR's input stream would throw on bytes that
    // are not UTF-8 before the lexer could call them unexpected.
    if (uint8_t(text[i]) >= 0x80) return ConditionError{i, "unexpected non-ASCII byte in the condition"};
    if (text[i] == '(' && ++depth > kMaxConditionNesting)
      return ConditionError{i, "condition nests deeper than " + std::to_string(kMaxConditionNesting) + " parentheses"};
    if (text[i] == ')' && depth > 0) --depth;
  }
  return std::nullopt;
}

}  // namespace

ConditionExpr chained(ConditionExpr::Kind kind, std::vector<ConditionExpr> parts) {
  ConditionExpr out = std::move(parts.front());
  for (size_t i = 1; i < parts.size(); ++i) {
    ConditionExpr both;
    both.kind = kind;
    both.children.push_back(std::move(out));
    both.children.push_back(std::move(parts[i]));
    out = std::move(both);
  }
  return out;
}

ConditionExpr negation(ConditionExpr operand) {
  ConditionExpr out;
  out.kind = ConditionExpr::Kind::kNot;
  out.children.push_back(std::move(operand));
  return out;
}

std::optional<ConditionExpr> parse_condition(std::string_view text, ConditionError& error) {
  if (auto limit = check_limits(text)) {
    error = *limit;
    return std::nullopt;
  }
  antlr4::ANTLRInputStream input(text.data(), text.size());
  ConditionLexer lexer(&input);
  antlr4::CommonTokenStream tokens(&lexer);
  ConditionParser parser(&tokens);
  FirstErrorListener listener;
  lexer.removeErrorListeners();
  parser.removeErrorListeners();
  lexer.addErrorListener(&listener);
  parser.addErrorListener(&listener);
  ConditionParser::ConditionContext* tree = parser.condition();
  if (listener.error) {
    error = *listener.error;
    return std::nullopt;
  }
  return Converter(text, error).disjunction(tree->disjunction());
}

}  // namespace aasmc
