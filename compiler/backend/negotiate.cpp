#include "backend/negotiate.h"

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

bool parse_backend_choice(const std::string& text, BackendChoice& choice, std::string& error) {
  choice = {};
  if (text == "auto") {
    for (const BackendInfo& info : all_backends()) choice.candidates.push_back(info.backend);
    choice.walk = true;
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
    choice.candidates.push_back(*backend);
  }
  choice.walk = names.size() > 1;
  return true;
}

std::optional<Backend> choose_backend(const PolicyIR& ir, const BackendChoice& choice, Diagnostics& diags) {
  if (!choice.walk) {
    const BackendInfo& info = backend_info(choice.candidates.front());
    if (!info.built) {
      diags.global_error(not_built(info), diag::kBackendNotBuilt);
      return std::nullopt;
    }
    bool ok = true;
    for (const ControlOutcome& o : negotiate(ir, info.backend)) {
      const std::string what = std::string(control_name(o.request.control));
      if (o.outcome == Negotiated::kRefused) {
        ok = false;
        report_at(diags, o.request.where,
               what + " cannot be enforced by backend '" + info.name.str() + "': " + o.row.gap.str() +
                   degrade_hint(o.request.control),
               diag::kBackendRefuses, true);
      } else if (o.outcome == Negotiated::kDegraded) {
        report_at(diags, o.request.where,
               what + " is degraded with backend '" + info.name.str() + "' (isolation.degraded permits it): " +
                   o.row.gap.str(),
               diag::kBackendDegrades, false);
      }
    }
    return ok ? std::optional<Backend>(info.backend) : std::nullopt;
  }
  // The walk: the first candidate that satisfies every control, its
  // degraded controls reported; the ones after it are never looked at.
  std::vector<std::string> why_not;
  for (Backend candidate : choice.candidates) {
    const BackendInfo& info = backend_info(candidate);
    if (!info.built) {
      why_not.push_back(not_built(info));
      continue;
    }
    const std::vector<ControlOutcome> outcomes = negotiate(ir, candidate);
    if (satisfies(outcomes)) {
      BackendChoice single{{candidate}, false};
      return choose_backend(ir, single, diags);
    }
    std::string reasons;
    for (const ControlOutcome& o : outcomes)
      if (o.outcome == Negotiated::kRefused)
        reasons += (reasons.empty() ? "" : "; ") + std::string(control_name(o.request.control)) + ": " + o.row.gap.str();
    why_not.push_back("backend '" + info.name.str() + "' cannot enforce " + reasons);
  }
  for (const std::string& reason : why_not) diags.global_error("no backend satisfies the policy: " + reason,
                                                               diag::kNoBackend);
  return std::nullopt;
}

void add_backend_meta(const PolicyIR& ir, Backend backend, aasm::plan::Plan& plan) {
  if (backend == Backend::kNative) return;
  plan.meta.emplace_back("backend", backend_info(backend).name.str());
  for (const ControlOutcome& o : negotiate(ir, backend)) {
    if (o.outcome != Negotiated::kDegraded) continue;
    // The gap, then the level the policy plans (it lists the domain in
    // isolation.degraded) and the level the backend's row can reach, in the
    // words of controls.def and backends.def: no new wording.
    const std::string key = "backend.degraded." + std::string(control_name(o.request.control));
    plan.meta.emplace_back(key, o.row.gap.str());
    plan.meta.emplace_back(key + ".planned", aasm::planned_text(aasm::Planned::kMayDegrade));
    plan.meta.emplace_back(key + ".achievable", achievable_text(o.row));
  }
  std::sort(plan.meta.begin(), plan.meta.end());
}

}  // namespace aasmc
