// What the backend cannot lower: every requirement of the IR gets exactly one
// outcome with the native backend, and one it cannot enforce yet is refused
// before any lowering, named where it was written; nothing is silently dropped.
#pragma once

#include "middle/ir.h"
#include "support/diagnostics.h"

namespace aasmc {

// False (with one error per requirement) when some requirement cannot be lowered.
bool check_lowerable(const PolicyIR& ir, Diagnostics& diags);

}  // namespace aasmc
