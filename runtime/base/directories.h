// Making a directory and the missing ones above it, for the per-user files
// the tools keep (the receipt key's state directory, the profile plan cache).
#pragma once

#include <string>

#include "base/result.h"

namespace aasm {

// mkdir -p with mode 0700 for every directory it creates (an existing one
// is left as it is). The error names the path and the kernel's reason.
Status make_private_directories(const std::string& path);

}  // namespace aasm
