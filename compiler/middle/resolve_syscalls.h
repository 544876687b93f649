// Syscall names: groups expanded, names checked on every target, the
// cascade's allow-lists intersected, deny-lists united, rules kept.
#pragma once

#include <optional>
#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "support/diagnostics.h"

namespace aasmc {

// The answer of a denied call where no document writes `syscalls.default`.
Action unwritten_default_action();

// `kept_capabilities`: isolation.linux_capabilities of the merge (absent:
// none kept), which decides where the uid/gid calls belong (GroupMember::capability).
std::optional<SyscallIR> resolve_syscalls(const std::vector<PolicyDocument>& documents,
                                          const std::map<Domain, SourceRef>& capabilities_denied,
                                          const std::optional<std::map<std::string, SourceRef>>& kept_capabilities,
                                          const std::vector<Target>& targets, Diagnostics& diags);

// The rule's condition in normal form for every target that has the call;
// on failure, the error and the target it failed for.
struct NormalizeFailure {
  ConditionError error;
  const Target* target;
};
std::optional<NormalizeFailure> normalize_rule(SyscallRuleIR& rule, const std::vector<Target>& targets);

// The IR's syscalls; without a syscalls node, a denylist of nothing, to
// carry the rules the compiler adds.
SyscallIR& syscalls_or_empty_denylist(PolicyIR& ir);

// The safe defaults every plan carries (policy.md "Safe defaults every plan
// carries", the table kSafeDefaults in resolve_syscalls.cpp): deny sets of
// the group table, each refused with its errno, lifted call by call where
// the policy writes an `allow` rule for the call (or, for the sets where a
// name says so, such as @namespaces, names it in an allow list). Creates a
// denylist when the policy has no syscalls node, so every plan has a filter.
void add_safe_defaults(PolicyIR& ir, const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                       Diagnostics& diags);

}  // namespace aasmc
