// `aasm-launch --dry-run`: what a launch of this plan would establish on this
// host, control by control, without running anything: the launch's own
// preparation (preparation.h), printed.
#pragma once

#include "launch.h"

namespace aasm {

// Prints the report on stdout (text, or with `json` one JSON document:
// schemas/dry-run.schema.json); returns 0 when the launch would proceed, 125
// when it would be refused (the reason is printed too).
int dry_run(const LaunchRequest& request, bool json = false);

}  // namespace aasm
