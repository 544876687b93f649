#include "backend/negotiate.h"

#include "backend/egress_lowering.h"

#include <llvm/ADT/SmallVector.h>

#include <algorithm>

namespace aasmc {
namespace {

using aasm::Control;
using aasm::control_name;

template <typename Map>
SourceRef first_source(const Map& map) {
  return map.empty() ? SourceRef{} : map.begin()->second;
}

SourceRef grants_source(const std::optional<std::vector<PathGrant>>& grants) {
  return grants->empty() ? SourceRef{} : grants->front().from;
}

SourceRef network_source(const NetworkRuleIR& rule) {
  if (rule.from.loc.isValid()) return rule.from;
  if (rule.tcp_ports && !rule.tcp_ports->empty()) return first_source(*rule.tcp_ports);
  if (rule.hosts && !rule.hosts->empty()) return first_source(*rule.hosts);
  if (rule.brokered) return *rule.brokered;
  return rule.from;
}

std::optional<SourceRef> ipc_source(const IpcIR& ipc) {
  if (ipc.abstract_unix_sockets_denied && ipc.abstract_unix_sockets_denied->value)
    return ipc.abstract_unix_sockets_denied->from;
  if (ipc.signals_denied && ipc.signals_denied->value) return ipc.signals_denied->from;
  if (ipc.unix_sockets && !ipc.unix_sockets->unrestricted()) return ipc.unix_sockets->from;
  return std::nullopt;
}

std::optional<SourceRef> resource_source(const ResourcesIR& r) {
  for (const auto* v : {&r.memory, &r.swap, &r.pids, &r.cpu_millicores, &r.wall_clock_seconds, &r.stdout_bytes,
                        &r.stderr_bytes, &r.open_files, &r.file_size, &r.tmp_size})
    if (*v) return (*v)->from;
  return std::nullopt;
}

// The setting that asks for `control`, or nullopt when the policy does not.
std::optional<SourceRef> request_of(const PolicyIR& ir, Control control) {
  switch (control) {
    case Control::kFileRead:
      if (ir.filesystem.read) return grants_source(ir.filesystem.read);
      return std::nullopt;
    case Control::kFileWrite:
      if (ir.filesystem.write) return grants_source(ir.filesystem.write);
      return std::nullopt;
    case Control::kFileExecute:
      if (ir.filesystem.execute) return grants_source(ir.filesystem.execute);
      return std::nullopt;
    case Control::kNetworkOutbound:
      if (ir.network.outbound) return network_source(*ir.network.outbound);
      return std::nullopt;
    case Control::kNetworkBind:
      if (ir.network.bind) return network_source(*ir.network.bind);
      return std::nullopt;
    case Control::kIpc: return ipc_source(ir.ipc);
    case Control::kSyscall:
      if (ir.syscalls) return ir.syscalls->default_action.from;
      return std::nullopt;
    case Control::kNamespaces:
      if (!ir.isolation.namespaces.empty()) return first_source(ir.isolation.namespaces);
      return std::nullopt;
    case Control::kCapabilities:
      // Every plan drops the capabilities the policy does not keep.
      if (ir.isolation.linux_capabilities) return first_source(*ir.isolation.linux_capabilities);
      return SourceRef{};
    case Control::kResource: return resource_source(ir.resources);
    case Control::kFilesystemView:
      if (ir.isolation.view()) return ir.isolation.filesystem_view->from;
      return std::nullopt;
    case Control::kPinnedFiles:
      if (!ir.filesystem.pinned.empty()) return ir.filesystem.pinned.front().from;
      return std::nullopt;
    case Control::kNetworkHosts:
      if (const NetworkRuleIR* rule = brokered_outbound(ir.network)) return *rule->brokered;
      return std::nullopt;
  }
  return std::nullopt;
}

// The domain of isolation.degraded that lets `control` run weaker: the
// domain of the same name (controls.def), if there is one.
std::optional<Domain> degradable_domain(Control control) { return find_domain(control_name(control)); }

std::string degrade_hint(Control control) {
  if (std::optional<Domain> domain = degradable_domain(control))
    return "; list " + std::string(domain_name(*domain)) + " in isolation.degraded to accept it";
  return "; no domain of isolation.degraded lets it degrade";
}

}  // namespace

void report_at(Diagnostics& diags, const SourceRef& where, const std::string& message, const char* id, bool error) {
  if (!where.loc.isValid()) return error ? diags.global_error(message, id) : diags.global_warning(message, id);
  if (error) return diags.error(where.loc, message, id, where.range);
  diags.warning(where.loc, message, id, where.range);
}

namespace {

std::string not_built(const BackendInfo& info) {
  return "backend '" + info.name.str() + "' is not built in this aasmc";
}

}  // namespace

std::vector<RequestedControl> requested_controls(const PolicyIR& ir) {
  std::vector<RequestedControl> out;
  for (uint8_t c = 0; c < aasm::kControlCount; ++c)
    if (std::optional<SourceRef> where = request_of(ir, Control(c))) out.push_back({Control(c), *where});
  return out;
}

std::vector<ControlOutcome> negotiate(const PolicyIR& ir, Backend backend) {
  std::vector<ControlOutcome> out;
  for (const RequestedControl& request : requested_controls(ir)) {
    ControlOutcome o{request, Negotiated::kEnforced, backend_control(backend, request.control)};
    if (o.row.support != Support::kFull || o.row.how != Enforcement::kPrevents) {
      const std::optional<Domain> domain = degradable_domain(request.control);
      o.outcome = domain && ir.degraded_allowed(*domain) ? Negotiated::kDegraded : Negotiated::kRefused;
    }
    out.push_back(o);
  }
  return out;
}

bool satisfies(const std::vector<ControlOutcome>& outcomes) {
  for (const ControlOutcome& o : outcomes)
    if (o.outcome == Negotiated::kRefused) return false;
  return true;
}

namespace {

std::string launched_names() {
  std::string names;
  for (const BackendInfo& info : all_backends())
    if (info.launched) names += (names.empty() ? "" : ", ") + info.name.str();
  return names;
}

}  // namespace

bool parse_backend_choice(const std::string& text, BackendChoice& choice, std::string& error) {
  choice = {};
  if (text == "auto") {
    for (const BackendInfo& info : all_backends())
      if (info.launched) choice.candidates.push_back(info.backend);
    choice.several = choice.automatic = true;
    return true;
  }
  llvm::SmallVector<llvm::StringRef, 4> names;
  llvm::StringRef(text).split(names, ',');
  for (llvm::StringRef name : names) {
    std::optional<Backend> backend = find_backend(name);
    if (!backend) {
      std::string known;
      for (const BackendInfo& info : all_backends()) known += (known.empty() ? "" : ", ") + info.name.str();
      error = "unknown backend '" + name.str() + "' (" + known + ", auto)";
      return false;
    }
    if (std::find(choice.candidates.begin(), choice.candidates.end(), *backend) != choice.candidates.end()) {
      error = "backend '" + name.str() + "' is listed twice";
      return false;
    }
    choice.candidates.push_back(*backend);
  }
  choice.several = names.size() > 1;
  if (choice.several)
    for (Backend backend : choice.candidates)
      if (const BackendInfo& info = backend_info(backend); !info.launched) {
        error = "backend '" + info.name.str() + "' is an export (aasmc export --format " + info.name.str() +
                "), which aasm-launch does not run: a plan carries several lowerings only of " + launched_names();
        return false;
      }
  return true;
}

namespace {

// "file_read: the gap; ipc: the gap": the controls a candidate cannot enforce.
std::string unmet_controls(const std::vector<ControlOutcome>& outcomes) {
  std::string reasons;
  for (const ControlOutcome& o : outcomes)
    if (o.outcome == Negotiated::kRefused)
      reasons += (reasons.empty() ? "" : "; ") + std::string(control_name(o.request.control)) + ": " + o.row.gap.str();
  return reasons;
}

Candidate negotiated(const PolicyIR& ir, Backend backend) {
  const BackendInfo& info = backend_info(backend);
  if (!info.built) return {backend, {}, "not built in this aasmc"};
  Candidate candidate{backend, negotiate(ir, backend), ""};
  if (!satisfies(candidate.outcomes)) candidate.not_carried = "cannot enforce " + unmet_controls(candidate.outcomes);
  return candidate;
}

void report_degraded(const Candidate& candidate, Diagnostics& diags) {
  const std::string name = backend_info(candidate.backend).name.str();
  for (const ControlOutcome& o : candidate.outcomes)
    if (o.outcome == Negotiated::kDegraded)
      report_at(diags, o.request.where,
                std::string(control_name(o.request.control)) + " is degraded with backend '" + name +
                    "' (isolation.degraded permits it): " + o.row.gap.str(),
                diag::kBackendDegrades, false);
}

// One backend: each refused control an error at the setting that asks for it.
std::optional<std::vector<Candidate>> choose_one(const PolicyIR& ir, Backend backend, Diagnostics& diags) {
  const BackendInfo& info = backend_info(backend);
  if (!info.built) {
    diags.global_error(not_built(info), diag::kBackendNotBuilt);
    return std::nullopt;
  }
  Candidate candidate = negotiated(ir, backend);
  for (const ControlOutcome& o : candidate.outcomes)
    if (o.outcome == Negotiated::kRefused)
      report_at(diags, o.request.where,
                std::string(control_name(o.request.control)) + " cannot be enforced by backend '" + info.name.str() +
                    "': " + o.row.gap.str() + degrade_hint(o.request.control),
                diag::kBackendRefuses, true);
  if (!candidate.not_carried.empty()) return std::nullopt;
  report_degraded(candidate, diags);
  return std::vector<Candidate>{std::move(candidate)};
}

}  // namespace

std::optional<std::vector<Candidate>> choose_backends(const PolicyIR& ir, const BackendChoice& choice,
                                                      Diagnostics& diags) {
  if (!choice.several) return choose_one(ir, choice.candidates.front(), diags);
  std::vector<Candidate> candidates;
  for (Backend backend : choice.candidates) candidates.push_back(negotiated(ir, backend));
  const bool any = std::any_of(candidates.begin(), candidates.end(),
                               [](const Candidate& c) { return c.not_carried.empty(); });
  for (const Candidate& candidate : candidates) {
    const std::string why = "backend '" + backend_info(candidate.backend).name.str() + "' " + candidate.not_carried;
    if (!any)
      diags.global_error("no backend satisfies the policy: " + why, diag::kNoBackend);
    else if (candidate.not_carried.empty())
      report_degraded(candidate, diags);
    else if (!choice.automatic)  // asked for by name: say why it is left out
      diags.global_warning("the plan does not carry " + why + " (a host where no carried backend can run refuses "
                           "the launch)", diag::kBackendNotCarried);
  }
  if (!any) return std::nullopt;
  return candidates;
}

std::vector<std::pair<std::string, std::string>> backend_meta(const Candidate& candidate) {
  std::vector<std::pair<std::string, std::string>> meta;
  if (candidate.backend == Backend::kNative) return meta;
  meta.emplace_back("backend", backend_info(candidate.backend).name.str());
  for (const ControlOutcome& o : candidate.outcomes) {
    if (o.outcome != Negotiated::kDegraded) continue;
    // The gap, then the level the policy plans (it lists the domain in
    // isolation.degraded) and the level the backend's row can reach, in the
    // words of controls.def and backends.def: no new wording.
    const std::string key = "backend.degraded." + std::string(control_name(o.request.control));
    meta.emplace_back(key, o.row.gap.str());
    meta.emplace_back(key + ".planned", aasm::planned_text(aasm::Planned::kMayDegrade));
    meta.emplace_back(key + ".achievable", achievable_text(o.row));
  }
  std::sort(meta.begin(), meta.end());
  return meta;
}

}  // namespace aasmc
