// The receipt: what one launch requested, planned and achieved, per control,
// each achieved level with its basis. Written as JSON after the command ends
// (schemas/receipt.schema.json). Paths appear as their templates with the
// SHA-256 of what they resolved to, so no home or working directory string is
// kept; command arguments are not recorded.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "supervisor/denial_report.h"

namespace aasm {

// Each word from plan/controls.def: the domain a control name, planned its
// planned_text(), achieved a level, basis "measured: ..." or "asserted: ...".
struct ReceiptControl {
  std::string domain;
  std::string requested;  // what the plan carries for it
  std::string planned;
  std::string achieved;
  std::string basis;
};

struct ReceiptPath {
  std::string rule_template;  // "${CWD}/build"
  std::string resolved_sha256;  // empty when skipped
  std::string status;           // bound / skipped (optional, missing)
};

// One mount of the filesystem view, its tree as the plan's template.
struct ReceiptViewMount {
  std::string path;
  std::string what;
  std::string options;
  std::string status;
};

// What the run's confinement refused (docs/receipts.md, "denials"): each
// distinct denial once with its count, the policy lines that refused it and
// the edits that would allow it. `aasmc suggest` reads exactly this.
struct ReceiptDenial {
  denials::Denial denial;
  uint64_t count = 0;
  denials::Explanation explanation;
};

struct ReceiptDenials {
  bool provenance = false;  // the plan has a provenance section
  uint64_t dropped = 0;     // records beyond the log's cap of distinct denials
  std::vector<std::string> unseen;  // classes of denial this run could not see, and how to see them
  std::vector<ReceiptDenial> entries;
};

struct Receipt {
  std::string plan_sha256;
  std::string kernel_release;
  std::string architecture;
  int landlock_abi = 0;
  std::vector<ReceiptControl> controls;
  std::vector<ReceiptPath> paths;
  std::vector<ReceiptViewMount> view;  // written only when the plan builds a view
  std::string outcome;  // exited / killed / not started
  int exit_code = 0;    // the launcher's own exit code
  std::vector<std::string> events;  // from the kernel's counters: OOM kills, task-limit hits
  std::string cleanup;              // complete: ... / incomplete: every residual
  ReceiptDenials denials;
};

std::string render_receipt(const Receipt& receipt);

// Writes to a temporary file beside `path`, then renames it over `path`.
Status write_receipt(const std::string& path, const Receipt& receipt);

}  // namespace aasm
