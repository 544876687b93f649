// Negotiation at compile time (docs/backends.md): every control the policy
// requests gets one outcome with the chosen backend, from the one capability
// table (backend/backends.def): enforced, degraded (only where the policy
// lists the control's domain in isolation.degraded), or refused. Nothing is
// ever dropped silently, and no outcome is "run unconfined".
#pragma once

#include <string>
#include <vector>

#include "middle/ir.h"
#include "plan/plan.h"
#include "support/diagnostics.h"
#include "backend/backends.h"

namespace aasmc {

// A control the policy asks for, and the setting that asks for it (no
// location for one every plan has, as dropping capabilities).
struct RequestedControl {
  aasm::Control control;
  SourceRef where;
};
// In controls.def's order.
std::vector<RequestedControl> requested_controls(const PolicyIR& ir);

enum class Negotiated { kEnforced, kDegraded, kRefused };
struct ControlOutcome {
  RequestedControl request;
  Negotiated outcome = Negotiated::kRefused;
  BackendControl row;
};
std::vector<ControlOutcome> negotiate(const PolicyIR& ir, Backend backend);
// True when no outcome is refused.
bool satisfies(const std::vector<ControlOutcome>& outcomes);

// The backends `--backend` names: one name, `auto` (backend/backends.def's
// order) or a comma-separated order to walk; false with a reason when a
// name is unknown.
struct BackendChoice {
  std::vector<Backend> candidates;
  bool walk = false;  // auto or a list: the first that satisfies every control
};
bool parse_backend_choice(const std::string& text, BackendChoice& choice, std::string& error);

// Walks the candidates, stopping at the first that satisfies every control
// (the later ones are not looked at); reports one diagnostic per unmet
// control (an error per refusal, a warning per degraded control) for the
// backend chosen, or, when none satisfies, one error per candidate naming
// why. nullopt when none does.
std::optional<Backend> choose_backend(const PolicyIR& ir, const BackendChoice& choice, Diagnostics& diags);

// An error or a warning at `where`, or of the whole cascade when it has no place.
void report_at(Diagnostics& diags, const SourceRef& where, const std::string& message, const char* id, bool error);

// The plan's record of a backend other than native: meta `backend` (its
// name) and, per degraded control, `backend.degraded.CONTROL` (the gap),
// `backend.degraded.CONTROL.planned` (the planned level, "enforce, may
// degrade") and `backend.degraded.CONTROL.achievable` (the level the row
// reaches, with its how and support: "partial (prevents, partial)"). A
// native plan gets none, so its bytes do not change.
void add_backend_meta(const PolicyIR& ir, Backend backend, aasm::plan::Plan& plan);

}  // namespace aasmc
