#include "frontend/json_tree.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/ConvertUTF.h>

#include <cctype>
#include <string>

namespace aasmc {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A recursive descent over the buffer; the first fault is reported and ends
// the parse (a JSON input has one value: nothing after the fault can be read
// with confidence). Recursion is bounded by kMaxNestingDepth.
class JsonReader {
 public:
  JsonReader(llvm::StringRef text, Diagnostics& diags) : at_(text.begin()), end_(text.end()), diags_(diags) {}

  std::optional<YamlNode> document() {
    if (llvm::StringRef(at_, end_ - at_).startswith("\xEF\xBB\xBF")) at_ += 3;  // RFC 8259 8.1: may be ignored
    skip_space();
    std::optional<YamlNode> root = value(0);
    if (!root) return std::nullopt;
    skip_space();
    if (at_ != end_) return fail(at_, "unexpected " + describe(at_) + " after the JSON value");
    return root;
  }

 private:
  std::nullopt_t fail(const char* where, const std::string& message, const char* id = diag::kJsonSyntax) {
    diags_.error(llvm::SMLoc::getFromPointer(where), message, id);
    return std::nullopt;
  }

  std::string describe(const char* where) const {
    if (where >= end_) return "end of file";
    const unsigned char c = static_cast<unsigned char>(*where);
    if (c > ' ' && c < 0x7f) return "'" + std::string(1, char(c)) + "'";
    return "byte 0x" + llvm::utohexstr(c, /*LowerCase=*/true);
  }

  void skip_space() {
    while (at_ != end_ && is_space(*at_)) ++at_;
  }

  bool take(char c) {
    if (at_ == end_ || *at_ != c) return false;
    ++at_;
    return true;
  }

  std::optional<YamlNode> value(unsigned depth) {
    if (at_ == end_) return fail(at_, "expected a JSON value, found the end of the file");
    switch (*at_) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string_node();
      case 't': return word("true");
      case 'f': return word("false");
      case 'n': return word("null");
      default:
        if (*at_ == '-' || is_digit(*at_)) return number();
        return fail(at_, "expected a JSON value, found " + describe(at_));
    }
  }

  std::optional<YamlNode> container_start(YamlNode::Kind kind, unsigned depth) {
    YamlNode node;
    node.kind = kind;
    node.loc = llvm::SMLoc::getFromPointer(at_);
    if (depth > kMaxNestingDepth)
      return fail(at_, "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels", diag::kTooLarge);
    ++at_;
    skip_space();
    return node;
  }

  std::optional<YamlNode> object(unsigned depth) {
    std::optional<YamlNode> node = container_start(YamlNode::Kind::kMap, depth);
    if (!node) return std::nullopt;
    if (take('}')) return node;
    llvm::StringMap<llvm::SMLoc> seen;
    while (true) {
      if (at_ == end_ || *at_ != '"') return fail(at_, "expected a quoted key, found " + describe(at_));
      std::optional<YamlNode> key = string_node();
      if (!key) return std::nullopt;
      if (auto [first, inserted] = seen.try_emplace(key->scalar, key->loc); !inserted) {
        diags_.error(key->loc, "duplicate key '" + key->scalar + "'", diag::kDuplicateKey, key->range());
        diags_.note(first->second, "first given here");
        return std::nullopt;
      }
      skip_space();
      if (!take(':')) return fail(at_, "expected ':' after the key, found " + describe(at_));
      skip_space();
      std::optional<YamlNode> item = value(depth);
      if (!item) return std::nullopt;
      node->entries.push_back({std::move(*key), std::move(*item)});
      if (!separator('}')) return failed_ ? std::nullopt : node;
    }
  }

  std::optional<YamlNode> array(unsigned depth) {
    std::optional<YamlNode> node = container_start(YamlNode::Kind::kSequence, depth);
    if (!node) return std::nullopt;
    if (take(']')) return node;
    while (true) {
      std::optional<YamlNode> item = value(depth);
      if (!item) return std::nullopt;
      node->items.push_back(std::move(*item));
      if (!separator(']')) return failed_ ? std::nullopt : node;
    }
  }

  // After a member: true at ',' (another member must follow: no trailing
  // comma), false at `close` (the container ends) or on a fault (failed_).
  bool separator(char close) {
    skip_space();
    if (take(close)) return false;
    if (!take(',')) {
      fail(at_, std::string("expected ',' or '") + close + "', found " + describe(at_));
      failed_ = true;
      return false;
    }
    skip_space();
    if (at_ != end_ && *at_ == close) {
      fail(at_, std::string("trailing ',' before '") + close + "': JSON allows none");
      failed_ = true;
      return false;
    }
    return true;
  }

  std::optional<YamlNode> word(llvm::StringRef text) {
    YamlNode node;
    node.loc = llvm::SMLoc::getFromPointer(at_);
    if (!llvm::StringRef(at_, end_ - at_).startswith(text) ||
        (at_ + text.size() != end_ && (std::isalnum(static_cast<unsigned char>(at_[text.size()])) || at_[text.size()] == '_')))
      return fail(at_, "expected a JSON value, found a bare word (strings are written in double quotes)");
    at_ += text.size();
    if (text == "null") return node;
    node.kind = YamlNode::Kind::kScalar;
    node.scalar = text.str();
    return node;
  }

  // RFC 8259 6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text
  // (the importer reads the integers it needs and refuses the rest).
  std::optional<YamlNode> number() {
    const char* start = at_;
    take('-');
    if (at_ == end_ || !is_digit(*at_)) return fail(at_, "expected a digit, found " + describe(at_));
    if (*at_ == '0' && at_ + 1 != end_ && is_digit(at_[1])) return fail(at_, "a number with a leading zero");
    while (at_ != end_ && is_digit(*at_)) ++at_;
    if (take('.')) {
      if (at_ == end_ || !is_digit(*at_)) return fail(at_, "expected a digit after '.', found " + describe(at_));
      while (at_ != end_ && is_digit(*at_)) ++at_;
    }
    if (take('e') || take('E')) {
      if (!take('+')) take('-');
      if (at_ == end_ || !is_digit(*at_)) return fail(at_, "expected an exponent, found " + describe(at_));
      while (at_ != end_ && is_digit(*at_)) ++at_;
    }
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.loc = llvm::SMLoc::getFromPointer(start);
    node.scalar.assign(start, at_);
    return node;
  }

  std::optional<unsigned> hex4() {
    unsigned out = 0;
    for (int i = 0; i < 4; ++i, ++at_) {
      const int digit = at_ == end_ ? -1 : hex_value(*at_);
      if (digit < 0) {
        fail(at_, "expected four hex digits after \\u, found " + describe(at_));
        return std::nullopt;
      }
      out = out * 16 + unsigned(digit);
    }
    return out;
  }

  // \uXXXX, a surrogate pair written as two; appended as UTF-8.
  bool unicode_escape(const char* escape, std::string& out) {
    std::optional<unsigned> unit = hex4();
    if (!unit) return false;
    unsigned code = *unit;
    if (code >= 0xDC00 && code <= 0xDFFF) return fail(escape, "a lone low surrogate in \\u escape"), false;
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (!(take('\\') && take('u'))) return fail(escape, "a high surrogate not followed by a low one"), false;
      std::optional<unsigned> low = hex4();
      if (!low) return false;
      if (*low < 0xDC00 || *low > 0xDFFF) return fail(escape, "a high surrogate not followed by a low one"), false;
      code = 0x10000 + ((code - 0xD800) << 10) + (*low - 0xDC00);
    }
    if (code == 0) return fail(escape, "\\u0000: a NUL in a string"), false;
    char bytes[UNI_MAX_UTF8_BYTES_PER_CODE_POINT];
    char* end = bytes;
    llvm::ConvertCodePointToUTF8(code, end);
    out.append(bytes, end);
    return true;
  }

  std::optional<YamlNode> string_node() {
    YamlNode node;
    node.kind = YamlNode::Kind::kScalar;
    node.quoted = true;
    node.loc = llvm::SMLoc::getFromPointer(at_);
    ++at_;  // the opening quote
    while (true) {
      if (at_ == end_) return fail(node.loc.getPointer(), "a string without its closing quote");
      const char c = *at_;
      if (c == '"') break;
      if (static_cast<unsigned char>(c) < 0x20)
        return fail(at_, "a control character in a string (write it as an escape)");
      if (c != '\\') {
        node.scalar += c;
        ++at_;
        continue;
      }
      const char* escape = at_++;
      const char kind = at_ == end_ ? '\0' : *at_++;
      switch (kind) {
        case '"': node.scalar += '"'; break;
        case '\\': node.scalar += '\\'; break;
        case '/': node.scalar += '/'; break;
        case 'b': node.scalar += '\b'; break;
        case 'f': node.scalar += '\f'; break;
        case 'n': node.scalar += '\n'; break;
        case 'r': node.scalar += '\r'; break;
        case 't': node.scalar += '\t'; break;
        case 'u':
          if (!unicode_escape(escape, node.scalar)) return std::nullopt;
          break;
        default: return fail(escape, "an unknown escape in a string");
      }
    }
    ++at_;  // the closing quote
    return node;
  }

  const char* at_;
  const char* const end_;
  Diagnostics& diags_;
  bool failed_ = false;
};

}  // namespace

std::optional<YamlNode> load_json_document(unsigned buffer, Diagnostics& diags) {
  if (!check_policy_text(buffer, diags, "input file")) return std::nullopt;
  return JsonReader(diags.sources().getMemoryBuffer(buffer)->getBuffer(), diags).document();
}

bool is_json_string(const YamlNode& node) { return node.kind == YamlNode::Kind::kScalar && node.quoted; }

bool is_json_bool(const YamlNode& node) {
  return node.kind == YamlNode::Kind::kScalar && !node.quoted && (node.scalar == "true" || node.scalar == "false");
}

bool is_json_number(const YamlNode& node) {
  return node.kind == YamlNode::Kind::kScalar && !node.quoted && !is_json_bool(node);
}

}  // namespace aasmc
