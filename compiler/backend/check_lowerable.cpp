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
  // Host names are the broker's (docs/egress.md), which serves the command
  // in a network namespace of its own; another document's TCP port list
  // goes onto the names (merge.cpp), but a deny-only `hosts` has none.
  const std::optional<NetworkRuleIR>& outbound = ir.network.outbound;
  if (outbound && !outbound->none && outbound->brokered && outbound->tcp_ports)
    refusals.refuse_because("network.outbound.hosts without an allow-list together with network.outbound.allow",
                            "the ports of the port list have no names to go onto, and a port list of Landlock's "
                            "would shut the command out of the broker in its own network namespace; write "
                            "hosts.allow with the names (api.example.com:443)",
                            *outbound->brokered);
  // What would take the command back onto the host's network past the
  // broker: joining the host's network namespace (setns needs CAP_SYS_ADMIN
  // over it; a user namespace of the command's own gives none), or
  // rewiring its own with CAP_NET_ADMIN.
  if (outbound && !outbound->none && outbound->brokered && ir.isolation.linux_capabilities)
    for (const char* cap : {"CAP_SYS_ADMIN", "CAP_NET_ADMIN"})
      if (auto kept = ir.isolation.linux_capabilities->find(cap); kept != ir.isolation.linux_capabilities->end())
        refusals.refuse_because(std::string("isolation.linux_capabilities keeps ") + cap,
                                "with network.outbound.hosts, it would let the command leave or rewire the network "
                                "namespace the broker is the only way out of; drop it",
                                kept->second);
  const bool view_ok = check_view(ir, diags);
  return refusals.ok() && view_ok;
}

}  // namespace aasmc
