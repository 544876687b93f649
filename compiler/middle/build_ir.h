// The middle of the compiler: merge the cascade (syscalls included), resolve
// the merged syscalls per target, check that something is requested, and add
// the safe defaults every plan carries.
#pragma once

#include <optional>
#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "middle/merge.h"
#include "support/diagnostics.h"

namespace aasmc {

std::optional<PolicyIR> build_ir(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                                 Diagnostics& diags);

}  // namespace aasmc
