// Filesystem, network and IPC IR -> Landlock ruleset description (docs/landlock.md).
#pragma once

#include <optional>

#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

// Rights each policy verb stands for.
uint64_t landlock_rights_for_read();
uint64_t landlock_rights_for_write();
uint64_t landlock_rights_for_execute();


// The Landlock ruleset of the filesystem, network (TCP ports) and IPC
// (scopes) requirements, with each control's ABI floor (docs/landlock.md).
std::optional<aasm::plan::LandlockRuleset> lower_landlock(const PolicyIR& ir);

// A path template's variable, in the plan's numbering.
aasm::plan::PathBase plan_base(PathBase base);

}  // namespace aasmc
