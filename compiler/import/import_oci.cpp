// `aasmc import --from oci`: an OCI runtime-spec linux.seccomp object, or a
// docker/moby profile (the same with archMap and includes/excludes), as an
// aasm syscalls node. docs/import.md#oci-and-moby-seccomp-profiles has the
// mapping; each choice below says why it is what a container without
// capabilities gets, since that is how aasm-launch runs every command.
#include <linux/seccomp.h>

#include <llvm/ADT/StringExtras.h>

#include <algorithm>
#include <map>
#include <set>

#include "backend/syscall_regions.h"
#include "import/import_policy.h"
#include "frontend/json_tree.h"
#include "middle/condition_normalize.h"
#include "middle/resolve_syscalls.h"
#include "tables/errno_names.h"
#include "tables/oci_names.h"
#include "tables/syscall_groups.h"

namespace aasmc {
namespace {

using namespace json_input;

// An OCI action as a policy writes it, and what the mapping did.
struct MappedAction {
  std::string text;      // "allow", "kill", "log", "errno:EPERM"
  bool allows = false;
  std::string tightened;  // why it is stricter than the input's, empty when exact
};

std::string action_list() {
  std::string list;
  for (const OciAction& action : oci_actions()) list += std::string(list.empty() ? "" : ", ") + action.name;
  return list;
}

// `action_node` (an action name) with its errno (`errno_node`, EPERM when
// absent, as the runtime spec says).
std::optional<MappedAction> map_action(const YamlNode& action_node, const YamlNode* errno_node, const std::string& where,
                                       const std::string& errno_where, Diagnostics& diags) {
  std::optional<std::string> name = string_value(action_node, where, diags);
  if (!name) return std::nullopt;
  const OciAction* action = find_oci_action(*name);
  if (!action) {
    std::vector<llvm::StringRef> names;
    for (const OciAction& known : oci_actions()) names.push_back(known.name);
    std::string message = where + ": unknown action '" + *name + "' (" + action_list() + ")";
    if (auto guess = closest_match(*name, names); !guess.empty()) message += "; did you mean '" + guess + "'?";
    diags.error(action_node.loc, message, diag::kBadValue, action_node.range());
    return std::nullopt;
  }
  const bool takes_errno = action->ret == SECCOMP_RET_ERRNO || action->ret == SECCOMP_RET_TRACE;
  if (errno_node && !takes_errno) {
    diags.error(errno_node->loc, errno_where + ": an errno is only for SCMP_ACT_ERRNO and SCMP_ACT_TRACE, not " + *name,
                diag::kBadValue, errno_node->range());
    return std::nullopt;
  }
  switch (action->ret) {
    case SECCOMP_RET_ALLOW: return MappedAction{"allow", true, ""};
    case SECCOMP_RET_LOG: return MappedAction{"log", false, ""};
    case SECCOMP_RET_KILL_PROCESS: return MappedAction{"kill", false, ""};
    case SECCOMP_RET_ERRNO: {
      uint64_t value = EPERM;
      if (errno_node) {
        std::optional<uint64_t> given = unsigned_value(*errno_node, errno_where, 4095, diags);
        if (!given) return std::nullopt;
        if (*given == 0) {
          diags.error(errno_node->loc, errno_where + ": errno 0 would make the call succeed without running it, which no policy answers",
                      diag::kBadValue, errno_node->range());
          return std::nullopt;
        }
        value = *given;
      }
      return MappedAction{"errno:" + errno_name(int(value)), false, ""};
    }
    case SECCOMP_RET_KILL_THREAD:
      return MappedAction{"kill", false, *name + " kills the thread; a policy's kill ends the process"};
    case SECCOMP_RET_TRAP:
      return MappedAction{"kill", false, *name + " sends a SIGSYS the process may catch; a policy kills"};
    default:  // TRACE, NOTIFY: another process decides, which a policy has no place for
      return MappedAction{"kill", false, *name + " hands the call to a tracer or notifier, which a policy has none of: killed"};
  }
}

// The targets the profile is for: `requested` narrowed to its
// architectures (`architectures`, archMap's `architecture`); every other
// architecture named gets its note.
std::optional<std::vector<Target>> profile_targets(const YamlNode& root, const std::vector<Target>& requested,
                                                   ImportedPolicy& policy, Diagnostics& diags) {
  std::vector<std::pair<std::string, const YamlNode*>> named, subarchitectures;
  if (const YamlNode* list = member(root, "architectures")) {
    auto names = string_list(*list, "architectures", diags);
    if (!names) return std::nullopt;
    named = *names;
  }
  if (const YamlNode* map = member(root, "archMap")) {
    if (!expect_array(*map, "archMap", diags)) return std::nullopt;
    for (size_t i = 0; i < map->items.size(); ++i) {
      const YamlNode& item = map->items[i];
      const std::string where = "archMap[" + std::to_string(i) + "]";
      if (!expect_object(item, where, diags) || !check_keys(item, {"architecture", "subArchitectures"}, where, diags))
        return std::nullopt;
      const YamlNode* arch = required_member(item, "architecture", where, diags);
      if (!arch) return std::nullopt;
      auto name = string_value(*arch, where + ".architecture", diags);
      if (!name) return std::nullopt;
      named.emplace_back(*name, arch);
      if (const YamlNode* subs = member(item, "subArchitectures")) {
        auto names = string_list(*subs, where + ".subArchitectures", diags);
        if (!names) return std::nullopt;
        // Only those of a target matter: another architecture's go with it.
        if (std::any_of(requested.begin(), requested.end(), [&](const Target& t) { return *name == t.oci_arch; }))
          subarchitectures.insert(subarchitectures.end(), names->begin(), names->end());
      }
    }
  }
  if (named.empty()) return requested;
  std::vector<Target> targets;
  for (const Target& target : requested)
    if (std::any_of(named.begin(), named.end(), [&](const auto& n) { return n.first == target.oci_arch; }))
      targets.push_back(target);
  for (const auto& [name, node] : named) {
    const std::string& arch = name;  // a lambda may not capture a structured binding (clang 14)
    if (std::any_of(targets.begin(), targets.end(), [&arch](const Target& t) { return arch == t.oci_arch; })) continue;
    policy.note(*node, name, ImportOutcome::kNotExpressible,
                "a policy is compiled for x86_64 and aarch64 (or those --arch names), not this architecture or its sub-architectures");
  }
  for (const auto& [name, node] : subarchitectures)
    policy.note(*node, name, ImportOutcome::kTightened,
                "killed: every plan kills the calls of another ABI (i386, x32, arm) on its targets");
  if (targets.empty()) {
    diags.error(root.loc, "the profile names no architecture of the targets (x86_64, aarch64, or those of --arch)",
                diag::kBadValue);
    return std::nullopt;
  }
  return targets;
}

// A comparison as the `when:` language writes it (tables/oci_names.h names
// the operator); values above 255 in hex, as masks and flags read.
std::string number_text(uint64_t value) {
  return value < 256 ? std::to_string(value) : "0x" + llvm::utohexstr(value, /*LowerCase=*/true);
}

std::optional<std::vector<std::string>> comparisons(const YamlNode& args, const std::string& where, bool& repeats,
                                                    Diagnostics& diags) {
  if (!expect_array(args, where, diags)) return std::nullopt;
  std::vector<std::string> out;
  std::set<uint64_t> indexes;
  for (size_t i = 0; i < args.items.size(); ++i) {
    const YamlNode& arg = args.items[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (!expect_object(arg, at, diags) || !check_keys(arg, {"index", "value", "valueTwo", "op"}, at, diags))
      return std::nullopt;
    const YamlNode* index_node = required_member(arg, "index", at, diags);
    const YamlNode* value_node = required_member(arg, "value", at, diags);
    const YamlNode* op_node = required_member(arg, "op", at, diags);
    if (!index_node || !value_node || !op_node) return std::nullopt;
    auto index = unsigned_value(*index_node, at + ".index", 5, diags);
    auto value = unsigned_value(*value_node, at + ".value", UINT64_MAX, diags);
    std::optional<uint64_t> value_two = 0;
    if (const YamlNode* two = member(arg, "valueTwo")) value_two = unsigned_value(*two, at + ".valueTwo", UINT64_MAX, diags);
    auto op_text = string_value(*op_node, at + ".op", diags);
    if (!index || !value || !value_two || !op_text) return std::nullopt;
    const OciComparisonName* op = find_oci_comparison(*op_text);
    if (!op) {
      std::string list;
      for (const OciComparisonName& known : oci_comparisons()) list += std::string(list.empty() ? "" : ", ") + known.name;
      diags.error(op_node->loc, at + ".op: unknown comparison '" + *op_text + "' (" + list + ")", diag::kBadValue,
                  op_node->range());
      return std::nullopt;
    }
    const std::string operand = "arg" + std::to_string(*index);
    if (op->op == OciComparison::kMaskedEq)  // libseccomp's: (arg & value) == valueTwo
      out.push_back("(" + operand + " & " + number_text(*value) + ") == " + number_text(*value_two));
    else
      out.push_back(operand + " " + op->condition_operator + " " + number_text(*value));
    repeats = repeats || !indexes.insert(*index).second;
  }
  return out;
}

// includes / excludes of a moby profile entry.
struct Condition {
  std::vector<std::pair<std::string, const YamlNode*>> arches, caps;
  const YamlNode* min_kernel = nullptr;
};

std::optional<Condition> entry_condition(const YamlNode& node, const std::string& where, Diagnostics& diags) {
  if (!expect_object(node, where, diags) || !check_keys(node, {"arches", "caps", "minKernel"}, where, diags))
    return std::nullopt;
  Condition out;
  for (auto [key, into] : {std::pair{"arches", &out.arches}, std::pair{"caps", &out.caps}})
    if (const YamlNode* list = member(node, key)) {
      auto names = string_list(*list, where + "." + key, diags);
      if (!names) return std::nullopt;
      *into = *names;
    }
  if ((out.min_kernel = member(node, "minKernel"))) {
    auto text = string_value(*out.min_kernel, where + ".minKernel", diags);
    if (!text) return std::nullopt;
    unsigned major = 0, minor = 0;
    llvm::StringRef rest = *text;
    if (rest.consumeInteger(10, major) || !rest.consume_front(".") || rest.consumeInteger(10, minor) || !rest.empty()) {
      diags.error(out.min_kernel->loc, where + ".minKernel '" + *text + "' is not a kernel version MAJOR.MINOR",
                  diag::kBadValue, out.min_kernel->range());
      return std::nullopt;
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

struct Rule {
  std::string syscall, when, action;
  std::string from;  // the entry, for the comment above the rule
  const YamlNode* at = nullptr;  // the entry, for a note about the rule
};

// The profile read entry by entry into an allow list and rules.
class ProfileImport {
 public:
  ProfileImport(ImportedPolicy& policy, Diagnostics& diags) : policy_(policy), diags_(diags) {}

  bool run(const YamlNode& root, const std::vector<Target>& requested) {
    if (!expect_object(root, "the profile", diags_) ||
        !check_keys(root, {"defaultAction", "defaultErrnoRet", "architectures", "archMap", "syscalls", "flags",
                           "listenerPath", "listenerMetadata"},
                    "the profile", diags_))
      return false;
    auto targets = profile_targets(root, requested, policy_, diags_);
    if (!targets) return false;
    policy_.targets = *targets;
    const YamlNode* default_node = required_member(root, "defaultAction", "the profile", diags_);
    if (!default_node) return false;
    auto base = map_action(*default_node, member(root, "defaultErrnoRet"), "defaultAction", "defaultErrnoRet", diags_);
    if (!base) return false;
    default_ = *base;
    note_default(*default_node);
    note_unused_members(root);
    if (const YamlNode* entries = member(root, "syscalls")) {
      if (!expect_array(*entries, "syscalls", diags_)) return false;
      for (size_t i = 0; i < entries->items.size(); ++i)
        if (!entry(entries->items[i], "syscalls[" + std::to_string(i) + "]")) return false;
    }
    if (!default_.allows) {
      for (const std::string& name : std::set<std::string>(allowed_by_rule_)) fold_safe_default(name);
      refuse_startup_calls(root);
    }
    policy_.note(root, "the profile", ImportOutcome::kTightened,
                 "the plan adds the safe defaults every plan carries (docs/policy-language.md): x32 and foreign-"
                 "architecture calls killed, unknown numbers and clone3 ENOSYS, io_uring refused unless an allowlist "
                 "names it, namespace creation refused, openat2 ENOSYS");
    write_spec();
    return true;
  }

 private:
  void note_default(const YamlNode& node) {
    const std::string kind = default_.allows ? "a denylist (the profile allows what no entry refuses)"
                                             : "an allowlist whose default is " + default_.text;
    if (default_.tightened.empty())
      policy_.note(node, "defaultAction", ImportOutcome::kCarried, "syscalls is " + kind);
    else
      policy_.note(node, "defaultAction", ImportOutcome::kTightened, "syscalls is " + kind + ": " + default_.tightened);
  }

  void note_unused_members(const YamlNode& root) {
    if (const YamlNode* flags = member(root, "flags")) {
      if (!string_list(*flags, "flags", diags_)) return;
      policy_.note(*flags, "flags", ImportOutcome::kNotExpressible,
                   "the launcher chooses the filter flags of every plan (docs/seccomp.md); a policy names none");
    }
    for (const char* key : {"listenerPath", "listenerMetadata"})
      if (const YamlNode* node = member(root, key))
        policy_.note(*node, key, ImportOutcome::kNotExpressible,
                     "a policy hands no call to a user-space notifier (SCMP_ACT_NOTIFY is imported as kill)");
  }

  bool entry(const YamlNode& node, const std::string& where) {
    if (!expect_object(node, where, diags_) ||
        !check_keys(node, {"names", "name", "action", "errnoRet", "args", "comment", "includes", "excludes"}, where,
                    diags_))
      return false;
    std::vector<std::pair<std::string, const YamlNode*>> names;
    if (const YamlNode* list = member(node, "names")) {
      auto given = string_list(*list, where + ".names", diags_);
      if (!given) return false;
      names = *given;
    }
    if (const YamlNode* single = member(node, "name")) {  // the runtime spec's older form
      auto given = string_value(*single, where + ".name", diags_);
      if (!given) return false;
      names.emplace_back(*given, single);
    }
    if (names.empty()) {
      diags_.error(node.loc, where + " names no call (names: [...])", diag::kMissingKey);
      return false;
    }
    const YamlNode* action_node = required_member(node, "action", where, diags_);
    if (!action_node) return false;
    auto action = map_action(*action_node, member(node, "errnoRet"), where + ".action", where + ".errnoRet", diags_);
    if (!action) return false;
    if (const YamlNode* comment = member(node, "comment"); comment && !string_value(*comment, where + ".comment", diags_))
      return false;
    bool repeats = false;
    std::vector<std::string> tests;
    if (const YamlNode* args = member(node, "args")) {
      auto given = comparisons(*args, where + ".args", repeats, diags_);
      if (!given) return false;
      tests = *given;
    }
    std::optional<Condition> includes, excludes;
    if (const YamlNode* n = member(node, "includes"); n && !(includes = entry_condition(*n, where + ".includes", diags_)))
      return false;
    if (const YamlNode* n = member(node, "excludes"); n && !(excludes = entry_condition(*n, where + ".excludes", diags_)))
      return false;
    if (!applies(node, where, includes, excludes)) return true;
    const std::vector<Target> on = entry_targets(includes, excludes);
    if (on.empty()) {
      policy_.note(node, where, ImportOutcome::kCarried,
                   "applies only to architectures the policy is not for: nothing to carry");
      return true;
    }
    // runc ORs the comparisons of an entry that compares an argument twice.
    std::vector<std::string> whens;
    if (repeats) whens = tests;
    else if (!tests.empty()) whens.push_back(join_and(tests));
    add_calls(node, where, names, *action, whens, on);
    if (repeats)
      policy_.note(node, where, ImportOutcome::kCarried,
                   "compares an argument twice: each comparison is a rule of its own, ORed, as runc reads it");
    return true;
  }

  static std::string join_and(const std::vector<std::string>& tests) {
    std::string out;
    for (const std::string& test : tests) out += (out.empty() ? "" : " && ") + test;
    return out;
  }

  // Whether a container holding no capability, on a kernel aasm runs on,
  // takes the entry; the entry's note when it does not or when it does
  // conditionally.
  bool applies(const YamlNode& node, const std::string& where, const std::optional<Condition>& includes,
               const std::optional<Condition>& excludes) {
    if (includes && !includes->caps.empty()) {
      std::vector<std::string> caps;
      for (const auto& [cap, at] : includes->caps) caps.push_back(cap);
      policy_.note(node, where, ImportOutcome::kNotExpressible,
                   "only for a container holding " + joined(caps) +
                       ": a policy's filter does not follow capabilities, and aasm-launch drops every one "
                       "(isolation.linux_capabilities: [], the default), so these calls get what such a profile gives a "
                       "container without them");
      return false;
    }
    if (excludes && excludes->min_kernel) {
      policy_.note(node, where, ImportOutcome::kNotExpressible,
                   "only for kernels older than " + excludes->min_kernel->scalar +
                       ": a plan is compiled once for every kernel, so the entry is left out");
      return false;
    }
    if (includes && includes->min_kernel)
      policy_.note(*includes->min_kernel, where + ".includes.minKernel", ImportOutcome::kCarried,
                   "taken as met: a plan is compiled once, and a kernel too old for a call answers ENOSYS for it anyway");
    if (excludes && !excludes->caps.empty())
      policy_.note(node, where + ".excludes.caps", ImportOutcome::kCarried,
                   "taken as met: the command holds no capability");
    return true;
  }

  std::vector<Target> entry_targets(const std::optional<Condition>& includes, const std::optional<Condition>& excludes) {
    auto listed = [](const std::optional<Condition>& condition, const Target& target) {
      return std::any_of(condition->arches.begin(), condition->arches.end(),
                         [&](const auto& arch) { return arch.first == target.go_arch; });
    };
    std::vector<Target> out;
    for (const Target& target : policy_.targets) {
      if (includes && !includes->arches.empty() && !listed(includes, target)) continue;
      if (excludes && listed(excludes, target)) continue;
      out.push_back(target);
    }
    return out;
  }

  // How strict an answer is, as the merge ranks actions: kill > errno > log > allow.
  static int strictness(const std::string& action) {
    if (action == "kill") return 3;
    if (action.starts_with("errno:")) return 2;
    return action == "log" ? 1 : 0;
  }

  std::string target_names(const std::vector<const Target*>& targets) const {
    std::string out;
    for (const Target* target : targets) out += std::string(out.empty() ? "" : ", ") + target->name;
    return out;
  }

  void add_calls(const YamlNode& node, const std::string& where,
                 const std::vector<std::pair<std::string, const YamlNode*>>& names, const MappedAction& action,
                 const std::vector<std::string>& whens, const std::vector<Target>& on) {
    std::vector<std::string> absent, unknown, partial, some_arches;
    std::vector<const Target*> all;
    for (const Target& target : policy_.targets) all.push_back(&target);
    for (const auto& [name, at] : names) {
      std::vector<const Target*> has;
      for (const Target& target : policy_.targets)
        if (syscall_number(target, name)) has.push_back(&target);
      if (has.empty()) {
        (known_to_libseccomp(name) ? absent : unknown).push_back(name);
        continue;
      }
      if (action.allows && whens.empty()) allowed_outright_.insert(name);
      if (action.allows && default_.allows) continue;  // a denylist allows it already
      // A policy names only calls every target has (one document serves
      // them all): `aasmc import --arch` keeps the rest.
      if (has.size() < all.size()) {
        partial.push_back(name + " (" + target_names(has) + ")");
        continue;
      }
      if (on.size() < all.size()) {
        some_arches.push_back(name);
        if (action.allows) continue;  // refused everywhere, as the default refuses it
      }
      if (action.allows && whens.empty()) {
        allow_name(name);
        continue;
      }
      if (whens.empty()) rules_.push_back({name, "", action.text, where, &node});
      // A rule on a call the allowlist leaves out is ranked with the
      // default, which wins at equal rank (EPERM over an exported ENOSYS):
      // allow-listed, the call gets the rule's answer, as in the profile.
      if (whens.empty() && !default_.allows && action.text != default_.text) allow_name(name);
      for (const std::string& when : whens) rules_.push_back({name, when, action.text, where, &node});
      if (action.allows) allowed_by_rule_.insert(name);
    }
    const std::string targets = target_names(all);
    if (!absent.empty())
      policy_.note(node, where, ImportOutcome::kCarried,
                   joined(absent) + ": no such call on " + targets + " (another architecture's), so nothing to filter");
    if (!unknown.empty())
      policy_.note(node, where, ImportOutcome::kNotExpressible,
                   joined(unknown) + ": the libseccomp aasmc is built with knows no such call on any architecture (runc skips such names too)");
    if (!partial.empty()) note_partial(node, where, action, partial);
    if (!some_arches.empty())
      policy_.note(node, where, ImportOutcome::kTightened,
                   joined(some_arches) + ": the entry is for some architectures only, and one policy serves every target: " +
                       (action.allows ? "refused on all of them" : action.text + " on all of them"));
    if (action.allows && default_.allows)
      policy_.note(node, where, ImportOutcome::kCarried, "allowed: the default allows every call no entry refuses");
    else if (!action.tightened.empty())
      policy_.note(node, where + ".action", ImportOutcome::kTightened, action.tightened);
  }

  // Calls some targets lack get the default's answer where they exist.
  void note_partial(const YamlNode& node, const std::string& where, const MappedAction& action,
                    const std::vector<std::string>& partial) {
    const std::string hint = ": a policy for several targets names only calls all of them have; import with --arch to keep them";
    if (strictness(default_.text) < strictness(action.text) || default_.allows)
      policy_.note(node, where, ImportOutcome::kNotExpressible,
                   joined(partial) + " answer " + (default_.allows ? "allow" : default_.text) + ", not " + action.text + hint);
    else if (default_.text != action.text)
      policy_.note(node, where, ImportOutcome::kTightened,
                   joined(partial) + " answer " + default_.text + ", not " + action.text + hint);
  }

  void allow_name(const std::string& name) {
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) allowed_.push_back(name);
  }

  // The profile's allow rules for `name`, ORed.
  std::string allowed_when(const std::string& name) const {
    std::string out;
    for (const Rule& rule : rules_)
      if (rule.syscall == name && rule.action == "allow") out += (out.empty() ? "(" : " || (") + rule.when + ")";
    return out;
  }

  // How the profile's allow rules for a call stand to what aasm's safe
  // default leaves of it (`left`), on every target, by the exact cube
  // difference the export itself cuts regions with.
  enum class Cover { kExact, kWider, kNarrowerOrUnknown };
  static Cover cover(const std::string& allowed, const std::string& left, const std::string& name,
                     const std::vector<Target>& targets) {
    bool exact = true;
    for (const Target& target : targets) {
      ConditionError error;
      std::optional<NormalizedCondition> profile = compile_condition(allowed, name, target, error);
      std::optional<NormalizedCondition> safe = compile_condition(left, name, target, error);
      if (!profile || !safe || condition_covers(*profile, *safe) != true) return Cover::kNarrowerOrUnknown;
      exact = exact && condition_covers(*safe, *profile) == true;
    }
    return exact ? Cover::kExact : Cover::kWider;
  }

  // A call the profile allows for some arguments, which a safe default of
  // aasm's restricts in every policy (@foreign-limits: prlimit64 where pid
  // != 0 && new_limit != 0). Imported as allow rules, those would narrow the
  // safe default, and the export's own form of "allowed, with the safe
  // default" (its complement, 33 masked entries) so passes libseccomp's 256
  // alternatives. Where the rules allow exactly what the safe default
  // leaves, and the profile refuses the rest as the safe default does, the
  // call goes in the allow list and the safe default restricts it: the same
  // answers. Where they allow more and narrowing does not compile, the same,
  // tightened. Otherwise the rules stay (the compile names the call if it
  // fails).
  void fold_safe_default(const std::string& name) {
    const std::vector<SafeDefaultRefusal> refusals = safe_default_refusals(name);
    if (refusals.size() != 1 || !refusals[0].when) return;
    const SafeDefaultRefusal& safe = refusals[0];
    if (default_.text != "errno:" + errno_name(safe.errno_value)) return;
    const std::string allowed = allowed_when(name), refused = safe.when->str(), left = "!(" + refused + ")";
    const Cover how = cover(allowed, left, name, policy_.targets);
    if (how == Cover::kNarrowerOrUnknown) return;
    if (how == Cover::kWider && narrowing_compiles(refused, allowed, name)) return;
    const auto first = std::find_if(rules_.begin(), rules_.end(),
                                    [&](const Rule& r) { return r.syscall == name && r.action == "allow"; });
    const YamlNode& at = *first->at;
    const std::string where = first->from;
    rules_.erase(std::remove_if(rules_.begin(), rules_.end(),
                                [&](const Rule& r) { return r.syscall == name && r.action == "allow"; }),
                 rules_.end());
    allow_name(name);
    allowed_outright_.insert(name);
    allowed_by_rule_.erase(name);
    const std::string as = name + " is in syscalls.allow, and aasm's safe default @" + safe.group.str() +
                           " refuses it where " + refused + " (" + default_.text + ")";
    if (how == Cover::kExact)
      policy_.note(at, where, ImportOutcome::kCarried,
                   as + ": the profile's entries allow exactly what that leaves (aasmc export's form of it)");
    else
      policy_.note(at, where, ImportOutcome::kTightened,
                   as + ", where the profile allows it for some of those arguments too: narrowing the safe default "
                        "by the profile's entries passes libseccomp's 256 alternatives");
  }

  // Whether the safe default narrowed by the allow rules, as the compiler
  // writes it, is a condition libseccomp takes on every target.
  bool narrowing_compiles(const std::string& refused, const std::string& allowed, const std::string& name) const {
    for (const Target& target : policy_.targets) {
      ConditionError error;
      if (!compile_condition("(" + refused + ") && !(" + allowed + ")", name, target, error)) return false;
    }
    return true;
  }

  // aasm adds @startup to every allowlist; a member the profile does not
  // allow outright is refused by a rule with the default's answer.
  void refuse_startup_calls(const YamlNode& root) {
    std::vector<std::string> refused, narrowed, widened;
    for (const GroupMember& member : startup_group().members) {
      const std::string name = member.syscall.str();
      if (allowed_outright_.count(name)) continue;
      size_t has = 0;
      for (const Target& target : policy_.targets) has += syscall_number(target, name).has_value();
      if (has == 0) continue;
      if (has < policy_.targets.size()) {  // no rule can name it
        widened.push_back(name);
        continue;
      }
      if (std::any_of(rules_.begin(), rules_.end(), [&](const Rule& r) { return r.syscall == name && r.when.empty(); }))
        continue;
      (allowed_by_rule_.count(name) ? narrowed : refused).push_back(name);
      rules_.push_back({name, "", default_.text, "@startup, which the profile does not allow"});
    }
    if (!refused.empty())
      policy_.note(root, "the profile", ImportOutcome::kCarried,
                   joined(refused) + ": refused by a rule, since aasm adds the start-up set (@startup) to every allowlist");
    if (!narrowed.empty())
      policy_.note(root, "the profile", ImportOutcome::kTightened,
                   joined(narrowed) + ": allowed by the profile for some arguments only, refused for all by a rule, since aasm "
                                      "adds the start-up set (@startup) to every allowlist and an allow rule cannot narrow it");
    if (!widened.empty())
      policy_.note(root, "the profile", ImportOutcome::kNotExpressible,
                   joined(widened) + ": allowed by the start-up set (@startup) where they exist, which the profile does "
                                     "not; a policy for several targets cannot name them: import with --arch");
  }

  void write_spec() {
    std::vector<std::string>& out = policy_.spec;
    out.push_back("  syscalls:");
    out.push_back("    default: " + yaml_quoted(default_.allows ? "errno:EPERM" : default_.text));
    if (default_.allows) {
      out.push_back("    deny: []");
    } else {
      out.push_back("    allow: [");
      std::string line = "     ";
      for (const std::string& name : allowed_) {
        if (line.size() + name.size() > 100) out.push_back(line), line = "     ";
        line += " " + yaml_quoted(name) + ",";
      }
      if (line.size() > 5) out.push_back(line);
      out.push_back("    ]");
    }
    if (rules_.empty()) return;
    out.push_back("    rules:");
    std::string from;
    for (const Rule& rule : rules_) {
      if (rule.from != from) out.push_back("      # " + (from = rule.from));
      out.push_back("      - syscall: " + yaml_quoted(rule.syscall));
      if (!rule.when.empty()) out.push_back("        when: " + yaml_quoted(rule.when));
      out.push_back("        action: " + yaml_quoted(rule.action));
    }
  }

  ImportedPolicy& policy_;
  Diagnostics& diags_;
  MappedAction default_;
  std::vector<std::string> allowed_;          // allowed outright on every target, in the profile's order
  std::set<std::string> allowed_by_rule_;     // allowed by a rule, for some arguments
  std::set<std::string> allowed_outright_;    // allowed by an entry without arguments, on the targets that have it
  std::vector<Rule> rules_;
};

}  // namespace

std::optional<ImportedPolicy> import_oci_profile(const YamlNode& root, const std::vector<Target>& targets,
                                                 Diagnostics& diags) {
  ImportedPolicy policy;
  if (!ProfileImport(policy, diags).run(root, targets) || diags.error_count() > 0) return std::nullopt;
  return policy;
}

}  // namespace aasmc
