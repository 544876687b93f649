// The receipt of a launch (docs/receipts.md), built from its completed
// report: each control's requested, planned and achieved with its basis, the
// paths as templates and digests, and how the run ended.
#pragma once

#include <string>
#include <vector>

#include "launch_report.h"
#include "supervisor/receipt.h"
#include "supervisor/receipt_key.h"
#include "supervisor/supervise.h"

namespace aasm {

// What is known of how a run ended, from which its outcome is named.
struct Termination {
  bool started = false;              // false: the child stopped before exec (or the launch was refused)
  Ending ending = Ending::kExited;   // the supervisor's own ending of the run
  int status = 0;                    // waitpid status of the command
  uint64_t oom_kills = 0, pids_max_hits = 0;  // the run cgroup's counters
};

// The receipt's outcome (docs/receipts.md#outcomes): one of not started,
// deadline, output limit, out of memory, task limit, signal, exited.
std::string run_outcome(const Termination& t);

// How the run ended, as the receipt records it.
struct RunEnd {
  std::string outcome;  // run_outcome()
  int signal = 0;       // the signal that ended the command, 0 for none
  int exit_code = 0;    // the launcher's own
  std::vector<std::string> events;  // from the run cgroup's counters
  std::string cleanup;              // complete: ... / incomplete: every residual
  ReceiptTimeline timeline;
};

// The values a receipt withholds, of which it keeps counts and keyed
// digests only (docs/receipts.md#redaction).
struct Withheld {
  const ReceiptKey* key = nullptr;
  std::vector<std::string> command;      // the argument list
  std::vector<std::string> environment;  // the command's environment, NAME=value
  bool environment_filtered = false;     // the plan chose it (environment.pass / set)
  std::string cwd;
};

// Milliseconds since the Unix epoch, for the timeline.
uint64_t now_ms();

// The receipt's denials section: each logged denial joined to the policy.
ReceiptDenials receipt_denials(const denials::Log& log, const plan::Plan& plan, const LaunchContext& context,
                               const std::vector<std::string>& unseen);

// `report` must be complete (complete()).
Receipt build_receipt(const LaunchReport& report, const RunEnd& end, const Withheld& withheld,
                      ReceiptDenials denials = {});

}  // namespace aasm
