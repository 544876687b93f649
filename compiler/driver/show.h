// `aasmc show`: a plan in readable text.
#pragma once

#include <string>

#include "kernel/landlock_uapi.h"
#include "plan/plan.h"

namespace aasmc {

// With `bpf`, each seccomp program is followed by its disassembly.
std::string describe_plan(const aasm::plan::Plan& plan, const aasm::Sha256Digest& digest, bool bpf = false);
// "read_file,read_dir" (kernel/landlock_rights.def's names), or "none".
std::string describe_landlock_rights(uint64_t rights,
                                     aasm::landlock::RightKind kind = aasm::landlock::RightKind::kFs);
std::string describe_seccomp_action(uint32_t action);

}  // namespace aasmc
