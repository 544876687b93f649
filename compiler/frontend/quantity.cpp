#include "frontend/quantity.h"

#include <limits>

namespace aasmc {
namespace {

// Reads the leading decimal digits; nullopt on overflow or no digits.
std::optional<uint64_t> leading_integer(std::string_view text, size_t& used, QuantityError& error) {
  uint64_t value = 0;
  used = 0;
  while (used < text.size() && text[used] >= '0' && text[used] <= '9') {
    const uint64_t digit = uint64_t(text[used] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      error = {0, "'" + std::string(text) + "' does not fit in 64 bits"};
      return std::nullopt;
    }
    value = value * 10 + digit;
    ++used;
  }
  if (used == 0) {
    error = {0, text.starts_with('-') ? "'" + std::string(text) +
                                            "' is negative: a limit is a count, size or duration from 0 up (leave the key out "
                                            "for no limit)"
                                      : "'" + std::string(text) + "' is not a number"};
    return std::nullopt;
  }
  return value;
}

std::optional<uint64_t> scaled(uint64_t value, uint64_t unit, std::string_view text, QuantityError& error) {
  if (unit != 0 && value > std::numeric_limits<uint64_t>::max() / unit) {
    error = {0, "'" + std::string(text) + "' does not fit in 64 bits"};
    return std::nullopt;
  }
  return value * unit;
}

}  // namespace

std::optional<uint64_t> parse_bytes(std::string_view text, QuantityError& error) {
  size_t used = 0;
  auto value = leading_integer(text, used, error);
  if (!value) return std::nullopt;
  const std::string_view unit = text.substr(used);
  struct Unit {
    std::string_view suffix;
    uint64_t factor;
  };
  static constexpr Unit kUnits[] = {{"", 1},          {"Ki", 1ull << 10},     {"Mi", 1ull << 20},
                                    {"Gi", 1ull << 30}, {"Ti", 1ull << 40},   {"k", 1000ull},
                                    {"M", 1000000ull},  {"G", 1000000000ull}, {"T", 1000000000000ull}};
  for (const Unit& u : kUnits)
    if (unit == u.suffix) return scaled(*value, u.factor, text, error);
  error = {used, "unknown size unit '" + std::string(unit) + "' (Ki, Mi, Gi, Ti, k, M, G, T, or none for bytes)"};
  return std::nullopt;
}

std::optional<uint64_t> parse_duration_seconds(std::string_view text, QuantityError& error) {
  size_t used = 0;
  auto value = leading_integer(text, used, error);
  if (!value) return std::nullopt;
  const std::string_view unit = text.substr(used);
  if (*value == 0 && !unit.empty()) {
    error = {0, "a duration of zero would end the run before it starts"};
    return std::nullopt;
  }
  if (unit == "s") return *value;
  if (unit == "m") return scaled(*value, 60, text, error);
  if (unit == "h") return scaled(*value, 3600, text, error);
  error = {used, unit.empty() ? "a duration needs a unit (s, m or h)" : "unknown duration unit '" + std::string(unit) + "' (s, m or h)"};
  return std::nullopt;
}

std::optional<uint64_t> parse_cpu_millicores(std::string_view text, QuantityError& error) {
  size_t used = 0;
  auto whole = leading_integer(text, used, error);
  if (!whole) return std::nullopt;
  uint64_t millis = 0;
  if (used < text.size()) {
    if (text[used] != '.') {
      error = {used, "cpu is a number of cores, like 2 or 1.5"};
      return std::nullopt;
    }
    const std::string_view fraction = text.substr(used + 1);
    if (fraction.empty() || fraction.size() > 3 ||
        fraction.find_first_not_of("0123456789") != std::string_view::npos) {
      error = {used, "cpu takes at most three decimals (thousandths of a core)"};
      return std::nullopt;
    }
    for (size_t i = 0; i < 3; ++i) millis = millis * 10 + (i < fraction.size() ? uint64_t(fraction[i] - '0') : 0);
  }
  constexpr uint64_t kMaxCores = 1u << 16;
  if (*whole >= kMaxCores) {
    error = {0, "cpu " + std::string(text) + " is more cores than any host has"};
    return std::nullopt;
  }
  const uint64_t total = *whole * 1000 + millis;
  if (total == 0) {
    error = {0, "cpu must be above zero"};
    return std::nullopt;
  }
  return total;
}

std::optional<uint64_t> parse_count(std::string_view text, uint64_t max, QuantityError& error) {
  size_t used = 0;
  auto value = leading_integer(text, used, error);
  if (!value) return std::nullopt;
  if (used != text.size()) {
    error = {used, "'" + std::string(text) + "' is not a whole number"};
    return std::nullopt;
  }
  if (*value == 0 || *value > max) {
    error = {0, std::string(text) + " is out of range (1 to " + std::to_string(max) + ")"};
    return std::nullopt;
  }
  return value;
}

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"Ti", "Gi", "Mi", "Ki"};
  for (int i = 0; i < 4; ++i) {
    const uint64_t factor = 1ull << (10 * (4 - i));
    if (bytes != 0 && bytes % factor == 0) return std::to_string(bytes / factor) + kUnits[i];
  }
  return std::to_string(bytes);
}

}  // namespace aasmc
