// The plan's provenance section: for each decision the plan enforces, the
// document and file:line:col that made it, as `aasmc explain` finds them,
// so the launcher's denial report can name the line behind a refusal and
// the edit that would allow it without the sources (docs/plan-format.md).
#pragma once

#include <llvm/Support/SourceMgr.h>

#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

// The documents as parsed (filesystem, network, ipc per document: a meet
// refuses what any one of them refuses) and the IR (syscalls, whose groups
// only the merge expands). Deterministic: cascade order, then source order.
aasm::plan::Provenance build_provenance(const std::vector<PolicyDocument>& documents, const PolicyIR& ir,
                                        const llvm::SourceMgr& sources);

}  // namespace aasmc
