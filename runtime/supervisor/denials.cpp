#include "supervisor/denials.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

namespace aasm::denials {

std::string argument_text(std::span<const uint64_t, 6> args, uint8_t read) {
  std::string text;
  char word[40];
  for (int i = 0; i < 6; ++i) {
    if (!(read & (1u << i))) continue;
    std::snprintf(word, sizeof word, "%sarg%d=0x%" PRIx64, text.empty() ? "" : " ", i, args[size_t(i)]);
    text += word;
  }
  return text;
}

std::optional<uint64_t> argument_of(const Denial& denial, int i) {
  const std::string key = "arg" + std::to_string(i) + "=0x";
  const size_t at = denial.arguments.find(key);
  if (at != 0 && (at == std::string::npos || denial.arguments[at - 1] != ' ')) return std::nullopt;
  return std::strtoull(denial.arguments.c_str() + at + key.size(), nullptr, 16);
}

void Log::add(Denial denial) {
  if (denial.path.size() > kMaxText) denial.path.resize(kMaxText);
  if (denial.arguments.size() > kMaxText) denial.arguments.resize(kMaxText);
  Key key = denial.key();
  if (auto seen = index_.find(key); seen != index_.end()) {
    ++entries_[seen->second].count;
    return;
  }
  if (entries_.size() >= kMaxDistinct) {
    ++dropped_;
    return;
  }
  index_.emplace(std::move(key), entries_.size());
  entries_.push_back({std::move(denial), 1});
}

}  // namespace aasm::denials
