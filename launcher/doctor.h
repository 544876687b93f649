// `aasm-launch doctor [--json]`: what this host can enforce, without a plan.
// Every answer comes from the probe the launch itself makes (the Landlock
// ABI, seccomp's actions, the cgroup hierarchies, a user namespace tried for
// real, the filesystem view's check, the capabilities held), so doctor
// cannot tell a story a launch would contradict; tests/kernel/doctor_test.cpp
// checks its predictions against launches on the same host.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "launch_report.h"

namespace aasm {

// One feature: available, partial (some of it), missing, or info (a fact
// that is neither, such as the capabilities held).
struct DoctorCheck {
  std::string feature;  // "landlock", "seccomp", "cgroup_memory", ...
  std::string status;
  std::string detail;   // what was found
  std::string missing;  // exactly what is not there; "" when nothing is
  std::string remedy;   // how to get it; "" when nothing is missing
};

std::vector<DoctorCheck> doctor_checks(const Host& host);

// Prints the report (text, or JSON: schemas/doctor.schema.json) on stdout;
// with `plan`, also whether the plan would run here and under which of its
// backends (a dry run's preparation). Returns 0 when no check is partial or
// missing and the plan would run, 1 otherwise.
int doctor(bool json, const std::optional<std::string>& plan = std::nullopt);

}  // namespace aasm
