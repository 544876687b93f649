#include "launch_report.h"

#include <sys/utsname.h>

namespace aasm {

Host probe_host() {
  utsname names{};
  ::uname(&names);
  return {names.release, names.machine, landlock::probe_abi()};
}

std::string PinCheck::status() const {
  if (!now) return "CANNOT BE READ: " + problem;
  if (unchanged()) return executed ? "unchanged (the command, exec'd from this descriptor)" : "unchanged";
  return "CHANGED: now " + plan::identity_text(now->sha256) + ", " + std::to_string(now->size) + " bytes";
}

void complete(LaunchReport& report, uint32_t done) {
  for (ControlReport& c : report.controls) {
    if (c.established_by && !(done & c.established_by)) {
      c.achieved = Achieved{ControlLevel::kNotEstablished,
                            {Basis::kMeasured, std::string("the child stopped before ") + c.stopped_before}};
    } else if (c.landlock) {
      Evidence basis = self_check_basis(*c.landlock, done);
      if (!c.why.empty()) basis.text += "; " + c.why;
      if (!c.also_by.empty()) basis.text += "; the plan's lowering: " + c.also_by;
      c.achieved = Achieved{c.achievable, basis};
    } else {
      c.achieved = Achieved{c.achievable, c.evidence};
    }
  }
}

}  // namespace aasm
