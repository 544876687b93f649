// `aasm-launch --dry-run`: what a launch of this plan would establish on this
// host, control by control, without running anything.
#pragma once

#include <optional>
#include <string>

namespace aasm {

// Prints the report on stdout; returns 0 when the launch would proceed, 125
// when it would be refused (the reason is printed too).
int dry_run(const std::string& plan_path, const std::optional<std::string>& expect_digest);

}  // namespace aasm
