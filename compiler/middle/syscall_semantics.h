// What the syscall part of a policy means on one target: the action the
// kernel must return for one system call, given its architecture, number
// and arguments. This is the specification; the seccomp lowering is proven
// against it over every syscall number (tests/compiler/seccomp_proof_test).
//
// In order:
//  1. another architecture: kill;
//  2. x86_64 numbers with the x32 bit (0x40000000) and above, but -1: kill;
//  3. a number the target's table does not name, and -1: ENOSYS, so a C
//     library's fallback to an older call works;
//  4. the base action: allowlist: `default` for a denied call, allow for an
//     allowed one or one whose `allow` rule matches, else `default`;
//     denylist: kill for a denied call (and io_uring_*), else allow;
//     clone3 answers ENOSYS wherever it would not be killed (its flags sit
//     in a struct no filter can read; glibc then falls back to clone);
//  5. every rule with another action whose condition matches competes with
//     the base: the strictest wins (kill > errno > log > allow); between
//     errno answers of equal rank the base wins, and between two rules the
//     larger errno value.
#pragma once

#include <cstdint>

#include "middle/ir.h"
#include "tables/targets.h"

namespace aasmc {

struct SyscallCall {
  uint32_t arch = 0;
  int32_t nr = 0;
  uint64_t args[6] = {};
};

uint32_t expected_action(const SyscallIR& ir, const Target& target, const SyscallCall& call);

// The SECCOMP_RET_* value of an action.
uint32_t seccomp_return_value(const Action& action);

// The kernel's order of seccomp return actions: a larger rank wins.
int64_t action_rank(uint32_t action);

// The table's name for `nr` on `target`, or "" when it has none.
std::string syscall_name(const Target& target, int32_t nr);

// The largest syscall number the target's table names.
int32_t max_syscall_number(const Target& target);

// The calls the main program answers ENOSYS by design wherever it would
// not kill them (step 4): their flags sit in a struct no filter can read,
// and a C library answered ENOSYS falls back to an older call a filter can
// read (glibc's clone3 to clone). The lowering, this semantics and the
// plan's provenance (key syscalls.fallback, which the denial report reads
// as "by design, not a denial") all read this one table.
struct FallbackCall {
  llvm::StringRef name, fallback;
};
llvm::ArrayRef<FallbackCall> fallback_calls();
bool answers_enosys_by_design(llvm::StringRef name);

// io_uring's calls: their operations run outside the syscall filter, so a
// denylist denies them too (step 2).
llvm::ArrayRef<llvm::StringRef> io_uring_calls();
bool is_io_uring(llvm::StringRef name);

}  // namespace aasmc
