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

// The backends `--backend` names: one name, `auto` (the launched backends of
// backend/backends.def, in its order) or a comma-separated list of launched
// backends; false with a reason when a name is unknown, or an export is
// listed beside others.
struct BackendChoice {
  std::vector<Backend> candidates;
  bool several = false;  // auto or a list: the plan carries each candidate that satisfies the policy
  bool automatic = false;  // auto: a candidate left out is recorded in the plan, not warned
};
bool parse_backend_choice(const std::string& text, BackendChoice& choice, std::string& error);

// One candidate, negotiated: carried when no control is refused, else
// `not_carried` names the controls it cannot enforce and why.
struct Candidate {
  Backend backend;
  std::vector<ControlOutcome> outcomes;
  std::string not_carried;
};

// Negotiates every candidate. One backend: an error per refused control
// and a warning per degraded one, and nullopt on a refusal. Several: each
// candidate that satisfies the policy is carried, its degraded controls
// warned; in a list (not auto) each that does not is a warning (AASM0146);
// when none does, one error per candidate (AASM0142) and nullopt.
std::optional<std::vector<Candidate>> choose_backends(const PolicyIR& ir, const BackendChoice& choice,
                                                      Diagnostics& diags);

// An error or a warning at `where`, or of the whole cascade when it has no place.
void report_at(Diagnostics& diags, const SourceRef& where, const std::string& message, const char* id, bool error);

// The plan's record of a backend other than native, as a plan compiled for
// it alone has it in its meta: `backend` (its name) and, per degraded
// control, `backend.degraded.CONTROL` (the gap),
// `backend.degraded.CONTROL.planned` (the planned level, "enforce, may
// degrade") and `backend.degraded.CONTROL.achievable` (the level the row
// reaches, with its how and support: "partial (prevents, partial)"). None
// for native, so a native plan's bytes do not change. Sorted by key.
std::vector<std::pair<std::string, std::string>> backend_meta(const Candidate& candidate);

}  // namespace aasmc
