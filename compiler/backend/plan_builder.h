// IR -> plan::Plan (every lowering), and writing it without ever leaving a
// partial file behind.
#pragma once

#include <llvm/Support/Error.h>

#include <string>

#include "aasm_version.h"
#include "middle/ir.h"
#include "plan/plan.h"

namespace aasmc {

inline constexpr const char* kCompilerVersion = aasm::kVersion;  // meson.build's project version

llvm::Expected<aasm::plan::Plan> build_plan(const PolicyIR& ir);

// Writes to a temporary file beside `path`, then renames it over `path`
// (a regular file, or none yet). A character device such as /dev/null is
// written in place; any other kind of file is refused.
llvm::Error write_plan_atomically(const std::string& path, const std::vector<uint8_t>& bytes);

}  // namespace aasmc
