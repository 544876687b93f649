// The cascade merge: the meet of every document (docs/policy-language.md,
// "The merge: most restrictive wins").
// A narrower tier can only shrink what a broader tier permits. Syscall names
// are merged as written here and resolved per target in resolve_syscalls.cpp.
#pragma once

#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "support/diagnostics.h"

namespace aasmc {

// Merges every node. Conflicts the merge cannot resolve (environment.set of
// one name to two values) are errors.
PolicyIR merge_cascade(const std::vector<PolicyDocument>& documents, Diagnostics& diags);

// The meet of two path allow-lists over subtrees: `/a` ∩ `/a/b` = `/a/b`,
// `/a` ∩ `/c` = nothing. Templates with different variables are disjoint.
std::vector<PathGrant> intersect_paths(const std::vector<PathGrant>& a, const std::vector<PathGrant>& b);

// Sorts and drops every grant another grant already covers.
std::vector<PathGrant> normalize_paths(std::vector<PathGrant> grants);

}  // namespace aasmc
