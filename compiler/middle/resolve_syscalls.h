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

// The seccomp side of network.outbound (rules for what Landlock's TCP
// controls do not cover) and of ipc.unix_sockets (refusing unix socket
// creation where Landlock cannot scope it). Creates a denylist when the
// policy has no syscalls node.
void add_socket_rules(PolicyIR& ir, const std::vector<Target>& targets, Diagnostics& diags);

// The safe defaults every plan carries (docs/policy-language.md, "The safe
// defaults every plan carries"; the table kSafeDefaults in
// resolve_syscalls.cpp): deny sets of the group table, each refused with its
// errno, lifted call by call where the policy writes an `allow` rule for the
// call (or, for the sets where a name says so, such as @namespaces, names it in
// an allow list). Creates a denylist when the policy has no syscalls node, so
// every plan has a filter.
void add_safe_defaults(PolicyIR& ir, const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                       Diagnostics& diags);

}  // namespace aasmc
