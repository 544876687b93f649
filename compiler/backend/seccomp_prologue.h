// The main program's first instructions. libseccomp's own header checks the
// architecture (and x32 on x86_64); ours does that too and also answers
// ENOSYS for every number the target's syscall table does not name (above
// its highest and in its gaps, and -1), which libseccomp cannot express for
// a foreign architecture. It replaces libseccomp's header, so a known call
// pays no extra instructions for it.
#pragma once

#include <llvm/Support/Error.h>

#include <vector>

#include "plan/plan.h"
#include "tables/targets.h"

namespace aasmc {

// Ranges of numbers below the table's highest that it does not name.
struct NumberGap {
  uint32_t first, last;
};
std::vector<NumberGap> syscall_number_gaps(const Target& target);

// `program` as libseccomp exported it, with its header replaced. Fails when
// the header is not the one this libseccomp version writes (so a changed
// layout is refused, never misread).
llvm::Expected<std::vector<aasm::plan::BpfInstruction>> with_prologue(
    const std::vector<aasm::plan::BpfInstruction>& program, const Target& target);

// A rule program with libseccomp's header replaced by a bare `ld nr`. Safe
// because the main program kills every call from another architecture or the
// x32 range, and kill outranks whatever a rule program answers; it saves every
// call the header's instructions in each rule program.
llvm::Expected<std::vector<aasm::plan::BpfInstruction>> without_header(
    const std::vector<aasm::plan::BpfInstruction>& program, const Target& target);

}  // namespace aasmc
