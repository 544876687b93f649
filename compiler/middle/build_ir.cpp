#include "middle/build_ir.h"

#include "middle/resolve_syscalls.h"

namespace aasmc {
namespace {

bool requests_nothing(const PolicyIR& ir) {
  // The signal scope every merge adds by default is no request of the policy's.
  const bool signals_written = ir.ipc.signals_denied->from.document >= 0;
  return ir.capabilities_denied.empty() && ir.filesystem.empty() && !ir.network.outbound && !ir.network.bind &&
         !ir.ipc.abstract_unix_sockets_denied && !signals_written && !ir.ipc.unix_sockets && !ir.syscalls &&
         ir.resources.empty() && ir.environment.empty() && ir.isolation.namespaces.empty() &&
         !ir.isolation.linux_capabilities;
}

// Where the first document that confines a filesystem verb does, to point a
// warning at; every document may lack one only when the IR has none.
const SourceRef* first_confined_verb(const std::vector<PolicyDocument>& documents) {
  for (const PolicyDocument& doc : documents)
    if (doc.filesystem)
      for (const auto* verb : {&doc.filesystem->read, &doc.filesystem->write, &doc.filesystem->execute})
        if (*verb) return &(*verb)->source;
  return nullptr;
}

// A verb no document constrains is open everywhere while its neighbours are
// confined: `read` and `execute` without `write` leave every write the DAC
// permits. Stated, with the fix; a filesystem confined by no verb at all is
// a different, visible choice (show and explain print it unconstrained).
void warn_unconstrained_verbs(const PolicyIR& ir, const std::vector<PolicyDocument>& documents, Diagnostics& diags) {
  const FilesystemIR& fs = ir.filesystem;
  if (fs.empty()) return;
  const SourceRef* at = first_confined_verb(documents);
  if (!at) return;  // confined by capabilities.deny alone
  const std::pair<const char*, const std::optional<std::vector<PathGrant>>*> verbs[] = {
      {"read", &fs.read}, {"write", &fs.write}, {"execute", &fs.execute}};
  for (const auto& [name, grants] : verbs)
    if (!*grants)
      diags.warning(at->loc,
                    std::string("no document constrains filesystem.") + name + ", so it is unconstrained while another "
                        "filesystem verb is confined; write `" + name + ": {allow: []}` to deny it, or list the trees "
                        "it may reach",
                    diag::kUnconstrainedVerb, at->range);
}

// Landlock checks the port of a TCP bind() only. A bind allow-list cannot
// stop listen() on a socket never bound (the kernel gives it an ephemeral
// port without the bind hook) nor a UDP bind where UDP sockets can be made;
// `none` can, by refusing the calls outright (backend/socket_rules.h), which
// a port list cannot.
void warn_unchecked_bind(const PolicyIR& ir, Diagnostics& diags) {
  const std::optional<NetworkRuleIR>& bind = ir.network.bind;
  if (!bind || bind->none || !bind->tcp_ports || bind->tcp_ports->empty()) return;
  const SourceRef& at = bind->tcp_ports->begin()->second;
  const std::optional<NetworkRuleIR>& out = ir.network.outbound;
  const bool udp = !out || (!out->none && (out->udp || !out->tcp_ports));
  diags.warning(at.loc,
                std::string("network.bind lists ports, which Landlock checks at bind() only: listen() on a socket "
                            "never bound still listens on an ephemeral port") +
                    (udp ? ", and UDP sockets, which outbound does not refuse, bind any port" : "") +
                    "; write `bind: none` where the command needs no server",
                diag::kBindUnchecked, at.range);
}

}  // namespace

std::optional<PolicyIR> build_ir(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                                 Diagnostics& diags) {
  if (documents.empty()) {
    // A file that failed to load has said why; an empty cascade then is no second fault.
    if (diags.error_count() == 0)
      diags.global_error("the cascade has no policy documents; nothing is unconfined by default, so this is refused",
                         diag::kEmptyCascade);
    return std::nullopt;
  }
  const unsigned errors_before = diags.error_count();
  MergedPolicy merged = merge_cascade(documents, targets, diags);
  PolicyIR ir = std::move(merged.ir);
  ir.syscalls = resolve_syscalls(merged.syscalls, ir.capabilities_denied, targets, diags);
  if (diags.error_count() != errors_before) return std::nullopt;
  // With earlier errors, a node may be missing because it was refused.
  if (errors_before == 0 && requests_nothing(ir)) {
    diags.error(documents.front().start,
                "the merged policy requests no control at all; there would be nothing to enforce",
                diag::kNothingRequested);
    return std::nullopt;
  }
  if (errors_before == 0) {
    warn_unconstrained_verbs(ir, documents, diags);
    warn_unchecked_bind(ir, diags);
  }
  // After the check above: the defaults are no request of the policy's.
  add_safe_defaults(ir, merged.syscalls, targets, diags);
  if (diags.error_count() != errors_before) return std::nullopt;
  return ir;
}

}  // namespace aasmc
