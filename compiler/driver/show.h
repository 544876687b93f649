// `aasmc show`: a plan in readable text.
#pragma once

#include <string>

#include "plan/plan.h"

namespace aasmc {

// With `bpf`, each seccomp program is followed by its disassembly.
std::string describe_plan(const aasm::plan::Plan& plan, const aasm::Sha256Digest& digest, bool bpf = false);
std::string describe_landlock_rights(uint64_t rights);
std::string describe_seccomp_action(uint32_t action);

}  // namespace aasmc
