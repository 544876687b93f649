// Closing every inherited descriptor beyond 0-2 in the child.
#pragma once

namespace aasm::descriptors {

// Closes every descriptor from 3 up, except the (at most two) in `keep`
// (-1 entries ignored): the ones the child still needs before exec, which
// are close-on-exec anyway. Uses close_range(2) (Linux 5.9) and falls back to
// a loop. Returns 0 or errno. Async-signal-safe.
int close_inherited(int keep_a, int keep_b);

}  // namespace aasm::descriptors
