#include "backend/negotiate.h"

namespace aasmc {
namespace {

class Refusals {
 public:
  explicit Refusals(Diagnostics& diags) : diags_(diags) {}

  void refuse(const std::string& what, const SourceRef& where) {
    refuse_because(what, "this version of aasm cannot enforce it yet; the compile is refused rather than produce a "
                         "plan that silently lacks it",
                   where);
  }
  void refuse_because(const std::string& what, const std::string& why, const SourceRef& where) {
    ++count_;
    const std::string message = what + " cannot be enforced: " + why;
    if (where.loc.isValid()) diags_.error(where.loc, message, diag::kNotSupported, where.range);
    else diags_.global_error(message, diag::kNotSupported);
  }
  template <typename T>
  void refuse_if(const std::optional<T>& value, const std::string& what) {
    if (value) refuse(what, value->from);
  }
  bool ok() const { return count_ == 0; }

 private:
  Diagnostics& diags_;
  unsigned count_ = 0;
};

}  // namespace

bool check_lowerable(const PolicyIR& ir, Diagnostics& diags) {
  Refusals refusals(diags);
  // Host names cannot be enforced by the kernel: only a policy that lets the
  // domain degrade gets a plan, which records them as not enforced.
  if (ir.network.outbound && !ir.network.outbound->none && ir.network.outbound->hosts &&
      !ir.degraded_allowed(Domain::kNetworkOutbound))
    for (const auto& [host, from] : *ir.network.outbound->hosts)
      refusals.refuse_because("network.outbound.hosts (" + host + ")",
                              "no kernel mechanism enforces host names; list network_outbound in isolation.degraded to "
                              "run with it recorded as not enforced, or write tcp:PORT entries",
                              from);
  const ResourcesIR& r = ir.resources;
  refusals.refuse_if(r.memory, "resources.memory");
  refusals.refuse_if(r.swap, "resources.swap");
  refusals.refuse_if(r.pids, "resources.pids");
  refusals.refuse_if(r.cpu_millicores, "resources.cpu");
  refusals.refuse_if(r.wall_clock_seconds, "resources.wall_clock");
  refusals.refuse_if(r.stdout_bytes, "resources.stdout");
  refusals.refuse_if(r.stderr_bytes, "resources.stderr");
  refusals.refuse_if(r.open_files, "resources.open_files");
  refusals.refuse_if(r.file_size, "resources.file_size");
  if (ir.environment.pass) refusals.refuse("environment.pass", ir.environment.pass->empty() ? SourceRef{} : ir.environment.pass->begin()->second);
  for (const auto& [name, value] : ir.environment.set) refusals.refuse("environment.set of " + name, value.from);
  for (const auto& [ns, from] : ir.isolation.namespaces) refusals.refuse("isolation.namespaces: " + ns, from);
  if (ir.isolation.linux_capabilities)
    for (const auto& [cap, from] : *ir.isolation.linux_capabilities)
      refusals.refuse("isolation.linux_capabilities: " + cap, from);
  return refusals.ok();
}

}  // namespace aasmc
