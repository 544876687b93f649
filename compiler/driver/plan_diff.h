// A posture diff of two plans (`aasmc diff`): not their bytes but what each
// lets the command do, fact by fact: a path's filesystem rights, a port's
// network rights, a system call's answer, a resource ceiling, a control's
// floor and degrade posture, the namespaces, the kept capabilities, the
// environment, the filesystem view. Each change says whether it widens what
// the command may do (docs/cli.md#aasmc-diff).
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace aasmc {

struct PostureChange {
  std::string area;     // "filesystem", "network", "syscalls", "resources", "controls", and the controls' names (plan/controls.def)
  std::string subject;  // a path template, "tcp:443", a syscall, a resource, a control
  std::string before;   // the old plan's value as text ("none", "unlimited", "allow", ...)
  std::string after;
  std::string rule;     // for a conditional syscall: the rule(s) the new plan's provenance records
  bool widening = false;
};

// Sorted by area, then subject: the same two plans give the same list.
std::vector<PostureChange> diff_posture(const aasm::plan::Plan& before, const aasm::plan::Plan& after);

}  // namespace aasmc
