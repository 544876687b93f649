// `aasmc show`: a plan in readable text.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "kernel/landlock_uapi.h"
#include "plan/plan.h"

namespace aasmc {

// With `bpf`, each seccomp program is followed by its disassembly.
std::string describe_plan(const aasm::plan::Plan& plan, const aasm::Sha256Digest& digest, bool bpf = false);
std::string describe_seccomp_action(uint32_t action);
// The same plan as one JSON document (schemas/show.schema.json), rights by name.
nlohmann::ordered_json plan_json(const aasm::plan::Plan& plan, const aasm::Sha256Digest& digest);

}  // namespace aasmc
