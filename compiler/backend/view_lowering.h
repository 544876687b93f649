// The filesystem view (isolation.filesystem_view) from the filesystem IR:
// every granted tree bound in with its rights as mount flags, /proc, /dev
// and /tmp as the view's own, the protected subtrees (filesystem.readonly)
// read-only over their writable trees (docs/filesystem-view.md).
#pragma once

#include <optional>

#include "middle/ir.h"
#include "plan/plan.h"
#include "support/diagnostics.h"

namespace aasmc {

// False, with one error each (AASM0056), where the view cannot be built as
// the policy asks: a protection without the view, a kept sys_admin, mount
// calls the filter does not refuse, a tree the view cannot offer (`/`,
// /dev other than its nodes), a private /tmp without resources.tmp_size.
bool check_view(const PolicyIR& ir, Diagnostics& diags);

// The plan's view section; nullopt when the view is off. Call after check_view.
std::optional<aasm::plan::FilesystemView> lower_view(const PolicyIR& ir);

// The trees the view binds in and its own filesystems, whether the view is
// on or not (the bubblewrap backend binds the same list, backend/bwrap_lowering.h);
// with the view off, a granted /tmp without resources.tmp_size and a path
// the view does not offer are the host's trees. Flags of the view itself unset.
aasm::plan::FilesystemView granted_trees(const PolicyIR& ir);

}  // namespace aasmc
