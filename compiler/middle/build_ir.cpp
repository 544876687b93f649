#include "middle/build_ir.h"

#include "middle/resolve_syscalls.h"

namespace aasmc {
namespace {

bool requests_nothing(const PolicyIR& ir) {
  return ir.capabilities_denied.empty() && ir.filesystem.empty() && !ir.network.outbound && !ir.network.bind &&
         !ir.ipc.abstract_unix_sockets_denied && ir.ipc.signals_denied->from.document < 0 && !ir.ipc.unix_sockets && !ir.syscalls && ir.resources.empty() &&
         ir.environment.empty() && ir.isolation.namespaces.empty() && !ir.isolation.linux_capabilities;
}

}  // namespace

std::optional<PolicyIR> build_ir(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                                 Diagnostics& diags) {
  if (documents.empty()) {
    diags.global_error("the cascade has no policy documents; nothing is unconfined by default, so this is refused",
                       diag::kEmptyCascade);
    return std::nullopt;
  }
  const unsigned errors_before = diags.error_count();
  PolicyIR ir = merge_cascade(documents, diags);
  ir.targets = targets;
  ir.syscalls = resolve_syscalls(documents, ir.capabilities_denied, targets, diags);
  add_socket_rules(ir, targets, diags);
  if (diags.error_count() != errors_before) return std::nullopt;
  // With earlier errors, a node may be missing because it was refused.
  if (errors_before == 0 && requests_nothing(ir)) {
    diags.error(documents.front().start,
                "the merged policy requests no control at all; there would be nothing to enforce",
                diag::kNothingRequested);
    return std::nullopt;
  }
  // After the check above: the defaults are no request of the policy's.
  add_safe_defaults(ir, documents, targets, diags);
  if (diags.error_count() != errors_before) return std::nullopt;
  return ir;
}

}  // namespace aasmc
