// Closing every inherited descriptor beyond 0-2 in the child.
#pragma once

#include <array>

namespace aasm::descriptors {

// The descriptors the child still needs before exec (all close-on-exec);
// -1 entries are ignored.
using Kept = std::array<int, 4>;

// Closes every descriptor from 3 up, except those in `keep`. Uses
// close_range(2) (Linux 5.9) and falls back to a loop. Returns 0 or errno.
// Async-signal-safe.
int close_inherited(Kept keep);

}  // namespace aasm::descriptors
