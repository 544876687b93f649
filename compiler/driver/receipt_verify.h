// `aasmc receipt verify FILE [--json]` (docs/receipts.md#verifying-a-receipt):
// the seal, and the rules no receipt may break even freshly resealed.
#pragma once

#include <string>
#include <vector>

namespace aasmc {

// Runs `aasmc receipt ARGS...`; returns the exit status (0 the seal and
// every rule hold, 1 one does not or the file is no receipt, 2 usage).
int receipt_command(const std::vector<std::string>& args);

}  // namespace aasmc
