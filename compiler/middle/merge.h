// The cascade merge: the meet of every document (docs/policy-language.md,
// "The merge: most restrictive wins").
// A narrower tier can only shrink what a broader tier permits. Syscall names
// are expanded from the group table and checked on every target as they are
// merged (merge_syscalls.cpp); resolve_syscalls.h turns the merged syscalls
// into the IR's filter.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/ast.h"
#include "middle/ir.h"
#include "support/diagnostics.h"

namespace aasmc {

struct SyscallGroup;

// A call an `allow` rule permits beyond the allowlists. In a cascade it can
// only narrow: the call is allowed where every allowlist document permits it,
// by listing it or by an allow rule of its own.
struct ConditionalAllow {
  std::string syscall;
  SourceRef first;                      // the first allow rule's action (diagnostics point there)
  bool permitted = true;                // false: an allowlist permits it neither way, so the rule has no effect
  std::vector<ConditionExpr> required;  // one per allowlist document that conditions it; all must hold
};

// A call the policy opts into despite a safe default (docs/policy-language.md, "The safe
// defaults every plan carries"), in any document: unconditionally, or for
// the arguments its `allow` rules' conditions match.
struct SafeDefaultOptIn {
  SourceRef from;  // the first document's entry that opts in
  bool unconditional = false;
  std::vector<std::pair<std::string, ConditionExpr>> conditions;  // each allow rule's `when:`, as written and parsed
};

// The syscalls nodes of the cascade, met. Not yet per target: the rules'
// conditions are as written, the deny sets' argument rules and the start-up
// set not added.
struct MergedSyscalls {
  std::optional<Effective<Action>> default_action;          // the strictest a document states
  std::optional<std::map<std::string, SourceRef>> allowed;  // the allowlists' meet; absent: no allowlist
  std::map<std::string, SourceRef> denied;                  // every deny list's names
  std::vector<DocumentAllowlist> allowlists;                // each document's, for provenance
  std::map<std::string, std::string> left_out_of_deny;      // deny-group members left out, with why
  std::vector<std::pair<const SyscallGroup*, SourceRef>> rule_groups;  // deny sets with argument rules, where named
  std::vector<SyscallRuleIR> rules;                         // in cascade order, not yet normalized
  std::vector<ConditionalAllow> conditional_allows;         // per call named by an allow rule, but denied ones
  // Opt-ins into the safe defaults: by a name in an allow list (not a group)
  // or an `allow` rule; and by an `allow` rule alone.
  std::map<std::string, SafeDefaultOptIn> opted_in_by_name_or_rule, opted_in_by_rule;
};

struct MergedPolicy {
  PolicyIR ir;                             // every node but syscalls
  std::optional<MergedSyscalls> syscalls;  // absent: no document asks anything of syscalls
};

// Merges every node. Conflicts the merge cannot resolve (environment.set of
// one name to two values, a syscall both allowed and denied in one document)
// are errors; so are syscall names or groups that some target lacks.
MergedPolicy merge_cascade(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                           Diagnostics& diags);

// The syscalls part of merge_cascade. `kept_capabilities`:
// isolation.linux_capabilities of the merge (absent: none kept), which
// decides where the uid/gid calls belong (GroupMember::capability).
std::optional<MergedSyscalls> merge_syscalls(const std::vector<PolicyDocument>& documents,
                                             const std::optional<std::map<std::string, SourceRef>>& kept_capabilities,
                                             const std::vector<Target>& targets, Diagnostics& diags);

// The answer of a denied call where no document writes `syscalls.default`.
Action unwritten_default_action();

// The meet of allow-lists of names: the keys every list has, each with the
// source of the latest list (the narrower document's entry). Absent: no list yet.
template <typename K>
void meet_keys(std::optional<std::map<K, SourceRef>>& merged, std::map<K, SourceRef> next) {
  if (!merged) {
    merged = std::move(next);
    return;
  }
  std::map<K, SourceRef> both;
  for (const auto& [key, source] : next)
    if (merged->count(key)) both.emplace(key, source);
  merged = std::move(both);
}

// The meet of two path allow-lists over subtrees: `/a` ∩ `/a/b` = `/a/b`,
// `/a` ∩ `/c` = nothing. Templates with different variables are disjoint.
std::vector<PathGrant> intersect_paths(const std::vector<PathGrant>& a, const std::vector<PathGrant>& b);

// Sorts and drops every grant another grant already covers.
std::vector<PathGrant> normalize_paths(std::vector<PathGrant> grants);

}  // namespace aasmc
