#include "base/json_text.h"

#include <cstdio>

namespace aasm::json {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

void Writer::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_ += ',';
  first_.back() = false;
}

Writer& Writer::open(char bracket) {
  separate();
  out_ += bracket;
  first_.push_back(true);
  return *this;
}

Writer& Writer::close(char bracket) {
  out_ += bracket;
  first_.pop_back();
  return *this;
}

Writer& Writer::key(std::string_view name) {
  separate();
  out_ += quoted(name) + ':';
  after_key_ = true;
  return *this;
}

Writer& Writer::value(std::string_view text) {
  separate();
  out_ += quoted(text);
  return *this;
}

Writer& Writer::value(int64_t number) {
  separate();
  out_ += std::to_string(number);
  return *this;
}

Writer& Writer::value(uint64_t number) {
  separate();
  out_ += std::to_string(number);
  return *this;
}

Writer& Writer::value(bool flag) {
  separate();
  out_ += flag ? "true" : "false";
  return *this;
}

Writer& Writer::strings(const std::vector<std::string>& items) {
  begin_array();
  for (const std::string& item : items) value(item);
  return end_array();
}

}  // namespace aasm::json
