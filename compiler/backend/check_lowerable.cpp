#include "backend/check_lowerable.h"

#include "backend/view_lowering.h"

namespace aasmc {
namespace {

class Refusals {
 public:
  explicit Refusals(Diagnostics& diags) : diags_(diags) {}

  void refuse_because(const std::string& what, const std::string& why, const SourceRef& where) {
    ++count_;
    const std::string message = what + " cannot be enforced: " + why;
    if (where.loc.isValid()) diags_.error(where.loc, message, diag::kNotSupported, where.range);
    else diags_.global_error(message, diag::kNotSupported);
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
                              std::string("no kernel mechanism enforces host names; list ") +
                                  domain_name(Domain::kNetworkOutbound) +
                                  " in isolation.degraded to run with it recorded as not enforced, or write tcp:PORT "
                                  "entries",
                              from);
  const bool view_ok = check_view(ir, diags);
  return refusals.ok() && view_ok;
}

}  // namespace aasmc
