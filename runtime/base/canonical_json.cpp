#include "base/canonical_json.h"

#include <cstdio>

namespace aasm::json {
namespace {

// The length of the valid UTF-8 sequence at text[at], 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF are not).
size_t utf8_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return uint8_t(text[i]); };
  const uint8_t lead = byte(at);
  size_t length;
  uint32_t point;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2, point = lead & 0x1f;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3, point = lead & 0x0f;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4, point = lead & 0x07;
  else return 0;
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return 0;
    point = point << 6 | (byte(at + i) & 0x3f);
  }
  if ((length == 3 && point < 0x800) || (length == 4 && (point < 0x10000 || point > 0x10ffff)) ||
      (point >= 0xd800 && point <= 0xdfff))
    return 0;
  return length;
}

void write(const Value& value, std::string& out) {
  if (std::holds_alternative<std::nullptr_t>(value.v)) {
    out += "null";
  } else if (const bool* b = std::get_if<bool>(&value.v)) {
    out += *b ? "true" : "false";
  } else if (const int64_t* n = std::get_if<int64_t>(&value.v)) {
    out += std::to_string(*n);
  } else if (const std::string* s = std::get_if<std::string>(&value.v)) {
    out += canonical_string(*s);
  } else if (const Array* a = std::get_if<Array>(&value.v)) {
    out += '[';
    for (size_t i = 0; i < a->size(); ++i) {
      if (i) out += ',';
      write((*a)[i], out);
    }
    out += ']';
  } else {
    const Object& o = std::get<Object>(value.v);
    out += '{';
    bool first = true;
    for (const auto& [name, member] : o) {
      if (!first) out += ',';
      first = false;
      out += canonical_string(name);
      out += ':';
      write(member, out);
    }
    out += '}';
  }
}

}  // namespace

std::string canonical_string(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const uint8_t c = uint8_t(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_length(text, i);
      if (length) out.append(text.substr(i, length));
      else out += "\xef\xbf\xbd";  // U+FFFD for a byte that is not UTF-8
      i += length ? length : 1;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", c);
          out += escape;
        } else {
          out += char(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string canonical(const Value& value) {
  std::string out;
  write(value, out);
  return out;
}

Array strings(const std::vector<std::string>& items) { return Array(items.begin(), items.end()); }

}  // namespace aasm::json
