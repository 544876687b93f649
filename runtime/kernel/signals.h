// Signal dispositions the command must not inherit.
//
// execve resets every handled signal to its default but keeps the ignored
// ones, so an ignored SIGXFSZ would turn the file-size limit into EFBIG and
// an ignored SIGTERM would make the command deaf to the supervisor. Only
// the ignored ones need resetting: the kernel lists them in
// /proc/self/stat, which is one read instead of a sigaction query per signal.
#pragma once

#include <cstdint>

namespace aasm::signals {

// Bit N-1 set: signal N is ignored in the calling process. Every bit set
// when /proc/self/status cannot be read (so the caller resets them all).
uint64_t ignored();

// Sets every signal in `mask` (bit N-1: signal N) but SIGKILL and SIGSTOP
// to SIG_DFL. Returns 0 or the errno of the first failure. Async-signal-safe.
int reset_to_default(uint64_t mask);

}  // namespace aasm::signals
