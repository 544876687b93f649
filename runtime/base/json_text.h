// JSON text for the runtime's reports (receipts, `aasm-launch --dry-run
// --json`, `aasm-launch doctor --json`): libc only, as the launcher is. One
// writer, so every report quotes the same way; keys come out in the order
// they are written, so the output is deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aasm::json {

// `text` as a JSON string literal: '"' and '\\' escaped, control characters
// as \u00XX, every other byte as it is (UTF-8 passes through).
std::string quoted(std::string_view text);

// Compact JSON, built in order: begin/end nest, key() names the next value
// inside an object; the commas are the writer's.
class Writer {
 public:
  Writer& begin_object() { return open('{'); }
  Writer& end_object() { return close('}'); }
  Writer& begin_array() { return open('['); }
  Writer& end_array() { return close(']'); }
  Writer& key(std::string_view name);
  Writer& value(std::string_view text);
  Writer& value(const char* text) { return value(std::string_view(text)); }
  Writer& value(const std::string& text) { return value(std::string_view(text)); }
  Writer& value(int64_t number);
  Writer& value(int number) { return value(int64_t(number)); }
  Writer& value(uint64_t number);
  Writer& value(uint32_t number) { return value(uint64_t(number)); }
  Writer& value(bool flag);
  Writer& strings(const std::vector<std::string>& items);  // an array of strings
  // The document, with a final newline.
  std::string text() const { return out_ + "\n"; }

 private:
  Writer& open(char bracket);
  Writer& close(char bracket);
  void separate();  // the comma before an item, unless it follows its key
  std::string out_;
  std::vector<bool> first_;  // per open object or array: no item yet
  bool after_key_ = false;
};

}  // namespace aasm::json
