// Each chosen backend's lowering of the native plan (docs/backends.md): one
// backend, the plan compiled for it alone; several (`--backend auto` or a
// list), the native plan with every candidate listed in its lowerings
// section, carried or not and why, for the launcher to choose from.
#pragma once

#include <vector>

#include "backend/negotiate.h"
#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

void add_lowerings(const PolicyIR& ir, const std::vector<Candidate>& candidates, bool several, aasm::plan::Plan& plan);

}  // namespace aasmc
