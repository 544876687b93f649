// The canonical JSON a receipt is sealed over (docs/receipts.md#the-seal):
// RFC 8785 (JCS) for documents without fractional numbers. Objects' members
// sorted by name (bytewise: every name is ASCII), no whitespace, integers in
// decimal, strings as UTF-8 with only '"', '\\' and the control characters
// escaped (\b \t \n \f \r by name, the others \u00xx, lower-case hex);
// invalid UTF-8 becomes U+FFFD. The launcher writes receipts with it and
// `aasmc receipt verify` re-derives the sealed bytes with it: one writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace aasm::json {

struct Value;
using Array = std::vector<Value>;
using Object = std::map<std::string, Value>;  // std::string's order: bytewise

struct Value {
  std::variant<std::nullptr_t, bool, int64_t, std::string, Array, Object> v;
  Value() : v(nullptr) {}
  Value(bool b) : v(b) {}
  Value(int64_t n) : v(n) {}
  Value(int n) : v(int64_t(n)) {}
  Value(uint64_t n) : v(int64_t(n)) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(const char* s) : v(std::string(s)) {}
  Value(Array a) : v(std::move(a)) {}
  Value(Object o) : v(std::move(o)) {}
};

// The canonical text of `value`, no trailing newline.
std::string canonical(const Value& value);

// A string's canonical text, quotes included.
std::string canonical_string(std::string_view text);

Array strings(const std::vector<std::string>& items);

}  // namespace aasm::json
