// The bubblewrap backend (`aasmc compile --backend bwrap`, docs/backends.md):
// the plan's bwrap section, the argument vector aasm-launch runs the host's
// bwrap with, lowered from the same list of trees the filesystem view binds
// (backend/view_lowering.h's granted_trees), so the two cannot drift.
#pragma once

#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

// The arguments bwrap runs the command with, from the policy and its native
// `plan` (its namespaces and kept capabilities become --unshare-* and
// --cap-add). plan::apply_lowering takes out of the plan what bwrap then
// does in the launcher's place; the seccomp programs stay, as written: bwrap
// installs them from descriptors, with no listener.
aasm::plan::Bwrap bwrap_arguments(const PolicyIR& ir, const aasm::plan::Plan& plan);

}  // namespace aasmc
