// Syscall IR -> one classic-BPF program per target, built with libseccomp.
#pragma once

#include <llvm/Support/Error.h>

#include "middle/ir.h"
#include "middle/syscall_semantics.h"  // seccomp_return_value
#include "plan/plan.h"

namespace aasmc {

// The programs for one target in install order: the rule programs (each
// rule's action where it matches, allow elsewhere; as many as the most
// distinct actions one syscall's rules have), then the main allowlist or
// denylist. The kernel keeps the strictest answer of all.
llvm::Expected<std::vector<aasm::plan::SeccompProgram>> lower_syscalls(const SyscallIR& ir, const Target& target);

// libseccomp's version and the API level the compiler pins, recorded in the
// plan: output must not depend on the build host's kernel.
std::string libseccomp_version();
unsigned pinned_seccomp_api_level();

}  // namespace aasmc
