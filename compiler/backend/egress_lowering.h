// network.outbound.hosts to the plan's egress section (docs/egress.md): the
// patterns the launcher's broker allows and refuses, and what taking the
// command off the host's network needs of the rest of the plan.
#pragma once

#include <optional>

#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

// The brokered outbound rule of a policy, if it has one (`none` wins over hosts).
const NetworkRuleIR* brokered_outbound(const NetworkIR& network);

std::optional<aasm::plan::Egress> lower_egress(const NetworkIR& network);

}  // namespace aasmc
