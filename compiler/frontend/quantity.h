// Quantities in `resources`: byte sizes (`512Mi`, `1G`, `4096`), durations
// (`30s`, `10m`, `2h`), CPU cores (`1.5`), with unit and overflow checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aasmc {

struct QuantityError {
  size_t offset = 0;
  std::string message;
};

// Bytes. Binary units Ki Mi Gi Ti, decimal k M G T; a bare integer is bytes.
std::optional<uint64_t> parse_bytes(std::string_view text, QuantityError& error);
// Seconds. N followed by s, m or h.
std::optional<uint64_t> parse_duration_seconds(std::string_view text, QuantityError& error);
// Thousandths of a core: "1.5" -> 1500. At most three decimals, above zero.
std::optional<uint64_t> parse_cpu_millicores(std::string_view text, QuantityError& error);
// A positive count (pids, open_files), at most `max`.
std::optional<uint64_t> parse_count(std::string_view text, uint64_t max, QuantityError& error);

std::string format_bytes(uint64_t bytes);

}  // namespace aasmc
