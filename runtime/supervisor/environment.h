// The command's environment, built by the supervisor before fork.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace aasm {

// With a filtering plan: the launcher's variables that `environment_pass`
// names (a trailing '*' matches a prefix), then `environment_set` (which
// wins). Otherwise the launcher's own environment less the dynamic loader's
// LD_* variables, which would run code in the command before main().
std::vector<std::string> build_environment(const plan::ProcessSettings* settings, char** launcher_environment);

// Sets each of `variables` in `environment`, in place of any value it had
// (the broker's proxy variables win over the launcher's own).
void point_at_broker(std::vector<std::string>& environment,
                     const std::vector<std::pair<std::string, std::string>>& variables);

}  // namespace aasm
