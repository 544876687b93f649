#include "driver/plan_diff.h"

#include <linux/seccomp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "driver/show.h"
#include "kernel/landlock_rights_text.h"
#include "kernel/bpf_interpreter.h"
#include "kernel/capabilities.h"
#include "middle/syscall_semantics.h"
#include "plan/controls.h"
#include "plan/view_mounts.h"
#include "supervisor/path_binding.h"  // rule_template
#include "tables/targets.h"

namespace aasmc {
namespace {

using namespace aasm::plan;
using aasm::landlock::RightKind;

// Rights are sets: what the new plan grants beyond the old one widens.
void add_rights_change(std::vector<PostureChange>& out, const char* area, const std::string& subject,
                       uint64_t before, uint64_t after, RightKind kind) {
  if (before == after) return;
  const uint64_t gained = after & ~before, lost = before & ~after;
  std::string what;
  if (gained) what += "gained " + aasm::landlock::rights_list_text(gained, kind);
  if (lost) what += std::string(what.empty() ? "" : "; ") + "lost " + aasm::landlock::rights_list_text(lost, kind);
  out.push_back({area, subject, aasm::landlock::rights_list_text(before, kind), aasm::landlock::rights_list_text(after, kind) + " (" + what + ")",
                 "", gained != 0});
}

// The rights rules grant at a rule's path: those of every rule at or above
// it (Landlock grants beneath a path). Only rules of the same base relate.
uint64_t granted_at(const std::optional<LandlockRuleset>& ll, aasm::plan::PathBase base, const std::string& path) {
  uint64_t rights = 0;
  if (!ll) return rights;
  for (const LandlockRule& rule : ll->rules) {
    if (rule.base != base) continue;
    const bool covers = rule.path == path || rule.path.empty() || rule.path == "/" ||
                        (path.starts_with(rule.path) && path[rule.path.size()] == '/');
    if (covers) rights |= rule.access;
  }
  return rights;
}

// A right a ruleset does not handle is the command's everywhere: its change
// is said once, under `subject`. Returns the rights both rulesets handle, the
// only ones a path's or a port's line compares.
uint64_t unhandled_change(std::vector<PostureChange>& out, const char* area, const char* subject,
                          uint64_t LandlockRuleset::*handled, const Plan& a, const Plan& b, RightKind kind) {
  const uint64_t everything = aasm::landlock::rights_for_abi(kind, aasm::landlock::kLatestAbi);
  const uint64_t handled_a = a.landlock ? (*a.landlock).*handled : 0;
  const uint64_t handled_b = b.landlock ? (*b.landlock).*handled : 0;
  add_rights_change(out, area, subject, everything & ~handled_a, everything & ~handled_b, kind);
  return handled_a & handled_b;
}

void filesystem(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  const uint64_t both =
      unhandled_change(out, "filesystem", "(every path, unhandled)", &LandlockRuleset::handled_fs, a, b, RightKind::kFs);
  std::set<std::pair<aasm::plan::PathBase, std::string>> paths;
  for (const Plan* plan : {&a, &b})
    if (plan->landlock)
      for (const LandlockRule& rule : plan->landlock->rules) paths.insert({rule.base, rule.path});
  for (const auto& [base, path] : paths) {
    LandlockRule shown;
    shown.base = base;
    shown.path = path;
    add_rights_change(out, "filesystem", aasm::rule_template(shown), granted_at(a.landlock, base, path) & both,
                      granted_at(b.landlock, base, path) & both, RightKind::kFs);
  }
}

void network(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  const uint64_t both =
      unhandled_change(out, "network", "(every port, unhandled)", &LandlockRuleset::handled_net, a, b, RightKind::kNet);
  std::set<uint16_t> ports;
  for (const Plan* plan : {&a, &b})
    if (plan->landlock)
      for (const LandlockNetRule& rule : plan->landlock->net_rules) ports.insert(rule.port);
  auto at = [](const Plan& p, uint16_t port) {
    uint64_t rights = 0;
    if (p.landlock)
      for (const LandlockNetRule& rule : p.landlock->net_rules)
        if (rule.port == port) rights |= rule.access;
    return rights;
  };
  for (uint16_t port : ports)
    add_rights_change(out, "network", "tcp:" + std::to_string(port), at(a, port) & both, at(b, port) & both,
                      RightKind::kNet);
  // A scope is a restriction: losing one widens.
  const uint64_t scoped_a = a.landlock ? a.landlock->scoped : 0, scoped_b = b.landlock ? b.landlock->scoped : 0;
  if (scoped_a != scoped_b)
    out.push_back({aasm::control_name(aasm::Control::kIpc), "scoped", aasm::landlock::rights_list_text(scoped_a, RightKind::kScope),
                   aasm::landlock::rights_list_text(scoped_b, RightKind::kScope), "", (scoped_a & ~scoped_b) != 0});
}

// A syscall's answer under the programs of one architecture: the set of
// actions it may get (one, or several for a rule that reads arguments).
std::set<uint32_t> answers(const Plan& plan, uint32_t arch, int32_t nr) {
  std::set<uint32_t> result = {SECCOMP_RET_ALLOW};
  for (const SeccompProgram* program : programs_for(plan, arch)) {
    if (program->mode == FilterMode::kFallback) continue;  // only where a control degrades
    const auto possible = aasm::bpf::possible_actions(program->instructions, arch, nr);
    if (!possible) continue;
    // The kernel keeps the strictest answer of the stacked filters.
    std::set<uint32_t> combined;
    for (uint32_t x : result)
      for (uint32_t y : *possible) combined.insert(action_rank(x) >= action_rank(y) ? x : y);
    result = std::move(combined);
  }
  return result;
}

std::string answers_text(const std::set<uint32_t>& actions) {
  if (actions.size() == 1) return describe_seccomp_action(*actions.begin());
  std::string text = "conditional (";
  const char* separator = "";
  for (uint32_t a : actions) {
    text += separator + describe_seccomp_action(a);
    separator = " or ";
  }
  return text + ")";
}

int64_t least_rank(const std::set<uint32_t>& s) {
  int64_t r = INT64_MAX;
  for (uint32_t a : s) r = std::min(r, action_rank(a));
  return r;
}
int64_t most_rank(const std::set<uint32_t>& s) {
  int64_t r = INT64_MIN;
  for (uint32_t a : s) r = std::max(r, action_rank(a));
  return r;
}

std::string rules_for(const Plan& plan, const std::string& name) {
  std::string text;
  if (!plan.provenance) return text;
  for (const ProvenanceEntry& e : plan.provenance->entries)
    if (e.item == name && (e.key == "syscalls.rules" || e.key == "syscalls.safe_default"))
      text += (text.empty() ? "" : "; ") + e.value;
  return text;
}

// The architectures each plan has programs for: the launcher refuses a
// plan on any other, so a plan without one is stricter there than any
// filter, and only an architecture added widens.
void targets(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  std::string before, after;
  bool added = false;
  for (const Target& target : all_targets()) {
    const bool in_a = !programs_for(a, target.audit_arch).empty(), in_b = !programs_for(b, target.audit_arch).empty();
    if (in_a) before += (before.empty() ? "" : ", ") + std::string(target.name);
    if (in_b) after += (after.empty() ? "" : ", ") + std::string(target.name);
    added = added || (!in_a && in_b);
  }
  if (before != after)
    out.push_back({"targets", "architectures", before.empty() ? "none" : before, after.empty() ? "none" : after, "", added});
}

// Per architecture both plans have (targets() says the others).
void syscalls(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  // change text -> the architectures it happens on
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::string>> changes;
  std::map<std::tuple<std::string, std::string, std::string>, bool> widening;
  size_t arch_count = 0;
  for (const Target& target : all_targets()) {
    if (programs_for(a, target.audit_arch).empty() || programs_for(b, target.audit_arch).empty()) continue;
    ++arch_count;
    for (int32_t nr = 0; nr <= max_syscall_number(target); ++nr) {
      const std::string name = syscall_name(target, nr);
      if (name.empty()) continue;
      const auto before = answers(a, target.audit_arch, nr), after = answers(b, target.audit_arch, nr);
      if (before == after) continue;
      const auto key = std::make_tuple(name, answers_text(before), answers_text(after));
      changes[key].push_back(target.name);
      // Wider: some answer laxer than any before, or the strictest answer laxer.
      widening[key] = least_rank(after) < least_rank(before) || most_rank(after) < most_rank(before);
    }
  }
  for (const auto& [key, archs] : changes) {
    const auto& [name, before, after] = key;
    std::string subject = name;
    if (archs.size() != arch_count) {
      subject += " (";
      for (size_t i = 0; i < archs.size(); ++i) subject += (i ? ", " : "") + archs[i];
      subject += " only)";
    }
    out.push_back({"syscalls", subject, before, after, rules_for(b, name).empty() ? rules_for(a, name) : rules_for(b, name),
                   widening.at(key)});
  }
}

void resources(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  const ProcessSettings none;
  const ProcessSettings& pa = a.process ? *a.process : none;
  const ProcessSettings& pb = b.process ? *b.process : none;
  auto ceiling = [&](const char* name, std::optional<uint64_t> ProcessSettings::*field, const char* unit) {
    const auto x = pa.*field, y = pb.*field;
    if (x == y) return;
    auto text = [&](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) + unit : std::string("unlimited"); };
    out.push_back({"resources", name, text(x), text(y), "", !y || (x && *y > *x)});
  };
  ceiling("open_files", &ProcessSettings::open_files, "");
  ceiling("file_size", &ProcessSettings::file_size, " bytes");
  ceiling("memory", &ProcessSettings::memory, " bytes");
  ceiling("swap", &ProcessSettings::swap, " bytes");
  ceiling("pids", &ProcessSettings::pids, "");
  ceiling("cpu", &ProcessSettings::cpu_millicores, " millicores");
  ceiling("wall_clock", &ProcessSettings::wall_clock_seconds, " s");
  ceiling("stdout", &ProcessSettings::stdout_bytes, " bytes");
  ceiling("stderr", &ProcessSettings::stderr_bytes, " bytes");
  for (const NamespaceName& ns : kNamespaceNames) {
    const bool x = pa.namespaces & ns.bit, y = pb.namespaces & ns.bit;
    if (x != y) out.push_back({aasm::control_name(aasm::Control::kNamespaces), ns.name, x ? "fresh" : "shared", y ? "fresh" : "shared", "", x && !y});
  }
  for (int cap = 0; cap < kKnownCapabilities; ++cap) {
    const bool x = pa.kept_capabilities >> cap & 1, y = pb.kept_capabilities >> cap & 1;
    if (x != y)
      out.push_back({aasm::control_name(aasm::Control::kCapabilities), aasm::capabilities::names(1ull << cap), x ? "kept" : "dropped", y ? "kept" : "dropped", "", y});
  }
  auto env_text = [](const ProcessSettings& p) {
    if (!p.environment_filtered) return std::string("unfiltered");
    std::string text = "only";
    for (const std::string& name : p.environment_pass) text += " " + name;
    for (const auto& [name, value] : p.environment_set) text += " " + name + "=" + value;
    return text;
  };
  if (env_text(pa) != env_text(pb)) {
    bool wider = pa.environment_filtered && !pb.environment_filtered;
    if (pa.environment_filtered && pb.environment_filtered)
      for (const std::string& name : pb.environment_pass)
        wider |= !std::binary_search(pa.environment_pass.begin(), pa.environment_pass.end(), name);
    out.push_back({"environment", "passed", env_text(pa), env_text(pb), "", wider});
  }
}

// Floors and degrade postures: a control that may now degrade widens.
void controls(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  auto control_text = [](const LandlockControl* c) {
    if (!c) return std::string("absent");
    return "ABI " + std::to_string(c->min_abi) + ", " +
           aasm::planned_word(aasm::planned_of(c->flags & kControlDegradable)) +
           (c->flags & kControlNotEnforceable ? ", not enforceable" : "") +
           (c->flags & kControlSeccompFallback ? ", seccomp fallback" : "");
  };
  auto find = [](const Plan& p, ControlDomain d) -> const LandlockControl* {
    if (!p.landlock) return nullptr;
    for (const LandlockControl& c : p.landlock->controls)
      if (c.domain == d) return &c;
    return nullptr;
  };
  for (uint16_t d = 0; d <= uint16_t(ControlDomain::kIpc); ++d) {
    const LandlockControl* x = find(a, ControlDomain(d));
    const LandlockControl* y = find(b, ControlDomain(d));
    if (control_text(x) == control_text(y)) continue;
    const bool wider = y && (y->flags & kControlDegradable) && !(x && (x->flags & kControlDegradable));
    out.push_back({"controls", control_domain_name(ControlDomain(d)), control_text(x), control_text(y), "", wider});
  }
  auto degradable = [](bool present, bool may) {
    return !present ? std::string("absent") : aasm::planned_word(aasm::planned_of(may));
  };
  const bool ra = a.process && (a.process->flags & kProcessResourceDegradable);
  const bool rb = b.process && (b.process->flags & kProcessResourceDegradable);
  if (ra != rb)
    out.push_back({"controls", aasm::control_name(aasm::Control::kResource), degradable(true, ra),
                   degradable(true, rb), "", rb});
  const std::string va = degradable(a.view.has_value(), a.view && (a.view->flags & kViewDegradable));
  const std::string vb = degradable(b.view.has_value(), b.view && (b.view->flags & kViewDegradable));
  if (va != vb)
    out.push_back({"controls", aasm::control_name(aasm::Control::kFilesystemView), va, vb, "",
                   !b.view || (a.view && (b.view->flags & kViewDegradable) && !(a.view->flags & kViewDegradable))});
}

// The filesystem view's mounts, by path, as `aasmc show` states them: a new
// mount, a restricting option or the protection dropped, a larger tmpfs widen.
void view(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  auto rows = [](const Plan& p) {
    std::map<std::string, ViewMountText> by_path;
    if (p.view)
      for (ViewMountText& row : describe_view(*p.view)) by_path[row.path] = std::move(row);
    return by_path;
  };
  auto text = [](const ViewMountText* row) {
    return row ? row->what + "; " + row->options + (row->optional ? " (optional)" : "") : std::string("absent");
  };
  auto has = [](const std::string& list, const std::string& option) {
    return ("," + list + ",").find("," + option + ",") != std::string::npos;
  };
  auto bytes = [](const std::string& what) {
    const size_t comma = what.find(", ");
    return comma == std::string::npos ? 0ull : std::strtoull(what.c_str() + comma + 2, nullptr, 10);
  };
  const auto before = rows(a), after = rows(b);
  std::set<std::string> paths;
  for (const auto* side : {&before, &after})
    for (const auto& [path, row] : *side) paths.insert(path);
  for (const std::string& path : paths) {
    const auto x = before.find(path), y = after.find(path);
    const ViewMountText* old_row = x == before.end() ? nullptr : &x->second;
    const ViewMountText* new_row = y == after.end() ? nullptr : &y->second;
    if (text(old_row) == text(new_row)) continue;
    // A new mount shows the command more; a protected one gone lets it write there.
    bool wider = !old_row || (!new_row && old_row->what.find("protected") != std::string::npos);
    if (old_row && new_row) {
      for (const char* option : {"ro", "noexec", "nosuid", "nodev"})
        wider |= has(old_row->options, option) && !has(new_row->options, option);
      wider |= old_row->what.find("protected") != std::string::npos && new_row->what.find("protected") == std::string::npos;
      wider |= bytes(new_row->what) > bytes(old_row->what);
    }
    out.push_back({"filesystem view", path, text(old_row), text(new_row), "", wider});
  }
}

// Pins: a pin gone, or another digest, lets the launch run content the old
// plan refused (a widening); a new pin only refuses more.
void pinned(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  std::map<std::string, std::pair<const PinnedFile*, const PinnedFile*>> by_path;
  for (const PinnedFile& file : a.pinned) by_path[file.path].first = &file;
  for (const PinnedFile& file : b.pinned) by_path[file.path].second = &file;
  auto text = [](const PinnedFile* file) {
    return file ? identity_text(file->sha256) + ", " + std::to_string(file->size) + " bytes" : std::string("not pinned");
  };
  for (const auto& [path, sides] : by_path) {
    const auto [old_pin, new_pin] = sides;
    if (old_pin && new_pin && *old_pin == *new_pin) continue;
    out.push_back({"pinned", path, text(old_pin), text(new_pin), "", old_pin != nullptr});
  }
}

// The bwrap argument vector, whole: what an option does is bwrap's, so any
// change is flagged for review as a possible widening (an --unshare-net
// gone, a --ro-bind become --bind).
void bwrap(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  auto text = [](const Plan& p) {
    if (!p.bwrap) return std::string("not a bwrap plan");
    std::string t;
    for (const BwrapArg& arg : p.bwrap->args) t += (t.empty() ? "" : " ") + bwrap_arg_text(arg);
    return t;
  };
  if (a.bwrap != b.bwrap) out.push_back({"bwrap", "arguments", text(a), text(b), "", true});
}

// Each backend's lowering, by name: a plan of one backend is its one
// lowering. A lowering carried where it was not, or changed, may run the
// command weaker on some host: flagged; one no longer carried is not.
void lowerings(const Plan& a, const Plan& b, std::vector<PostureChange>& out) {
  auto listed = [](const Plan& p) {
    std::vector<Lowering> own = p.lowerings;
    if (own.empty()) {  // the plan's one backend, as a lowering of it would read
      Lowering one{backend_of(p), "", {}, p.bwrap};
      for (const auto& [key, value] : p.meta)
        if (key == "backend" || key.starts_with("backend.")) one.meta.emplace_back(key, value);
      own.push_back(std::move(one));
    }
    std::map<std::string, std::string> by_backend;
    for (const Lowering& lowering : own) {
      std::string t = lowering.carried() ? "carried" : "not carried: " + lowering.not_carried;
      for (const auto& [key, value] : lowering.meta) t += "; " + key + " = " + value;
      if (lowering.bwrap)
        for (const BwrapArg& arg : lowering.bwrap->args) t += " " + bwrap_arg_text(arg);
      by_backend[lowering.backend] = t;
    }
    return by_backend;
  };
  const std::map<std::string, std::string> before = listed(a), after = listed(b);
  std::set<std::string> backends;
  for (const auto& [name, text] : before) backends.insert(name);
  for (const auto& [name, text] : after) backends.insert(name);
  for (const std::string& name : backends) {
    const auto old_it = before.find(name), new_it = after.find(name);
    const std::string old_text = old_it == before.end() ? "not listed" : old_it->second;
    const std::string new_text = new_it == after.end() ? "not listed" : new_it->second;
    if (old_text == new_text) continue;
    const bool still_carried = new_text.starts_with("carried");
    out.push_back({"lowerings", name, old_text, new_text, "", still_carried});
  }
}

}  // namespace

std::vector<PostureChange> diff_posture(const Plan& before, const Plan& after) {
  std::vector<PostureChange> out;
  filesystem(before, after, out);
  network(before, after, out);
  targets(before, after, out);
  syscalls(before, after, out);
  resources(before, after, out);
  controls(before, after, out);
  view(before, after, out);
  pinned(before, after, out);
  bwrap(before, after, out);
  lowerings(before, after, out);
  std::stable_sort(out.begin(), out.end(), [](const PostureChange& x, const PostureChange& y) {
    return std::tie(x.area, x.subject) < std::tie(y.area, y.subject);
  });
  return out;
}

}  // namespace aasmc
