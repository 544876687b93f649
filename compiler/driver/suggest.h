// `aasmc suggest RECEIPT POLICY.yaml...`: the edits a run's denial report
// proposes (the receipt's `denials` section, docs/receipts.md#denials), as
// a unified diff of the policy files for the user to review and apply
// (docs/cli.md#aasmc-suggest). Nothing is written: the diff goes to stdout.
#pragma once

#include <string>
#include <vector>

namespace aasmc {

// Exit codes: 0 nothing to suggest, 1 a diff printed, 2 usage, 3 an input
// that cannot be used (nothing printed on stdout then).
int suggest_command(const std::vector<std::string>& args);

}  // namespace aasmc
