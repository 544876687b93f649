// The middle of the compiler: merge the cascade (the meet of every document,
// policy.md "Merge rule"), resolve names per target, add the start-up set.
#pragma once

#include <optional>
#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "support/diagnostics.h"

namespace aasmc {

std::optional<PolicyIR> build_ir(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                                 Diagnostics& diags);

// The meet of two path allow-lists over subtrees: `/a` ∩ `/a/b` = `/a/b`,
// `/a` ∩ `/c` = nothing. Templates with different variables are disjoint.
std::vector<PathGrant> intersect_paths(const std::vector<PathGrant>& a, const std::vector<PathGrant>& b);

// Sorts and drops every grant another grant already covers.
std::vector<PathGrant> normalize_paths(std::vector<PathGrant> grants);

}  // namespace aasmc
