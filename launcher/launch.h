// The native launch sequence (docs/architecture.md, "Launch"; docs/cli.md,
// "What the launcher does, in order").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/landlock.h"
#include "plan/plan.h"

namespace aasm {

struct LaunchRequest {
  std::string plan_path;
  std::optional<std::string> expect_digest;  // hex SHA-256 the plan must have
  std::optional<std::string> receipt_path;   // where to write the receipt (docs/receipts.md)
  std::vector<std::string> command;          // argv of the confined command
};

// Runs the command under the plan; returns the launcher's exit code. Errors
// are printed once, as one line on stderr.
int launch(const LaunchRequest& request);

// A plan that confines nothing is refused (running "confined" by it would be
// a lie), and so is one without a seccomp program for this architecture.
Status check_plan_shape(const plan::Plan& plan);

// Signals are scoped on every launch (docs/policy-language.md, spec.ipc): by
// Landlock from ABI 6; below it, by a new PID namespace, in which the
// supervisor, the janitor and the host's processes have no pid the command
// could name. Moves the scope from the ruleset to the plan's namespaces and
// returns true when that is needed and possible (CAP_SYS_ADMIN); otherwise
// the negotiation refuses the ipc control, or degrades it where allowed.
bool scope_signals_by_pid_namespace(plan::Plan& plan, const landlock::AbiProbe& probe);

// A capability the plan keeps must be one the launcher holds: it cannot be
// granted from nothing, and running without it would be less than planned.
// The refusal names the capabilities and the remedy.
Status check_kept_capabilities(const plan::Plan& plan);

}  // namespace aasm
