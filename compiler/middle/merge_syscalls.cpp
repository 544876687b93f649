// The syscalls part of the merge pass (merge.h): every document's syscalls
// node met with the others, names expanded from the group table and checked
// on every target on the way, since allow-lists of groups meet by member.
#include <cerrno>
#include <set>

#include "middle/merge.h"
#include "tables/syscall_groups.h"

namespace aasmc {

// EPERM, what the kernel answers a caller without the privilege: a program
// sees a failed call it can report, not a SIGSYS that names nothing. `kill`
// must be written.
Action unwritten_default_action() { return Action{Action::Kind::kErrno, EPERM}; }

namespace {

using NameSet = std::map<std::string, SourceRef>;

class NameResolver {
 public:
  NameResolver(const std::vector<Target>& targets, const std::optional<std::map<std::string, SourceRef>>& kept,
               Diagnostics& diags)
      : targets_(targets), kept_(kept), diags_(diags) {}

  enum class Context { kAllow, kDeny };

  // The names an entry list stands for, groups expanded; bad names reported.
  // Deny sets with argument rules are kept aside (rule_groups) in a deny list
  // and refused in an allow list.
  NameSet expand(const std::vector<NameEntry>& entries, Context context) {
    NameSet names;
    for (const NameEntry& entry : entries) {
      if (llvm::StringRef(entry.name).startswith("@")) {
        expand_group(entry, names, context);
      } else if (check(entry)) {
        names.emplace(entry.name, entry.source);
      }
    }
    return names;
  }

  // A syscall name that must exist on every target.
  bool check(const NameEntry& entry) {
    std::vector<const char*> missing_on;
    for (const Target& target : targets_)
      if (!syscall_number(target, entry.name)) missing_on.push_back(target.name);
    if (missing_on.empty()) return true;
    const auto known = known_syscall_names();
    if (missing_on.size() == targets_.size() && std::find(known.begin(), known.end(), entry.name) == known.end()) {
      std::string message = "unknown syscall '" + entry.name + "'";
      if (auto guess = closest_match(entry.name, known); !guess.empty()) message += "; did you mean '" + guess + "'?";
      diags_.error(entry.source.loc, message, diag::kUnknownSyscall, entry.source.range);
      return false;
    }
    std::string archs;
    for (const char* arch : missing_on) archs += std::string(archs.empty() ? "" : ", ") + arch;
    diags_.error(entry.source.loc,
                 "syscall '" + entry.name + "' does not exist on " + archs + "; remove it, or choose the targets with --arch",
                 diag::kUnknownSyscall, entry.source.range);
    return false;
  }

  // Deny sets with argument rules met in deny lists, with where they were named.
  const std::vector<std::pair<const SyscallGroup*, SourceRef>>& rule_groups() const { return rule_groups_; }
  // Members a deny group named left out, with why.
  const std::map<std::string, std::string>& left_out() const { return left_out_; }

 private:
  void expand_group(const NameEntry& entry, NameSet& names, Context context) {
    const llvm::StringRef name = llvm::StringRef(entry.name).drop_front();
    const SyscallGroup* group = find_group(name);
    if (!group) {
      std::vector<llvm::StringRef> candidates;
      for (const SyscallGroup& g : all_groups()) candidates.push_back(g.name);
      std::string message = "unknown syscall group '" + entry.name + "'";
      if (auto guess = closest_match(name, candidates); !guess.empty()) message += "; did you mean '@" + guess + "'?";
      diags_.error(entry.source.loc, message + " (`aasmc groups` lists them)", diag::kUnknownGroup, entry.source.range);
      return;
    }
    if (!group->rules.empty()) {
      if (context == Context::kAllow) {
        diags_.error(entry.source.loc,
                     entry.name + " is a deny set of argument rules; name it in spec.syscalls.deny, not in allow",
                     diag::kBadValue, entry.source.range);
        return;
      }
      rule_groups_.emplace_back(group, entry.source);
    }
    // Group members may be architecture-specific; kept where any target has them.
    for (const GroupMember& member : group->members) {
      if (!member.capability.empty() && kept(member.capability) != (context == Context::kDeny)) {
        if (context == Context::kDeny)
          left_out_.try_emplace(member.syscall.str(), "@" + group->name.str() + ": without " +
                                                          member.capability.str() + " it can only keep or lower ids");
        continue;
      }
      for (const Target& target : targets_)
        if (syscall_number(target, member.syscall)) names.emplace(member.syscall.str(), entry.source);
    }
  }

  bool kept(llvm::StringRef capability) const { return kept_ && kept_->count(capability.str()); }

  const std::vector<Target>& targets_;
  const std::optional<std::map<std::string, SourceRef>>& kept_;
  Diagnostics& diags_;
  std::map<std::string, std::string> left_out_;
  std::vector<std::pair<const SyscallGroup*, SourceRef>> rule_groups_;
};

// Two rules of one document for one syscall and the same condition, with
// different actions: the author meant one of them.
void check_rule_conflicts(const std::vector<SyscallRule>& rules, Diagnostics& diags) {
  std::map<std::pair<std::string, std::string>, const SyscallRule*> seen;
  for (const SyscallRule& rule : rules) {
    const auto key = std::pair(rule.syscall.name, rule.when_text ? rule.when_text->value : std::string());
    auto [it, inserted] = seen.emplace(key, &rule);
    if (inserted || it->second->action.value == rule.action.value) continue;
    diags.error(rule.action.source.loc,
                "a second rule for " + rule.syscall.name + (key.second.empty() ? "" : " when " + key.second) +
                    " gives it another action (" + rule.action.value.text() + ", was " +
                    it->second->action.value.text() + ")",
                diag::kConflict, rule.action.source.range);
    diags.note(it->second->action.source.loc, "the other rule's action is here");
  }
}

void check_document_conflicts(const NameSet& allowed, const NameSet& denied, Diagnostics& diags) {
  for (const auto& [name, source] : denied) {
    auto it = allowed.find(name);
    if (it == allowed.end()) continue;
    diags.error(source.loc, "syscall '" + name + "' is both allowed and denied in one document", diag::kConflict,
                source.range);
    diags.note(it->second.loc, "allowed here");
  }
}

// What one document permits: its allowlist, and its `allow` rules per call.
struct DocumentPermissions {
  bool has_allowlist;
  NameSet allowed;
  std::map<std::string, std::vector<const SyscallRule*>> allow_rules;
};

DocumentPermissions document_permissions(const SyscallsNode& node, const NameSet& allowed) {
  DocumentPermissions p{node.allow.has_value(), allowed, {}};
  for (const SyscallRule& rule : node.rules)
    if (rule.action.value.kind == Action::Kind::kAllow) p.allow_rules[rule.syscall.name].push_back(&rule);
  return p;
}

// The meet of the `allow` rules, per call they name that no document denies
// (refused anyway).
std::vector<ConditionalAllow> meet_allow_rules(const std::vector<DocumentPermissions>& permissions,
                                               const NameSet& denied) {
  std::set<std::string> candidates;
  for (const DocumentPermissions& p : permissions)
    for (const auto& [name, rules] : p.allow_rules) candidates.insert(name);
  std::vector<ConditionalAllow> out;
  for (const std::string& name : candidates) {
    if (denied.count(name)) continue;
    ConditionalAllow meet{name, {}, true, {}};
    const SyscallRule* first = nullptr;
    for (const DocumentPermissions& p : permissions) {
      auto it = p.allow_rules.find(name);
      if (it != p.allow_rules.end() && !first) first = it->second.front();
      if (!p.has_allowlist || p.allowed.count(name)) continue;
      if (it == p.allow_rules.end()) {
        meet.permitted = false;
        continue;
      }
      std::vector<ConditionExpr> options;
      bool unconditional = false;
      for (const SyscallRule* rule : it->second) {
        if (!rule->when) unconditional = true;
        else options.push_back(*rule->when);
      }
      if (!unconditional) meet.required.push_back(chained(ConditionExpr::Kind::kOr, std::move(options)));
    }
    meet.first = first->action.source;
    out.push_back(std::move(meet));
  }
  return out;
}

// One document's opt-ins into the safe defaults, after those of the
// documents before it (the first one written names where).
void note_opt_ins(const SyscallsNode& node, bool by_name, std::map<std::string, SafeDefaultOptIn>& out) {
  if (by_name)
    for (const NameEntry& entry : node.allow.value_or(std::vector<NameEntry>{}))
      if (!llvm::StringRef(entry.name).startswith("@"))  // a group is no opt-in
        out.try_emplace(entry.name, SafeDefaultOptIn{entry.source, false, {}}).first->second.unconditional = true;
  for (const SyscallRule& rule : node.rules) {
    if (rule.action.value.kind != Action::Kind::kAllow) continue;
    SafeDefaultOptIn& opt_in =
        out.try_emplace(rule.syscall.name, SafeDefaultOptIn{rule.action.source, false, {}}).first->second;
    if (rule.when) opt_in.conditions.push_back({rule.when_text->value, *rule.when});
    else opt_in.unconditional = true;
  }
}

// The strictest default a document states. A document that refuses calls
// without writing `default` answers EPERM: it takes part in the meet as
// such. In a denylist, `default` is the answer of its denied names.
void meet_default(std::optional<Effective<Action>>& merged, const SyscallsNode& node) {
  const std::optional<Located<Action>> stated =
      node.default_action ? node.default_action
      : node.allow || node.deny
          ? std::optional<Located<Action>>(Located<Action>{unwritten_default_action(), node.source})
          : std::nullopt;
  if (!stated) return;
  if (!merged) {
    merged = Effective<Action>{stated->value, stated->source, {}};
  } else if (stated->value.strictness() > merged->value.strictness()) {
    merged->narrowed.push_back(merged->from);
    merged->value = stated->value;
    merged->from = stated->source;
  }
}

}  // namespace

// In the order the documents were given, which their rules keep; the meet
// itself does not depend on it.
std::optional<MergedSyscalls> merge_syscalls(const std::vector<PolicyDocument>& documents,
                                             const std::optional<std::map<std::string, SourceRef>>& kept_capabilities,
                                             const std::vector<Target>& targets, Diagnostics& diags) {
  NameResolver resolver(targets, kept_capabilities, diags);
  std::vector<DocumentPermissions> permissions;
  MergedSyscalls out;
  bool any = false;
  for (const PolicyDocument& doc : documents) {
    if (!doc.syscalls) continue;
    const SyscallsNode& node = *doc.syscalls;
    // An empty `syscalls: {}` asks for nothing and constrains nothing.
    if (!node.allow && !node.deny && node.rules.empty() && !node.default_action) continue;
    any = true;
    meet_default(out.default_action, node);
    NameSet doc_allowed = node.allow ? resolver.expand(*node.allow, NameResolver::Context::kAllow) : NameSet{};
    permissions.push_back(document_permissions(node, doc_allowed));
    NameSet doc_denied = node.deny ? resolver.expand(*node.deny, NameResolver::Context::kDeny) : NameSet{};
    check_document_conflicts(doc_allowed, doc_denied, diags);
    check_rule_conflicts(node.rules, diags);
    out.denied.insert(doc_denied.begin(), doc_denied.end());
    if (node.allow) {
      out.allowlists.push_back({node.source, doc_allowed});
      meet_keys(out.allowed, std::move(doc_allowed));
    }
    for (const SyscallRule& rule : node.rules)
      if (resolver.check(rule.syscall))
        out.rules.push_back({rule.syscall.name, rule.when_text, rule.when, rule.action.value, rule.action.source, {}, {}});
    note_opt_ins(node, true, out.opted_in_by_name_or_rule);
    note_opt_ins(node, false, out.opted_in_by_rule);
  }
  if (!any) return std::nullopt;
  for (const auto& [name, why] : resolver.left_out())
    if (!out.denied.count(name)) out.left_out_of_deny.emplace(name, why);
  out.rule_groups = resolver.rule_groups();
  out.conditional_allows = meet_allow_rules(permissions, out.denied);
  return out;
}

}  // namespace aasmc
