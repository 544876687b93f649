#include "receipt_builder.h"

#include "kernel/arch.h"
#include "crypto/sha256.h"

namespace aasm {

ReceiptDenials receipt_denials(const denials::Log& log, const plan::Plan& plan, const LaunchContext& context,
                               const std::vector<std::string>& unseen) {
  ReceiptDenials out{plan.provenance.has_value(), log.dropped(), unseen, {}};
  for (const denials::Log::Entry& entry : log.entries())
    out.entries.push_back({entry.denial, entry.count, denials::explain(entry.denial, plan, context)});
  return out;
}

Receipt build_receipt(const LaunchReport& report, const RunEnd& end, ReceiptDenials denials) {
  Receipt r;
  r.plan_sha256 = report.plan_sha256;
  r.kernel_release = report.host.kernel_release;
  r.architecture = plan::audit_arch_name(kNativeAuditArch);
  r.landlock_abi = report.host.landlock.abi;
  for (const ControlReport& c : report.controls) {
    const Achieved achieved = c.achieved.value_or(Achieved{});
    r.controls.push_back({control_name(c.control), c.requested, planned_text(c.planned),
                          control_level_name(achieved.level), achieved.basis.str()});
  }
  // No resolved path: its digest, enough to compare two receipts without disclosing it.
  for (const BoundPath& path : report.paths)
    r.paths.push_back({path.rule_template,
                       path.resolved.empty() ? "" : to_hex(sha256({reinterpret_cast<const uint8_t*>(path.resolved.data()), path.resolved.size()})),
                       path.identity ? "bound" : "skipped (optional, missing)"});
  for (const ViewMount& m : report.view) r.view.push_back({m.path, m.what, m.options, m.status});
  r.outcome = end.outcome;
  r.exit_code = end.exit_code;
  r.events = end.events;
  r.cleanup = end.cleanup;
  r.denials = std::move(denials);
  return r;
}

}  // namespace aasm
