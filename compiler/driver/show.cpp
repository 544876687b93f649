#include "driver/show.h"

#include <linux/seccomp.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "kernel/bpf_interpreter.h"
#include "kernel/landlock_rights_text.h"
#include "supervisor/path_binding.h"  // rule_template
#include "kernel/capabilities.h"
#include "kernel/seccomp.h"
#include "plan/controls.h"
#include "plan/view_mounts.h"
#include "tables/errno_names.h"

namespace aasmc {

namespace bpf = aasm::bpf;

using namespace aasm::plan;

// By the kernel's names (seccomp::kActionNames, as doctor and --dry-run say
// them); an errno action with its errno as the policy writes it (errno:EPERM).
std::string describe_seccomp_action(uint32_t action) {
  const uint32_t kind = action & SECCOMP_RET_ACTION_FULL;
  std::string name = aasm::seccomp::action_name(kind);
  if (name == "?") return "action:" + std::to_string(action);
  if (kind == SECCOMP_RET_ERRNO) name += std::string(":") + errno_name(int(action & SECCOMP_RET_DATA));
  return name;
}

std::string describe_plan(const Plan& plan, const aasm::Sha256Digest& digest, bool bpf) {
  std::ostringstream out;
  // One fact a line throughout (a path, a syscall, a rule, a variable), so
  // that a line diff of two plans' text is a diff of their facts (--textconv).
  out << "plan format " << kFormatVersion << ", identity " << identity_text(digest) << "\n";
  out << "meta:\n";
  for (const auto& [key, value] : plan.meta) out << "  " << key << " = " << value << "\n";
  if (plan.landlock) {
    const LandlockRuleset& ll = *plan.landlock;
    out << "landlock (ABI " << ll.min_abi << " or later):\n";
    out << "  handled: " << aasm::landlock::rights_list_text(ll.handled_fs) << "\n";
    for (const LandlockRule& rule : ll.rules) {
      out << "  " << aasm::rule_template(rule) << (rule.flags & kRuleOptional ? " (optional)" : "")
          << (rule.flags & kRuleSystemRootTemplate ? " (may resolve to a system root)" : "") << ": "
          << aasm::landlock::rights_list_text(rule.access) << "\n";
    }
    using aasm::landlock::RightKind;
    if (ll.handled_net) {
      out << "  handled network: " << aasm::landlock::rights_list_text(ll.handled_net, RightKind::kNet) << "\n";
      for (const LandlockNetRule& rule : ll.net_rules)
        out << "  tcp:" << rule.port << ": " << aasm::landlock::rights_list_text(rule.access, RightKind::kNet) << "\n";
    }
    if (ll.scoped) out << "  scoped: " << aasm::landlock::rights_list_text(ll.scoped, RightKind::kScope) << "\n";
    if (!confines_filesystem(plan)) out << "  filesystem: unconstrained\n";
    for (ControlDomain verb : unconstrained_filesystem_verbs(plan))
      out << "  control " << control_domain_name(verb) << ": unconstrained (no document constrains it)\n";
    for (const LandlockControl& control : ll.controls)
      out << "  control " << control_domain_name(control.domain) << ": "
          << (control.flags & kControlNotEnforceable
                  ? std::string(control.net ? "ABI " + std::to_string(control.min_abi) + ", host names not enforceable"
                                            : "not enforceable (host names)")
                  : "ABI " + std::to_string(control.min_abi))
          << ", " << aasm::planned_word(aasm::planned_of(control.flags & kControlDegradable))
          << (control.flags & kControlSeccompFallback ? ", seccomp fallback" : "") << "\n";
  } else {
    out << "landlock: none (filesystem unconstrained)\n";
  }
  if (plan.process) {
    const ProcessSettings& p = *plan.process;
    out << "process:\n";
    auto value = [&](const char* name, const std::optional<uint64_t>& v, const char* unit = "") {
      if (v) out << "  " << name << " " << *v << unit << "\n";
    };
    value("open_files", p.open_files);
    value("file_size", p.file_size, " bytes");
    value("memory", p.memory, " bytes");
    value("swap", p.swap, " bytes");
    value("pids", p.pids);
    value("cpu", p.cpu_millicores, " millicores");
    value("wall_clock", p.wall_clock_seconds, " s");
    value("stdout", p.stdout_bytes, " bytes");
    value("stderr", p.stderr_bytes, " bytes");
    if (p.flags & kProcessResourceDegradable)
      out << "  " << aasm::control_name(aasm::Control::kResource) << " "
          << aasm::planned_word(aasm::Planned::kMayDegrade) << "\n";
    if (p.kept_capabilities) out << "  capabilities kept: " << aasm::capabilities::names(p.kept_capabilities) << "\n";
    if (p.namespaces) out << "  namespaces: " << aasm::plan::namespace_names(p.namespaces, " ") << "\n";
    if (p.environment_filtered) {
      out << "  environment: only the variables below\n";
      for (const std::string& name : p.environment_pass) out << "    pass " << name << "\n";
      for (const auto& [name, value] : p.environment_set) out << "    set " << name << "=" << value << "\n";
    }
  }
  if (plan.view) {
    out << "filesystem view:\n";
    for (const ViewMountText& row : describe_view(*plan.view))
      out << "  " << row.path << (row.optional ? " (optional)" : "") << ": " << row.what << "; " << row.options << "\n";
    out << "  its namespaces: " << namespace_names(kNamespaceMount | kNamespacePid)
        << (plan.view->flags & kViewOwnNamespaces ? " (the view's alone)" : " (the policy's too)") << "\n";
    out << "  control " << aasm::control_name(aasm::Control::kFilesystemView) << ": "
        << aasm::planned_word(aasm::planned_of(plan.view->flags & kViewDegradable)) << "\n";
  }
  if (plan.bwrap) {
    out << "bwrap (the launcher runs the command as: bwrap ARGS -- COMMAND):\n ";
    for (const BwrapArg& arg : plan.bwrap->args) out << " " << bwrap_arg_text(arg);
    out << "\n";
  }
  if (!plan.lowerings.empty()) {
    out << "lowerings (aasm-launch takes the first carried one this host can run, in this order):\n";
    for (const Lowering& lowering : plan.lowerings) {
      out << "  " << lowering.backend << ": "
          << (lowering.carried() ? lowering.meta.empty() && !lowering.bwrap ? "carried, the sections above as they are"
                                                                            : "carried, taking it adds:"
                                 : "not carried: " + lowering.not_carried)
          << "\n";
      for (const auto& [key, value] : lowering.meta) out << "    " << key << " = " << value << "\n";
      if (lowering.bwrap) {
        out << "    bwrap (in place of the Landlock ruleset, the view, the namespaces and kept capabilities):\n     ";
        for (const BwrapArg& arg : lowering.bwrap->args) out << " " << bwrap_arg_text(arg);
        out << "\n";
      }
    }
  }
  if (plan.egress) {
    out << "egress (network.outbound.hosts): the command's own network, loopback only; the broker at 127.0.0.1:"
        << aasm::plan::kBrokerPort << " reaches\n";
    if (plan.egress->any_name) out << "  every name (no address)\n";
    for (const aasm::plan::HostPattern& p : plan.egress->allow) out << "  allow " << aasm::plan::host_pattern_text(p) << "\n";
    for (const aasm::plan::HostPattern& p : plan.egress->deny) out << "  deny " << aasm::plan::host_pattern_text(p) << "\n";
  }
  if (!plan.pinned.empty()) {
    out << "pinned files (the launcher re-hashes each before anything runs):\n";
    for (const PinnedFile& file : plan.pinned) out << "  " << pinned_text(file) << "\n";
  }
  if (plan.seccomp.empty()) out << "seccomp: none (syscalls unconstrained)\n";
  for (const SeccompProgram& program : plan.seccomp) {
    out << "seccomp " << audit_arch_name(program.audit_arch) << ": ";
    if (program.mode == FilterMode::kRules)
      out << "rules, each rule's action where it matches, else allow";
    else if (program.mode == FilterMode::kFallback)
      out << "fallback rules, installed only where a control with a seccomp fallback degrades";
    else
      out << (program.mode == FilterMode::kAllowlist ? "allowlist" : "denylist") << ", default "
          << describe_seccomp_action(program.default_action);
    out << ", " << program.instructions.size() << " BPF instructions\n";
    if (bpf) out << bpf::disassemble(program.instructions);
  }
  if (!plan.syscalls.empty()) {
    // A denylist's manifest lists the names it refuses.
    std::ostringstream policy, denied, startup;
    size_t policy_count = 0, denied_count = 0, startup_count = 0;
    uint32_t denied_action = SECCOMP_RET_ALLOW;
    for (const SyscallEntry& entry : plan.syscalls) {
      const bool is_denied = entry.action != SECCOMP_RET_ALLOW;
      if (is_denied) denied_action = entry.action;
      auto& list = entry.origin == SyscallOrigin::kStartup ? startup : is_denied ? denied : policy;
      (entry.origin == SyscallOrigin::kStartup ? startup_count : is_denied ? denied_count : policy_count)++;
      list << "  " << entry.name << "\n";
    }
    if (denied_count) {
      out << "syscalls denied by the policy (" << denied_count << ", answered " << describe_seccomp_action(denied_action)
          << "):\n" << denied.str();
    } else {
      out << "syscalls allowed by the policy (" << policy_count << "):\n" << policy.str();
      out << "syscalls added as the start-up set (" << startup_count << "):\n" << startup.str();
    }
  }
  // The rules (an action for some arguments, or for a call the lists do not
  // decide), from the provenance, which records each as the policy wrote it.
  if (plan.provenance) {
    std::ostringstream rules;
    for (const ProvenanceEntry& e : plan.provenance->entries)
      if (e.key == "syscalls.rules" || e.key == "syscalls.safe_default" || e.key == "capabilities.deny")
        if (!e.item.empty() && !e.value.empty()) rules << "  " << e.item << ": " << e.value << "\n";
    if (!rules.str().empty()) out << "syscall rules:\n" << rules.str();
  }
  return out.str();
}

namespace {

using Json = nlohmann::ordered_json;

Json names_json(uint64_t rights, aasm::landlock::RightKind kind) {
  return aasm::landlock::rights_names(rights, kind);
}

Json rights_json(uint64_t fs, uint64_t net, uint64_t scopes) {
  using aasm::landlock::RightKind;
  return {{"fs", names_json(fs, RightKind::kFs)},
          {"net", names_json(net, RightKind::kNet)},
          {"scopes", names_json(scopes, RightKind::kScope)}};
}

Json landlock_json(const Plan& plan) {
  using aasm::landlock::RightKind;
  if (!plan.landlock) return nullptr;
  const LandlockRuleset& ll = *plan.landlock;
  Json out = {{"min_abi", ll.min_abi}, {"handled", rights_json(ll.handled_fs, ll.handled_net, ll.scoped)}};
  auto& rules = out["rules"] = Json::array();
  for (const LandlockRule& rule : ll.rules)
    rules.push_back({{"path", aasm::rule_template(rule)},
                     {"optional", bool(rule.flags & kRuleOptional)},
                     {"may_resolve_to_system_root", bool(rule.flags & kRuleSystemRootTemplate)},
                     {"rights", names_json(rule.access, RightKind::kFs)}});
  auto& net_rules = out["net_rules"] = Json::array();
  for (const LandlockNetRule& rule : ll.net_rules)
    net_rules.push_back({{"port", rule.port}, {"rights", names_json(rule.access, RightKind::kNet)}});
  auto& controls = out["controls"] = Json::array();
  for (const LandlockControl& control : ll.controls)
    controls.push_back({{"domain", control_domain_name(control.domain)},
                        {"min_abi", control.min_abi},
                        {"enforceable", !(control.flags & kControlNotEnforceable)},
                        {"planned", aasm::planned_word(aasm::planned_of(control.flags & kControlDegradable))},
                        {"seccomp_fallback", bool(control.flags & kControlSeccompFallback)},
                        {"rights", rights_json(control.fs, control.net, control.scoped)}});
  return out;
}

Json process_json(const Plan& plan) {
  if (!plan.process) return nullptr;
  const ProcessSettings& p = *plan.process;
  Json out = Json::object();
  auto value = [&](const char* name, const std::optional<uint64_t>& v) { out[name] = v ? Json(*v) : Json(nullptr); };
  value("open_files", p.open_files);
  value("file_size_bytes", p.file_size);
  value("memory_bytes", p.memory);
  value("swap_bytes", p.swap);
  value("pids", p.pids);
  value("cpu_millicores", p.cpu_millicores);
  value("wall_clock_seconds", p.wall_clock_seconds);
  value("stdout_bytes", p.stdout_bytes);
  value("stderr_bytes", p.stderr_bytes);
  out["resource_planned"] = aasm::planned_word(aasm::planned_of(p.flags & kProcessResourceDegradable));
  auto& kept = out["capabilities_kept"] = Json::array();
  for (int n = 0; n < aasm::capabilities::kCount; ++n)
    if (p.kept_capabilities & (uint64_t(1) << n)) kept.push_back(aasm::capabilities::name(n));
  auto& namespaces = out["namespaces"] = Json::array();
  for (uint32_t bit = 1; bit; bit <<= 1)
    if (p.namespaces & bit) namespaces.push_back(namespace_names(bit));
  if (!p.environment_filtered) {
    out["environment"] = nullptr;
  } else {
    Json set = Json::object();
    for (const auto& [name, value] : p.environment_set) set[name] = value;
    out["environment"] = {{"pass", p.environment_pass}, {"set", set}};
  }
  return out;
}

Json view_json(const Plan& plan) {
  if (!plan.view) return nullptr;
  Json mounts = Json::array();
  for (const ViewMountText& row : describe_view(*plan.view))
    mounts.push_back({{"path", row.path}, {"optional", row.optional}, {"what", row.what}, {"options", row.options}});
  return {{"mounts", mounts},
          {"own_namespaces", bool(plan.view->flags & kViewOwnNamespaces)},
          {"planned", aasm::planned_word(aasm::planned_of(plan.view->flags & kViewDegradable))}};
}

const char* mode_name(FilterMode mode) {
  switch (mode) {
    case FilterMode::kRules: return "rules";
    case FilterMode::kFallback: return "fallback";
    case FilterMode::kAllowlist: return "allowlist";
    case FilterMode::kDenylist: return "denylist";
  }
  return "?";
}

}  // namespace

nlohmann::ordered_json plan_json(const Plan& plan, const aasm::Sha256Digest& digest) {
  Json out = {{"schema", "aasm.dev/show/v1"}, {"format", kFormatVersion}, {"sha256", aasm::to_hex(digest)}};
  auto& meta = out["meta"] = Json::array();
  for (const auto& [key, value] : plan.meta) meta.push_back({{"key", key}, {"value", value}});
  out["landlock"] = landlock_json(plan);
  out["filesystem_confined"] = confines_filesystem(plan);
  auto& unconstrained = out["unconstrained"] = Json::array();
  for (ControlDomain verb : unconstrained_filesystem_verbs(plan)) unconstrained.push_back(control_domain_name(verb));
  out["process"] = process_json(plan);
  out["view"] = view_json(plan);
  auto& pinned = out["pinned"] = Json::array();
  for (const PinnedFile& file : plan.pinned)
    pinned.push_back({{"path", file.path}, {"sha256", identity_text(file.sha256)}, {"size", file.size}});
  if (plan.egress) {  // a brokered plan only: other plans' JSON is as it was
    const auto texts = [](const std::vector<aasm::plan::HostPattern>& patterns) {
      Json list = Json::array();
      for (const aasm::plan::HostPattern& p : patterns) list.push_back(aasm::plan::host_pattern_text(p));
      return list;
    };
    out["egress"] = {{"broker", "127.0.0.1:" + std::to_string(aasm::plan::kBrokerPort)},
                     {"any_name", plan.egress->any_name},
                     {"allow", texts(plan.egress->allow)},
                     {"deny", texts(plan.egress->deny)}};
  }
  if (plan.bwrap) {  // a bwrap plan only: other plans' JSON is as it was
    auto& bwrap = out["bwrap"] = Json::array();
    for (const BwrapArg& arg : plan.bwrap->args) bwrap.push_back(bwrap_arg_text(arg));
  }
  if (!plan.lowerings.empty()) {  // several lowerings only: other plans' JSON is as it was
    auto& lowerings = out["lowerings"] = Json::array();
    for (const Lowering& lowering : plan.lowerings) {
      Json entry = {{"backend", lowering.backend}, {"carried", lowering.carried()}};
      if (!lowering.carried()) entry["not_carried"] = lowering.not_carried;
      auto& meta = entry["meta"] = Json::array();
      for (const auto& [key, value] : lowering.meta) meta.push_back({{"key", key}, {"value", value}});
      if (lowering.bwrap) {
        auto& args = entry["bwrap"] = Json::array();
        for (const BwrapArg& arg : lowering.bwrap->args) args.push_back(bwrap_arg_text(arg));
      }
      lowerings.push_back(std::move(entry));
    }
  }
  auto& seccomp = out["seccomp"] = Json::array();
  for (const SeccompProgram& program : plan.seccomp)
    seccomp.push_back({{"architecture", audit_arch_name(program.audit_arch)},
                       {"mode", mode_name(program.mode)},
                       {"default_action", describe_seccomp_action(program.default_action)},
                       {"instructions", program.instructions.size()}});
  auto& syscalls = out["syscalls"] = Json::array();
  for (const SyscallEntry& entry : plan.syscalls)
    syscalls.push_back({{"name", entry.name},
                        {"origin", entry.origin == SyscallOrigin::kStartup ? "startup" : "policy"},
                        {"action", describe_seccomp_action(entry.action)}});
  return out;
}

}  // namespace aasmc
