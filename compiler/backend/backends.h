// The backends a policy can be enforced by and, per control of
// runtime/plan/controls.def, what each can do with it: one table,
// backend/backends.def. `aasmc backends` prints it, `aasmc compile --backend`
// negotiates with it (backend/negotiate.h), `aasmc export` lists from it what
// its format cannot carry.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <optional>
#include <string>

#include "plan/controls.h"

namespace aasmc {

enum class Backend {
#define AASM_BACKEND(id, name, built, launched, what) id,
#include "backend/backends.def"
};

enum class Enforcement { kPrevents, kObserves, kCannotExpress };
enum class Support { kFull, kPartial, kNone };

struct BackendInfo {
  Backend backend;
  llvm::StringRef name;
  bool built;  // false: the backend is named but this aasmc cannot produce it
  bool launched;  // aasm-launch runs it: a plan can carry it beside others (false: an export)
  llvm::StringRef what;
};

// What one backend does with one control.
struct BackendControl {
  Enforcement how = Enforcement::kCannotExpress;
  Support support = Support::kNone;
  llvm::StringRef gap;           // what is missing (partial, none); empty when full
  llvm::StringRef host_feature;  // what the host must have; empty when nothing carries it
};

// Every backend, in the table's order (`--backend auto` carries the launched ones in it).
llvm::ArrayRef<BackendInfo> all_backends();
const BackendInfo& backend_info(Backend backend);
std::optional<Backend> find_backend(llvm::StringRef name);
// The row of `backend` for `control`; a backend not built cannot express any.
BackendControl backend_control(Backend backend, aasm::Control control);

// The level of the launch-report lattice (plan/controls.def) a row reaches:
// enforced where it prevents fully, partial where it prevents partly, not
// enforced where it only observes or cannot express the control.
aasm::ControlLevel achievable_level(const BackendControl& row);
// That level with the row's how and support: "partial (prevents, partial)".
std::string achievable_text(const BackendControl& row);

const char* enforcement_name(Enforcement how);  // "prevents", "observes", "cannot express"
const char* support_name(Support support);      // "full", "partial", "none"

}  // namespace aasmc
