// The controls a launch reports and the words it reports them in, from the
// one table in controls.def: the launcher's --dry-run and receipts use it,
// and so does the compiler (aasmc show), which includes runtime/ too. The
// policy's domains are in the same table; the compiler numbers them itself
// (frontend/ast.h's Domain).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/plan.h"

namespace aasm {

enum class Control : uint8_t {
#define AASM_CONTROL(id, name) id,
#include "plan/controls.def"
};
inline constexpr uint8_t kControlCount = 0
#define AASM_CONTROL(id, name) +1
#include "plan/controls.def"
    ;
const char* control_name(Control control);  // "file_read"

// The plan's Landlock control domains are the first controls, numbered alike.
Control control_of(plan::ControlDomain domain);

enum class Planned : uint8_t {
#define AASM_PLANNED(id, word) id,
#include "plan/controls.def"
};
const char* planned_text(Planned planned);  // "enforce, may degrade", as receipts write it
const char* planned_word(Planned planned);  // "may degrade", as aasmc show writes it
inline Planned planned_of(bool may_degrade) { return may_degrade ? Planned::kMayDegrade : Planned::kRequired; }

// One lattice for every control, as rust-landlock's CompatState.
enum class ControlLevel : uint8_t {
#define AASM_LEVEL(id, name) id,
#include "plan/controls.def"
};
const char* control_level_name(ControlLevel level);  // "not enforced"

// One control's level from two of its parts (CompatState::update()): a
// refused part refuses the control, a part not established leaves it not
// established; parts all enforced or all not enforced keep that level, and
// any other mix is partial.
ControlLevel combine(ControlLevel a, ControlLevel b);

// The level of a control built from parts: none yet is nothing lacking.
class LevelOfParts {
 public:
  void add(ControlLevel part) { level_ = level_ ? combine(*level_, part) : part; }
  ControlLevel level() const { return level_.value_or(ControlLevel::kEnforced); }

 private:
  std::optional<ControlLevel> level_;
};

enum class Basis : uint8_t {
#define AASM_BASIS(id, name) id,
#include "plan/controls.def"
};
const char* basis_name(Basis basis);  // "measured"

// An achieved level's evidence, as receipts write it: "measured: ...".
struct Evidence {
  Basis basis = Basis::kAsserted;
  std::string text;
  std::string str() const { return std::string(basis_name(basis)) + ": " + text; }
};

}  // namespace aasm
