// The merged syscalls (merge.h) resolved per target into the IR's filter:
// the capability denials, the deny sets' argument rules, every condition in
// libseccomp's normal form, the allow rules' meet and the start-up set; then
// the safe defaults every plan carries.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "middle/ir.h"
#include "middle/merge.h"
#include "support/diagnostics.h"

namespace aasmc {

// `capabilities_denied`: capabilities.deny of the merge (syscall and
// process_creation act here). nullopt when nothing asks for a filter.
std::optional<SyscallIR> resolve_syscalls(const std::optional<MergedSyscalls>& merged,
                                          const std::map<Domain, SourceRef>& capabilities_denied,
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

// The safe defaults every plan carries (docs/policy-language.md, "The safe
// defaults every plan carries"; the table kSafeDefaults in
// resolve_syscalls.cpp): deny sets of the group table, each refused with its
// errno, lifted call by call where the policy writes an `allow` rule for the
// call (or, for the sets where a name says so, such as @namespaces, names it in
// an allow list). Creates a denylist when the policy has no syscalls node, so
// every plan has a filter. `merged` gives the policy's opt-ins.
void add_safe_defaults(PolicyIR& ir, const std::optional<MergedSyscalls>& merged, const std::vector<Target>& targets,
                       Diagnostics& diags);

// What the safe defaults refuse of `syscall` in every policy that names it in
// an allow list, only an `allow` rule for it lifting that (@foreign-limits:
// prlimit64 where "pid != 0 && new_limit != 0"; those tied to
// filesystem.execute are left out). For `aasmc import`, which must know what
// "allowed, with aasm's safe default" leaves of a call.
struct SafeDefaultRefusal {
  llvm::StringRef group;
  int errno_value;
  std::optional<llvm::StringRef> when;  // nullopt: the whole call
};
std::vector<SafeDefaultRefusal> safe_default_refusals(llvm::StringRef syscall);

}  // namespace aasmc
