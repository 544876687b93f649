// The report vocabulary (runtime/plan/controls.def): one lattice for every
// control, combined as rust-landlock's CompatState::update(), and the names
// receipts and --dry-run print.
#include <doctest/doctest.h>

#include <string>

#include "plan/controls.h"

using namespace aasm;

TEST_CASE("controls: a control's level from its parts") {
  using L = ControlLevel;
  CHECK(combine(L::kEnforced, L::kEnforced) == L::kEnforced);
  CHECK(combine(L::kNotEnforced, L::kNotEnforced) == L::kNotEnforced);
  CHECK(combine(L::kEnforced, L::kNotEnforced) == L::kPartial);
  CHECK(combine(L::kPartial, L::kEnforced) == L::kPartial);
  CHECK(combine(L::kPartial, L::kNotEnforced) == L::kPartial);
  CHECK(combine(L::kEnforced, L::kRefused) == L::kRefused);
  CHECK(combine(L::kNotEstablished, L::kEnforced) == L::kNotEstablished);
  CHECK(combine(L::kNotEstablished, L::kRefused) == L::kRefused);

  LevelOfParts none;
  CHECK(none.level() == L::kEnforced);  // nothing asked, nothing lacking
  LevelOfParts parts;
  parts.add(L::kNotEnforced);
  CHECK(parts.level() == L::kNotEnforced);
  parts.add(L::kEnforced);
  CHECK(parts.level() == L::kPartial);
}

TEST_CASE("controls: the names receipts use, the plan's domains among them") {
  CHECK(std::string(control_name(Control::kFileRead)) == "file_read");
  CHECK(std::string(control_name(Control::kResource)) == "resource");
  CHECK(std::string(control_name(control_of(plan::ControlDomain::kNetworkBind))) == "network_bind");
  CHECK(std::string(plan::control_domain_name(plan::ControlDomain::kIpc)) == "ipc");
  CHECK(std::string(planned_text(planned_of(true))) == "enforce, may degrade");
  CHECK(std::string(planned_text(planned_of(false))) == "enforce, required");
  CHECK(std::string(planned_word(planned_of(true))) == "may degrade");
  CHECK(std::string(control_level_name(ControlLevel::kNotEstablished)) == "not established");
  CHECK(Evidence{Basis::kMeasured, "x"}.str() == "measured: x");
}
