#include "plan/controls.h"

#include <iterator>

namespace aasm {
namespace {

constexpr const char* kControlNames[] = {
#define AASM_CONTROL(id, name) name,
#include "plan/controls.def"
};
constexpr const char* kPlannedTexts[] = {
#define AASM_PLANNED(id, word) "enforce, " word,
#include "plan/controls.def"
};
constexpr const char* kPlannedWords[] = {
#define AASM_PLANNED(id, word) word,
#include "plan/controls.def"
};
constexpr const char* kLevelNames[] = {
#define AASM_LEVEL(id, name) name,
#include "plan/controls.def"
};
constexpr const char* kBasisNames[] = {
#define AASM_BASIS(id, name) name,
#include "plan/controls.def"
};

template <size_t N, typename E>
const char* lookup(const char* const (&table)[N], E value) {
  return size_t(value) < N ? table[size_t(value)] : "?";
}

}  // namespace

const char* control_name(Control control) { return lookup(kControlNames, control); }
const char* planned_text(Planned planned) {
  return planned == Planned::kNotPlanned ? planned_word(planned) : lookup(kPlannedTexts, planned);
}
const char* planned_word(Planned planned) { return lookup(kPlannedWords, planned); }
const char* control_level_name(ControlLevel level) { return lookup(kLevelNames, level); }
const char* basis_name(Basis basis) { return lookup(kBasisNames, basis); }

Control control_of(plan::ControlDomain domain) {
  static_assert(int(plan::ControlDomain::kFileRead) == int(Control::kFileRead) &&
                int(plan::ControlDomain::kIpc) == int(Control::kIpc));
  return Control(domain);
}

ControlLevel combine(ControlLevel a, ControlLevel b) {
  for (ControlLevel dominant : {ControlLevel::kRefused, ControlLevel::kNotEstablished})
    if (a == dominant || b == dominant) return dominant;
  return a == b ? a : ControlLevel::kPartial;
}

}  // namespace aasm
