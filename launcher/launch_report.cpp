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

std::vector<std::string> backend_lines(const LaunchReport& report) {
  std::vector<std::string> lines;
  if (report.backends.empty()) {
    if (!report.backend.empty()) lines.push_back("backend: " + report.backend + " (the plan's only one)");
    return lines;
  }
  std::string taken = "none of the plan's can run here";
  for (const LaunchReport::BackendTried& t : report.backends)
    if (t.taken) taken = t.backend + " (taken of the plan's " + std::to_string(report.backends.size()) + ")";
  lines.push_back("backend: " + taken);
  for (const LaunchReport::BackendTried& t : report.backends)
    if (!t.taken) lines.push_back("  " + t.backend + ": not taken: " + t.why);
  return lines;
}

void write_backends(json::Writer& w, const LaunchReport& report) {
  w.key("backend").value(report.backend.empty() ? plan::kNativeBackend : report.backend);
  w.key("backends").begin_array();
  for (const LaunchReport::BackendTried& t : report.backends)
    w.begin_object().key("backend").value(t.backend).key("taken").value(t.taken).key("why").value(t.why).end_object();
  w.end_array();
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
