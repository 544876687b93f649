// The native launch sequence (docs/architecture.md, "Launch"; docs/cli.md,
// "What the launcher does, in order").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "crypto/sha256.h"
#include "supervisor/denial_report.h"

namespace aasm {

struct LaunchRequest {
  std::string plan_path;
  std::optional<Sha256Digest> expect_digest;  // the identity (trailer) the plan must have
  std::optional<std::string> receipt_path;   // where to write the receipt (docs/receipts.md)
  std::optional<int> receipt_fd;             // or the descriptor to write it to (--receipt-fd N)
  std::optional<std::string> receipt_key_file;  // the key of its digests; else this host's (--receipt-key-file)
  std::vector<std::string> command;          // argv of the confined command
  bool explain = false;                      // --explain: trace the tree's failing calls (supervisor/explain_tracer.h)
  denials::Detail denials = denials::Detail::kSummary;  // the end-of-run report on stderr (--denials)
  std::optional<std::string> bwrap;          // --bwrap PATH: the bwrap a bwrap plan runs under (bwrap_exec.h)
  std::optional<std::string> backend;        // --backend NAME: the plan's lowering to run, and no other
};

// Runs the command under the plan; returns the launcher's exit code. Errors
// are printed once, as one line on stderr.
int launch(const LaunchRequest& request);

}  // namespace aasm
