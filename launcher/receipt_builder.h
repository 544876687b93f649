// The receipt of a launch (docs/receipts.md), built from its completed
// report: each control's requested, planned and achieved with its basis, the
// paths as templates and digests, and how the run ended.
#pragma once

#include <string>
#include <vector>

#include "launch_report.h"
#include "supervisor/receipt.h"

namespace aasm {

// How the run ended, as the receipt records it.
struct RunEnd {
  std::string outcome;  // exited / killed by signal N / stopped at its ... / not started
  int exit_code = 0;    // the launcher's own
  std::vector<std::string> events;  // from the run cgroup's counters
  std::string cleanup;              // complete: ... / incomplete: every residual
};

// The receipt's denials section: each logged denial joined to the policy.
ReceiptDenials receipt_denials(const denials::Log& log, const plan::Plan& plan, const LaunchContext& context,
                               const std::vector<std::string>& unseen);

// `report` must be complete (complete()).
Receipt build_receipt(const LaunchReport& report, const RunEnd& end, ReceiptDenials denials = {});

}  // namespace aasm
