// The receipt's denials section (docs/receipts.md#denials), parsed: apart
// from fixtures.h so that only the tests that read it compile nlohmann/json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.h"

namespace aasm::ktest {

// The `denials` section of DIR/receipt.json.
inline nlohmann::json receipt_denials(const TempDir& dir) {
  return nlohmann::json::parse(read_file(dir / "receipt.json")).at("denials");
}

// Its entries of `layer` ("seccomp", "landlock_fs", ...). Copies, not
// references: the parsed document is a temporary.
inline std::vector<nlohmann::json> denial_entries(const TempDir& dir, const std::string& layer) {
  // Named: a range-for over receipt_denials(dir).at(...) would iterate a
  // member of a temporary already destroyed (before C++23).
  const nlohmann::json denials = receipt_denials(dir);
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& entry : denials.at("entries"))
    if (entry.at("layer") == layer) found.push_back(entry);
  return found;
}

}  // namespace aasm::ktest
