#include "middle/resolve_syscalls.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <set>
#include <span>

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

// capabilities.deny: [process_creation]: new processes, not threads.
void deny_process_creation(SyscallIR& ir, const SourceRef& source, const std::vector<Target>& targets) {
  const Action refuse{Action::Kind::kErrno, EPERM};
  for (const char* name : {"fork", "vfork"})
    if (std::any_of(targets.begin(), targets.end(), [&](const Target& t) { return syscall_number(t, name).has_value(); }))
      ir.rules.push_back({name, std::nullopt, std::nullopt, refuse, source, {}, {}});
  // clone without CLONE_THREAD makes a process.
  ConditionExpr thread_flag;
  thread_flag.test.op = ConditionTest::Op::kMaskAny;
  thread_flag.test.operand = "flags";
  thread_flag.test.mask.terms.push_back({std::string("CLONE_THREAD"), 0, 0});
  ir.rules.push_back({"clone", Located<std::string>{"!(flags & CLONE_THREAD)", source}, negation(std::move(thread_flag)),
                      refuse, source, {}, {}});
}

// Deny sets with argument rules become rules with the answer of a denied call.
void add_group_rules(SyscallIR& ir, const std::vector<std::pair<const SyscallGroup*, SourceRef>>& groups,
                     const std::vector<Target>& targets) {
  const Action deny = ir.default_action.value;
  for (const auto& [group, source] : groups)
    for (const GroupRule& rule : group->rules) {
      if (std::none_of(targets.begin(), targets.end(), [&](const Target& t) { return syscall_number(t, rule.syscall).has_value(); }))
        continue;
      ConditionError error;
      std::optional<ConditionExpr> when = parse_condition(rule.when, error);
      assert(when && "the group table's conditions parse");
      ir.rules.push_back({rule.syscall.str(), Located<std::string>{rule.when.str(), source}, std::move(when), deny, source, {}, {}});
    }
}

}  // namespace

std::optional<NormalizeFailure> normalize_rule(SyscallRuleIR& rule, const std::vector<Target>& targets) {
  for (const Target& target : targets) {
    if (!syscall_number(target, rule.syscall)) continue;
    if (!rule.when) {
      rule.normalized[target.name] = NormalizedCondition{{Conjunct{}}};
      continue;
    }
    ConditionError error;
    auto normalized = normalize_condition(*rule.when, rule.syscall, target, error);
    if (!normalized) return NormalizeFailure{std::move(error), &target};
    rule.normalized[target.name] = std::move(*normalized);
  }
  return std::nullopt;
}

namespace {

// Each rule's condition in normal form for every target; errors point into
// the `when:` string (a quoted YAML scalar starts one byte after its quote).
void normalize_rules(std::span<SyscallRuleIR> rules, const std::vector<Target>& targets, Diagnostics& diags) {
  for (SyscallRuleIR& rule : rules) {
    const std::optional<NormalizeFailure> failure = normalize_rule(rule, targets);
    if (!failure) continue;
    const SourceRef& at = rule.when_text->source;
    const char* text = at.loc.getPointer();
    const size_t quote = text && (*text == '"' || *text == '\'') ? 1 : 0;
    diags.error(llvm::SMLoc::getFromPointer(text + quote + failure->error.offset),
                "in when: " + failure->error.message + " (for " + failure->target->name + ")",
                diag::kConditionSemantics, at.range);
  }
}

// What one document permits: its allowlist, and its `allow` rules per call.
struct DocumentPermissions {
  const PolicyDocument* doc;
  bool has_allowlist;
  NameSet allowed;
  std::map<std::string, std::vector<const SyscallRule*>> allow_rules;
};

DocumentPermissions document_permissions(const PolicyDocument& doc, const SyscallsNode& node, const NameSet& allowed) {
  DocumentPermissions p{&doc, node.allow.has_value(), allowed, {}};
  for (const SyscallRule& rule : node.rules)
    if (rule.action.value.kind == Action::Kind::kAllow) p.allow_rules[rule.syscall.name].push_back(&rule);
  return p;
}

// An `allow` rule permits a call the allowlist does not list, for the
// arguments its condition matches. In a cascade it can only narrow: the call
// is allowed where every allowlist document permits it, by listing it or by
// its own allow rules.
void conditional_allows(SyscallIR& ir, const std::vector<DocumentPermissions>& permissions,
                        const std::vector<Target>& targets, Diagnostics& diags) {
  std::set<std::string> candidates;
  for (const DocumentPermissions& p : permissions)
    for (const auto& [name, rules] : p.allow_rules) candidates.insert(name);
  for (const std::string& name : candidates) {
    if (ir.allowed.count(name) || ir.denied.count(name)) continue;  // nothing to add, or refused anyway
    std::vector<ConditionExpr> required;  // one per allowlist document that conditions the call
    const SyscallRule* first = nullptr;
    bool permitted = true;
    for (const DocumentPermissions& p : permissions) {
      auto it = p.allow_rules.find(name);
      if (it != p.allow_rules.end() && !first) first = it->second.front();
      if (!p.has_allowlist || p.allowed.count(name)) continue;
      if (it == p.allow_rules.end()) {
        permitted = false;
        continue;
      }
      std::vector<ConditionExpr> options;
      bool unconditional = false;
      for (const SyscallRule* rule : it->second) {
        if (!rule->when) unconditional = true;
        else options.push_back(*rule->when);
      }
      if (!unconditional) required.push_back(chained(ConditionExpr::Kind::kOr, std::move(options)));
    }
    if (!permitted || !first) {
      if (first)
        diags.warning(first->action.source.loc,
                      "this allow rule for " + name + " has no effect: an allowlist elsewhere in the cascade does not "
                      "permit " + name + ", and a rule cannot widen it",
                      diag::kNoEffect, first->action.source.range);
      continue;
    }
    for (const Target& target : targets) {
      if (!syscall_number(target, name)) continue;
      if (required.empty()) {
        ir.conditionally_allowed[name][target.name] = NormalizedCondition{{Conjunct{}}};
        continue;
      }
      const ConditionExpr condition = chained(ConditionExpr::Kind::kAnd, required);
      ConditionError error;
      auto normalized = normalize_condition(condition, name, target, error);
      if (!normalized) {
        diags.error(first->action.source.loc,
                    "the allow rules for " + name + " combine into a condition libseccomp cannot express: " +
                        error.message + " (for " + target.name + ")",
                    diag::kConditionSemantics, first->action.source.range);
        break;
      }
      ir.conditionally_allowed[name][target.name] = std::move(*normalized);
    }
  }
}

}  // namespace

SyscallIR& syscalls_or_empty_denylist(PolicyIR& ir) {
  if (!ir.syscalls) {
    ir.syscalls.emplace();
    ir.syscalls->mode = SyscallIR::Mode::kDenylist;
    ir.syscalls->default_action = Effective<Action>{unwritten_default_action(), {}, {}};
  }
  return *ir.syscalls;
}

namespace {

// The safe defaults every plan carries (policy.md), as deny sets of the
// group table refused with an errno: EPERM, what the kernel itself answers
// a caller without the privilege; EACCES, what Landlock answers an execve it
// refuses; ENOSYS where a program is to fall back to a call a rule can see
// (as for clone3). The descriptor-exec set closes a gap in
// filesystem.execute, so it comes only with it. Naming a call in an allow
// list opts into it only where that name says so (naming unshare asks for
// namespaces); a call every program makes (prlimit64, chmod, open, ioctl)
// is opted into only by an `allow` rule for it.
struct SafeDefault {
  llvm::StringRef group;
  int errno_value;
  bool with_execute_rules;
  bool named_call_opts_in;
};
constexpr SafeDefault kSafeDefaults[] = {
    {"namespaces", EPERM, false, true},
    {"descriptor-exec", EACCES, true, true},
    {"foreign-limits", EPERM, false, false},
    {"setid-modes", EPERM, false, false},
    {"inode-flags", EPERM, false, false},
    {"hidden-modes", ENOSYS, false, false},
};

// A call the policy opts into despite a safe default: named in an allow list
// (by name: a group is no opt-in) or given an `allow` rule, in any document.
// Unconditional, or for the arguments its rules' conditions match.
struct OptIn {
  SourceRef from;
  bool unconditional = false;
  std::vector<const SyscallRule*> rules;
};

std::map<std::string, OptIn> safe_default_opt_ins(const std::vector<PolicyDocument>& documents, bool by_name) {
  std::map<std::string, OptIn> out;
  for (const PolicyDocument& doc : documents) {
    if (!doc.syscalls) continue;
    for (const NameEntry& entry : doc.syscalls->allow.value_or(std::vector<NameEntry>{}))
      if (by_name && !llvm::StringRef(entry.name).startswith("@"))
        out.try_emplace(entry.name, OptIn{entry.source, false, {}}).first->second.unconditional = true;
    for (const SyscallRule& rule : doc.syscalls->rules) {
      if (rule.action.value.kind != Action::Kind::kAllow) continue;
      OptIn& opt_in = out.try_emplace(rule.syscall.name, OptIn{rule.action.source, false, {}}).first->second;
      if (rule.when) opt_in.rules.push_back(&rule);
      else opt_in.unconditional = true;
    }
  }
  return out;
}

// Nothing to add when the filter refuses the call anyway: a denied name, or
// one an allowlist with a refusing default does not permit.
bool refused_anyway(const SyscallIR& ir, const std::string& name) {
  if (ir.denied.count(name)) return true;
  if (ir.mode != SyscallIR::Mode::kAllowlist || ir.allowed.count(name) || ir.conditionally_allowed.count(name)) return false;
  const Action::Kind kind = ir.default_action.value.kind;
  return kind == Action::Kind::kKill || kind == Action::Kind::kErrno;
}

// The policy already refuses the call where the default would, at least as strictly.
bool already_ruled(const SyscallIR& ir, const SyscallRuleIR& rule) {
  return std::any_of(ir.rules.begin(), ir.rules.end(), [&](const SyscallRuleIR& r) {
    return r.syscall == rule.syscall && r.when_text.has_value() == rule.when_text.has_value() &&
           (!r.when_text || r.when_text->value == rule.when_text->value) &&
           r.action.strictness() >= rule.action.strictness();
  });
}

// The default's rule for one call, narrowed by the policy's conditional
// opt-in: refused where the default's condition holds and no allow rule's.
SyscallRuleIR safe_default_rule(llvm::StringRef syscall, std::optional<llvm::StringRef> when_text, const Action& action,
                                const SafeDefault& d, const OptIn* opt_in) {
  SyscallRuleIR rule{syscall.str(), std::nullopt, std::nullopt, action, {}, {}, d.group.str()};
  std::vector<ConditionExpr> parts;
  std::string text;
  if (when_text) {
    ConditionError error;
    std::optional<ConditionExpr> parsed = parse_condition(*when_text, error);
    assert(parsed && "the group table's conditions parse");
    parts.push_back(std::move(*parsed));
    text = when_text->str();
  }
  if (opt_in) {
    std::vector<ConditionExpr> allowed;
    std::string allowed_text;
    for (const SyscallRule* r : opt_in->rules) {
      allowed.push_back(*r->when);
      allowed_text += (allowed_text.empty() ? "" : " || ") + r->when_text->value;
    }
    parts.push_back(negation(chained(ConditionExpr::Kind::kOr, std::move(allowed))));
    text = (text.empty() ? "" : "(" + text + ") && ") + "!(" + allowed_text + ")";
  }
  if (parts.empty()) return rule;
  rule.when = chained(ConditionExpr::Kind::kAnd, std::move(parts));
  rule.when_text = Located<std::string>{text, opt_in ? opt_in->from : SourceRef{}};
  if (opt_in) rule.from = opt_in->from;
  return rule;
}

}  // namespace

std::optional<SyscallIR> resolve_syscalls(const std::vector<PolicyDocument>& documents,
                                          const std::map<Domain, SourceRef>& capabilities_denied,
                                          const std::optional<std::map<std::string, SourceRef>>& kept_capabilities,
                                          const std::vector<Target>& targets, Diagnostics& diags) {
  NameResolver resolver(targets, kept_capabilities, diags);
  std::vector<DocumentPermissions> permissions;
  std::optional<NameSet> allowed;
  NameSet denied;
  std::optional<Effective<Action>> default_action;
  std::vector<SyscallRuleIR> rules;
  bool any_syscalls = false;
  for (const PolicyDocument& doc : documents) {
    if (!doc.syscalls) continue;
    const SyscallsNode& node = *doc.syscalls;
    // An empty `syscalls: {}` asks for nothing and constrains nothing.
    if (!node.allow && !node.deny && node.rules.empty() && !node.default_action) continue;
    any_syscalls = true;
    // A document that refuses calls without writing `default` answers EPERM:
    // it takes part in the meet as such. In a denylist, `default` is the
    // answer of its denied names.
    const std::optional<Located<Action>> stated =
        node.default_action ? node.default_action
        : node.allow || node.deny
            ? std::optional<Located<Action>>(Located<Action>{unwritten_default_action(), node.source})
            : std::nullopt;
    if (stated) {
      const Located<Action>& next = *stated;
      if (!default_action) {
        default_action = Effective<Action>{next.value, next.source, {}};
      } else if (next.value.strictness() > default_action->value.strictness()) {
        default_action->narrowed.push_back(default_action->from);
        default_action->value = next.value;
        default_action->from = next.source;
      }
    }
    NameSet doc_allowed = node.allow ? resolver.expand(*node.allow, NameResolver::Context::kAllow) : NameSet{};
    permissions.push_back(document_permissions(doc, node, doc_allowed));
    NameSet doc_denied = node.deny ? resolver.expand(*node.deny, NameResolver::Context::kDeny) : NameSet{};
    check_document_conflicts(doc_allowed, doc_denied, diags);
    check_rule_conflicts(node.rules, diags);
    denied.insert(doc_denied.begin(), doc_denied.end());
    if (node.allow) {
      if (!allowed) {
        allowed = std::move(doc_allowed);
      } else {
        NameSet both;
        for (const auto& [name, source] : doc_allowed)
          if (allowed->count(name)) both.emplace(name, source);
        allowed = std::move(both);
      }
    }
    for (const SyscallRule& rule : node.rules)
      if (resolver.check(rule.syscall))
        rules.push_back({rule.syscall.name, rule.when_text, rule.when, rule.action.value, rule.action.source, {}, {}});
  }
  // capabilities.deny: [syscall] leaves nothing but the start-up set.
  if (auto it = capabilities_denied.find(Domain::kSyscall); it != capabilities_denied.end()) {
    allowed = NameSet{};
    any_syscalls = true;
  }
  const auto process_denial = capabilities_denied.find(Domain::kProcessCreation);
  if (!any_syscalls && process_denial == capabilities_denied.end()) return std::nullopt;

  SyscallIR ir;
  ir.mode = allowed ? SyscallIR::Mode::kAllowlist : SyscallIR::Mode::kDenylist;
  ir.default_action = default_action.value_or(Effective<Action>{unwritten_default_action(), {}, {}});
  ir.denied = std::move(denied);
  for (const auto& [name, why] : resolver.left_out())
    if (!ir.denied.count(name)) ir.left_out_of_deny.emplace(name, why);
  ir.rules = std::move(rules);
  if (process_denial != capabilities_denied.end()) deny_process_creation(ir, process_denial->second, targets);
  add_group_rules(ir, resolver.rule_groups(), targets);
  normalize_rules(ir.rules, targets, diags);
  if (allowed) {
    conditional_allows(ir, permissions, targets, diags);
    // A denied name outranks every allow-list.
    for (const auto& [name, source] : *allowed)
      if (!ir.denied.count(name)) ir.allowed.emplace(name, SyscallEntryIR{SyscallEntryIR::Origin::kPolicy, source});
    // The start-up set never overrides a deny the policy wrote.
    for (const GroupMember& member : startup_group().members)
      for (const Target& target : targets)
        if (syscall_number(target, member.syscall) && !ir.denied.count(member.syscall.str()))
          ir.allowed.emplace(member.syscall.str(), SyscallEntryIR{SyscallEntryIR::Origin::kStartup, {}});
  }
  return ir;
}

void add_safe_defaults(PolicyIR& ir, const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                       Diagnostics& diags) {
  SyscallIR& syscalls = syscalls_or_empty_denylist(ir);
  const std::map<std::string, OptIn> named_or_ruled = safe_default_opt_ins(documents, true);
  const std::map<std::string, OptIn> ruled = safe_default_opt_ins(documents, false);
  for (const SafeDefault& d : kSafeDefaults) {
    if (d.with_execute_rules && !ir.filesystem.execute) continue;
    const std::map<std::string, OptIn>& opt_ins = d.named_call_opts_in ? named_or_ruled : ruled;
    const SyscallGroup& group = *find_group(d.group);
    SafeDefaultIR applied{d.group.str(), Action{Action::Kind::kErrno, d.errno_value}, {}};
    auto add = [&](llvm::StringRef name, std::optional<llvm::StringRef> when_text) {
      if (std::none_of(targets.begin(), targets.end(), [&](const Target& t) { return syscall_number(t, name).has_value(); }))
        return;
      if (refused_anyway(syscalls, name.str())) return;
      const auto opt_in = opt_ins.find(name.str());
      if (opt_in != opt_ins.end()) applied.allowed_by_policy.emplace(name.str(), opt_in->second.from);
      if (opt_in != opt_ins.end() && opt_in->second.unconditional) return;
      SyscallRuleIR rule = safe_default_rule(name, when_text, applied.action, d,
                                             opt_in == opt_ins.end() ? nullptr : &opt_in->second);
      if (already_ruled(syscalls, rule)) return;
      // Only a policy's own condition can make this fail: the table's parse and normalize.
      if (const std::optional<NormalizeFailure> failure = normalize_rule(rule, targets)) {
        diags.error(opt_in->second.from.loc,
                    "the safe default @" + d.group.str() + " for " + rule.syscall +
                        ", narrowed by this allow rule, is a condition libseccomp cannot express: " +
                        failure->error.message + " (for " + failure->target->name +
                        "); allow the call without a condition, or simplify it",
                    diag::kConditionSemantics, opt_in->second.from.range);
        return;
      }
      syscalls.rules.push_back(std::move(rule));
    };
    for (const GroupMember& member : group.members) add(member.syscall, std::nullopt);
    for (const GroupRule& rule : group.rules) add(rule.syscall, rule.when);
    syscalls.safe_defaults.push_back(std::move(applied));
  }
}

}  // namespace aasmc
