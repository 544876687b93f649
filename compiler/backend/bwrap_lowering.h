// The bubblewrap backend (`aasmc compile --backend bwrap`, docs/backends.md):
// the plan's bwrap section, the argument vector aasm-launch runs the host's
// bwrap with, lowered from the same list of trees the filesystem view binds
// (backend/view_lowering.h's granted_trees), so the two cannot drift.
#pragma once

#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

// Adds the bwrap section to `plan` and takes out what bwrap does in the
// launcher's place: the Landlock ruleset (a Landlock-restricted process may
// not mount, so bwrap could not build its root under one), the view
// section, the process section's namespaces and kept capabilities (bwrap's
// --unshare-* and --cap-add). The seccomp programs stay, as written: bwrap
// installs them from descriptors, with no listener.
void lower_for_bwrap(const PolicyIR& ir, aasm::plan::Plan& plan);

}  // namespace aasmc
