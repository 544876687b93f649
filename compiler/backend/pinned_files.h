// filesystem.pinned: every pinned file hashed when the plan is compiled, the
// way the launcher hashes it again before anything runs.
#pragma once

#include <optional>
#include <vector>

#include "middle/ir.h"
#include "plan/plan.h"
#include "support/diagnostics.h"

namespace aasmc {

// The plan's pins, sorted by path; nothing (with one error per pin, at its
// entry) when a pinned path is missing, not a regular file or unreadable.
std::optional<std::vector<aasm::plan::PinnedFile>> hash_pinned_files(const FilesystemIR& fs, Diagnostics& diags);

}  // namespace aasmc
