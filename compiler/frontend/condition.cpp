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

class Converter {
 public:
  explicit Converter(ConditionError& error) : error_(error) {}

  std::optional<ConditionExpr> expr(ConditionParser::ExprContext* ctx) {
    if (auto* c = dynamic_cast<ConditionParser::GroupContext*>(ctx)) return expr(c->expr());
    if (auto* c = dynamic_cast<ConditionParser::NotContext*>(ctx)) return combine(ConditionExpr::Kind::kNot, {c->expr()});
    if (auto* c = dynamic_cast<ConditionParser::AndContext*>(ctx))
      return combine(ConditionExpr::Kind::kAnd, {c->expr(0), c->expr(1)});
    if (auto* c = dynamic_cast<ConditionParser::OrContext*>(ctx))
      return combine(ConditionExpr::Kind::kOr, {c->expr(0), c->expr(1)});
    ConditionExpr out;
    ConditionTest& test = out.test;
    if (auto* c = dynamic_cast<ConditionParser::CompareContext*>(ctx)) {
      operand(c->operand(), test);
      test.op = compare_op(c->op->getType());
      if (!push_value(c->value(), test.values)) return std::nullopt;
    } else if (auto* c = dynamic_cast<ConditionParser::MaskedContext*>(ctx)) {
      operand(c->operand(), test);
      if (!value(c->value(0), test.mask)) return std::nullopt;
      test.op = ConditionTest::Op::kMaskAny;
      if (c->op) {
        test.op = c->op->getType() == ConditionParser::EQ ? ConditionTest::Op::kMaskEq : ConditionTest::Op::kMaskNe;
        if (!push_value(c->value(1), test.values)) return std::nullopt;
      }
    } else if (auto* c = dynamic_cast<ConditionParser::MemberContext*>(ctx)) {
      operand(c->operand(), test);
      test.op = ConditionTest::Op::kIn;
      for (auto* v : c->value())
        if (!push_value(v, test.values)) return std::nullopt;
    } else {
      error_ = {0, "unrecognized condition"};
      return std::nullopt;
    }
    return out;
  }

 private:
  std::optional<ConditionExpr> combine(ConditionExpr::Kind kind, std::initializer_list<ConditionParser::ExprContext*> parts) {
    ConditionExpr out;
    out.kind = kind;
    for (auto* part : parts) {
      auto child = expr(part);
      if (!child) return std::nullopt;
      out.children.push_back(std::move(*child));
    }
    return out;
  }

  static ConditionTest::Op compare_op(size_t token) {
    switch (token) {
      case ConditionParser::NE: return ConditionTest::Op::kNe;
      case ConditionParser::LT: return ConditionTest::Op::kLt;
      case ConditionParser::LE: return ConditionTest::Op::kLe;
      case ConditionParser::GT: return ConditionTest::Op::kGt;
      case ConditionParser::GE: return ConditionTest::Op::kGe;
      default: return ConditionTest::Op::kEq;
    }
  }

  static void operand(ConditionParser::OperandContext* ctx, ConditionTest& test) {
    test.operand = ctx->getText();
    test.operand_offset = ctx->getStart()->getCharPositionInLine();
  }

  bool push_value(ConditionParser::ValueContext* ctx, std::vector<ConditionValue>& into) {
    ConditionValue v;
    if (!value(ctx, v)) return false;
    into.push_back(std::move(v));
    return true;
  }

  bool value(ConditionParser::ValueContext* ctx, ConditionValue& out) {
    for (auto* term : ctx->term()) {
      const antlr4::Token* token = term->getStart();
      ConditionTerm t;
      t.offset = token->getCharPositionInLine();
      t.length = token->getText().size();
      if (term->NUMBER()) {
        auto number = parse_number(token->getText());
        if (!number) {
          error_ = {t.offset, "integer '" + token->getText() + "' does not fit in 64 bits"};
          return false;
        }
        t.value = *number;
      } else {
        t.value = token->getText();
      }
      out.terms.push_back(std::move(t));
    }
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
  return Converter(error).expr(tree->expr());
}

}  // namespace aasmc
