#include "backend/backends.h"

#include <array>

namespace aasmc {
namespace {

using aasm::Control;
using aasm::kControlCount;

constexpr BackendInfo kBackends[] = {
#define AASM_BACKEND(id, name, built, launched, what) {Backend::id, name, built, launched, what},
#include "backend/backends.def"
};
constexpr size_t kBackendCount = std::size(kBackends);

struct Row {
  Backend backend;
  Control control;
  Enforcement how;
  Support support;
  const char* gap;
  const char* host_feature;
};

constexpr Row kRows[] = {
#define AASM_BACKEND_CONTROL(backend, control, how, support, gap, host_feature) \
  {Backend::backend, Control::control, Enforcement::how, Support::support, gap, host_feature},
#include "backend/backends.def"
};

// Every built backend states every control exactly once: a row missing or
// written twice fails the build, not a report.
constexpr bool rows_complete() {
  for (const BackendInfo& info : kBackends) {
    for (uint8_t c = 0; c < kControlCount; ++c) {
      int count = 0;
      for (const Row& row : kRows)
        if (row.backend == info.backend && row.control == Control(c)) ++count;
      if (count != (info.built ? 1 : 0)) return false;
    }
  }
  for (size_t i = 0; i < kBackendCount; ++i)
    if (kBackends[i].backend != Backend(i)) return false;
  return true;
}
static_assert(rows_complete(), "backend/backends.def: each built backend needs one row per control, others none");

}  // namespace

llvm::ArrayRef<BackendInfo> all_backends() { return kBackends; }

const BackendInfo& backend_info(Backend backend) { return kBackends[size_t(backend)]; }

std::optional<Backend> find_backend(llvm::StringRef name) {
  for (const BackendInfo& info : kBackends)
    if (info.name == name) return info.backend;
  return std::nullopt;
}

BackendControl backend_control(Backend backend, Control control) {
  for (const Row& row : kRows)
    if (row.backend == backend && row.control == control) return {row.how, row.support, row.gap, row.host_feature};
  return {Enforcement::kCannotExpress, Support::kNone, "the backend is not built yet", ""};
}

aasm::ControlLevel achievable_level(const BackendControl& row) {
  if (row.how != Enforcement::kPrevents || row.support == Support::kNone) return aasm::ControlLevel::kNotEnforced;
  return row.support == Support::kFull ? aasm::ControlLevel::kEnforced : aasm::ControlLevel::kPartial;
}

std::string achievable_text(const BackendControl& row) {
  return std::string(aasm::control_level_name(achievable_level(row))) + " (" + enforcement_name(row.how) + ", " +
         support_name(row.support) + ")";
}

const char* enforcement_name(Enforcement how) {
  switch (how) {
    case Enforcement::kPrevents: return "prevents";
    case Enforcement::kObserves: return "observes";
    case Enforcement::kCannotExpress: return "cannot express";
  }
  return "cannot express";
}

const char* support_name(Support support) {
  switch (support) {
    case Support::kFull: return "full";
    case Support::kPartial: return "partial";
    case Support::kNone: return "none";
  }
  return "none";
}

}  // namespace aasmc
