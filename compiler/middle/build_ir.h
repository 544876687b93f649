// The middle of the compiler: merge the cascade, resolve syscall names per
// target, add the start-up set, and check that something is requested.
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
