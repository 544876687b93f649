// Negotiation at launch: the plan's Landlock controls against this host's
// ABI. Each control is enforced, partial or not enforced (only where the plan
// lets its domain degrade), or refused; the ruleset is cut down to the rights
// the host knows.
#pragma once

#include <string>
#include <vector>

#include "kernel/landlock.h"
#include "plan/controls.h"
#include "plan/plan.h"

namespace aasm {

struct ControlOutcome {
  plan::LandlockControl control;
  ControlLevel level = ControlLevel::kEnforced;
  std::string why;  // empty when enforced as planned
};

struct LandlockNegotiation {
  std::vector<ControlOutcome> controls;
  plan::LandlockRuleset effective;  // what this host can apply
  bool applies = false;             // false: nothing left to apply (no Landlock, all degraded away)
  bool refused() const;
  std::string refusal() const;      // the first refused control's message
  // A control whose missing rights the plan's fallback seccomp programs
  // (FilterMode::kFallback) stand in for: install them.
  bool needs_seccomp_fallback() const;
};

LandlockNegotiation negotiate_landlock(const plan::LandlockRuleset& ruleset, const landlock::AbiProbe& probe);

// The first kernel release of a Landlock ABI ("5.13" for 1).
const char* kernel_for_landlock_abi(uint32_t abi);

// A control's rights as receipts and --dry-run show them, by name:
// "fs read_file,read_dir; net none; scopes none" (kernel/landlock_rights_text.h).
std::string control_rights_text(const plan::LandlockControl& control);

}  // namespace aasm
