#include "middle/resolve_syscalls.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <set>
#include <span>

#include "tables/syscall_groups.h"

namespace aasmc {

namespace {

using NameSet = std::map<std::string, SourceRef>;

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

// Whether `rule` is written for `target` (its call exists there).
bool on_target(const SyscallRuleIR& rule, const Target& target) { return rule.normalized.count(target.name) > 0; }

// The answer of `a` is what a call both rules match gets, or one as strict:
// where rules overlap the strictest action wins, and between two errnos the
// larger (docs/policy-language.md).
bool at_least_as_strict(const Action& a, const Action& b) {
  if (a.strictness() != b.strictness()) return a.strictness() > b.strictness();
  return a.kind != Action::Kind::kErrno || a.errno_value >= b.errno_value;
}

// On every target: the rule matches no call (its normal form is false).
bool never_holds(const SyscallRuleIR& rule, const std::vector<Target>& targets) {
  bool written = false;
  for (const Target& target : targets)
    if (on_target(rule, target)) {
      if (!rule.normalized.at(target.name).never_true()) return false;
      written = true;
    }
  return written;
}

// On every target: each call `rule` matches, `other` matches and answers at
// least as strictly, so `rule` decides nothing. Of two identical rules, the
// later one is the shadowed.
bool shadowed_by(const SyscallRuleIR& rule, size_t at, const SyscallRuleIR& other, size_t other_at,
                 const std::vector<Target>& targets) {
  if (other.syscall != rule.syscall || !at_least_as_strict(other.action, rule.action)) return false;
  bool identical = other.action == rule.action;
  for (const Target& target : targets) {
    if (!on_target(rule, target)) continue;
    if (!on_target(other, target)) return false;
    const NormalizedCondition &mine = rule.normalized.at(target.name), &theirs = other.normalized.at(target.name);
    if (!condition_implies(mine, theirs)) return false;
    identical = identical && condition_implies(theirs, mine);
  }
  return !identical || other_at < at;
}

// A policy rule that can never fire is a mistake the policy's author would
// want named: a condition that never holds (an error: the rule was meant to
// do something), or a rule another one wholly shadows (a warning).
void check_rules_fire(std::span<const SyscallRuleIR> rules, const std::vector<Target>& targets, Diagnostics& diags) {
  std::vector<bool> never(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) never[i] = rules[i].when && never_holds(rules[i], targets);
  for (size_t i = 0; i < rules.size(); ++i) {
    const SyscallRuleIR& rule = rules[i];
    const SourceRef& at = rule.when_text ? rule.when_text->source : rule.from;
    if (never[i]) {
      diags.error(at.loc,
                  "this condition can never hold (its normal form is false on every target), so the rule for " +
                      rule.syscall + " never fires; fix the comparisons or remove the rule",
                  diag::kConditionNeverHolds, at.range);
      continue;
    }
    for (size_t j = 0; j < rules.size(); ++j)
      if (j != i && !never[j] && shadowed_by(rule, i, rules[j], j, targets)) {
        diags.warning(at.loc,
                      "this rule for " + rule.syscall + " never decides a call: another rule (" +
                          rules[j].action.text() +
                          ") matches every call it matches and answers at least as strictly; remove it or narrow "
                          "the other",
                      diag::kRuleShadowed, at.range);
        diags.note(rules[j].from.loc, "the rule that shadows it");
        break;
      }
  }
}

// The calls `allow` rules permit beyond the allowlists, in normal form per
// target where every allowlist document permits them (merge.h ConditionalAllow).
// Under capabilities.deny: [syscall] none is: the denial is an allowlist of
// nothing that no rule widens.
void conditional_allows(SyscallIR& ir, const std::vector<ConditionalAllow>& allows, bool syscalls_denied,
                        const std::vector<Target>& targets, Diagnostics& diags) {
  for (const ConditionalAllow& allow : allows) {
    const std::string& name = allow.syscall;
    if (!allow.permitted || syscalls_denied) {
      diags.warning(allow.first.loc,
                    "this allow rule for " + name + " has no effect: " +
                        (syscalls_denied ? std::string("capabilities.deny: [syscall] leaves nothing but the start-up set")
                                         : "an allowlist elsewhere in the cascade does not permit " + name) +
                        ", and a rule cannot widen it",
                    diag::kNoEffect, allow.first.range);
      continue;
    }
    for (const Target& target : targets) {
      if (!syscall_number(target, name)) continue;
      if (allow.required.empty()) {
        ir.conditionally_allowed[name][target.name] = NormalizedCondition{{Conjunct{}}};
        continue;
      }
      const ConditionExpr condition = chained(ConditionExpr::Kind::kAnd, allow.required);
      ConditionError error;
      auto normalized = normalize_condition(condition, name, target, error);
      if (!normalized) {
        diags.error(allow.first.loc,
                    "the allow rules for " + name + " combine into a condition libseccomp cannot express: " +
                        error.message + " (for " + target.name + ")",
                    diag::kConditionSemantics, allow.first.range);
        break;
      }
      ir.conditionally_allowed[name][target.name] = std::move(*normalized);
    }
  }
}


// The safe defaults every plan carries (docs/policy-language.md), as deny sets
// of the group table refused with an errno: EPERM, what the kernel itself
// answers a caller without the privilege; EACCES, what Landlock answers an
// execve it refuses; ENOSYS where a program is to fall back to a call a rule
// can see (as for clone3). The descriptor-exec set closes a gap in
// filesystem.execute, so it comes only with it. Naming a call in an allow list
// opts into it only where that name says so (naming unshare asks for
// namespaces); a call every program makes (prlimit64, chmod, open, ioctl) is
// opted into only by an `allow` rule for it.
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
                                const SafeDefault& d, const SafeDefaultOptIn* opt_in) {
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
    for (const auto& [when_text, when] : opt_in->conditions) {
      allowed.push_back(when);
      allowed_text += (allowed_text.empty() ? "" : " || ") + when_text;
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

SyscallIR& syscalls_or_empty_denylist(PolicyIR& ir) {
  if (!ir.syscalls) {
    ir.syscalls.emplace();
    ir.syscalls->mode = SyscallIR::Mode::kDenylist;
    ir.syscalls->default_action = Effective<Action>{unwritten_default_action(), {}, {}};
  }
  return *ir.syscalls;
}

std::optional<SyscallIR> resolve_syscalls(const std::optional<MergedSyscalls>& merged,
                                          const std::map<Domain, SourceRef>& capabilities_denied,
                                          const std::vector<Target>& targets, Diagnostics& diags) {
  static const MergedSyscalls kNothing;
  const MergedSyscalls& m = merged ? *merged : kNothing;
  std::optional<NameSet> allowed = m.allowed;
  // capabilities.deny: [syscall] leaves nothing but the start-up set.
  const bool syscalls_denied = capabilities_denied.count(Domain::kSyscall) > 0;
  if (syscalls_denied) allowed = NameSet{};
  const auto process_denial = capabilities_denied.find(Domain::kProcessCreation);
  if (!merged && !syscalls_denied && process_denial == capabilities_denied.end()) return std::nullopt;

  SyscallIR ir;
  ir.mode = allowed ? SyscallIR::Mode::kAllowlist : SyscallIR::Mode::kDenylist;
  ir.default_action = m.default_action.value_or(Effective<Action>{unwritten_default_action(), {}, {}});
  ir.denied = m.denied;
  ir.allowlists = m.allowlists;
  ir.left_out_of_deny = m.left_out_of_deny;
  ir.rules = m.rules;
  const size_t policy_rules = ir.rules.size();
  if (process_denial != capabilities_denied.end()) deny_process_creation(ir, process_denial->second, targets);
  add_group_rules(ir, m.rule_groups, targets);
  normalize_rules(ir.rules, targets, diags);
  // Only on rules that are otherwise sound: a conflict has said its own.
  if (diags.error_count() == 0) check_rules_fire(std::span(ir.rules).first(policy_rules), targets, diags);
  if (allowed) {
    conditional_allows(ir, m.conditional_allows, syscalls_denied, targets, diags);
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

std::vector<SafeDefaultRefusal> safe_default_refusals(llvm::StringRef syscall) {
  std::vector<SafeDefaultRefusal> out;
  for (const SafeDefault& d : kSafeDefaults) {
    if (d.with_execute_rules || d.named_call_opts_in) continue;
    const SyscallGroup& group = *find_group(d.group);
    for (const GroupMember& member : group.members)
      if (member.syscall == syscall) out.push_back({d.group, d.errno_value, std::nullopt});
    for (const GroupRule& rule : group.rules)
      if (rule.syscall == syscall) out.push_back({d.group, d.errno_value, rule.when});
  }
  return out;
}

void add_safe_defaults(PolicyIR& ir, const std::optional<MergedSyscalls>& merged, const std::vector<Target>& targets,
                       Diagnostics& diags) {
  SyscallIR& syscalls = syscalls_or_empty_denylist(ir);
  static const std::map<std::string, SafeDefaultOptIn> kNone;
  for (const SafeDefault& d : kSafeDefaults) {
    if (d.with_execute_rules && !ir.filesystem.execute) continue;
    const std::map<std::string, SafeDefaultOptIn>& opt_ins =
        !merged ? kNone : d.named_call_opts_in ? merged->opted_in_by_name_or_rule : merged->opted_in_by_rule;
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
