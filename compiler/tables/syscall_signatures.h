// Argument names and kernel ABI types of the syscalls policies commonly
// condition on (`when:` operands). Each entry is transcribed from the
// kernel's SYSCALL_DEFINE for that call on each target; see
// docs/conditions.md for the rules the table follows.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tables/targets.h"

namespace aasmc {

// The kernel type of one argument, reduced to what a seccomp comparison
// needs: how many low bits of the 64-bit register the kernel uses, and
// whether it reads them as a signed integer.
enum class ArgType : uint8_t {
  kU64,  // unsigned long, size_t, ... : all 64 bits
  kS64,  // long, off_t, loff_t
  kPtr,  // a user pointer: seccomp sees the address only, never the memory
  kU32,  // unsigned int, u32
  kS32,  // int, pid_t, uid_t-like int typedefs
  kU16,  // umode_t
};

unsigned arg_type_bits(ArgType type);
bool arg_type_signed(ArgType type);
const char* arg_type_name(ArgType type);  // "int", "unsigned int", "umode_t", ...

inline constexpr unsigned kMaxSyscallArgs = 6;

struct ArgSpec {
  const char* name = nullptr;         // the policy-facing name (man page)
  const char* kernel_name = nullptr;  // the SYSCALL_DEFINE parameter name, accepted too; nullptr if equal
  ArgType type = ArgType::kU64;
};

struct SyscallSignature {
  const char* syscall = nullptr;  // libseccomp's name
  const char* only_on = nullptr;  // a target name when the entry is specific to it, else nullptr
  unsigned count = 0;             // arguments the call takes
  ArgSpec args[kMaxSyscallArgs];
  const char* note = nullptr;     // appended to "unknown operand" errors (clone3, prctl, ...)
};

// The signature of `syscall` on `target`, or nullptr when the compiler knows
// no argument names for it (then only arg0..arg5 work, all 64-bit).
const SyscallSignature* find_signature(llvm::StringRef syscall, const Target& target);

// Every entry (all targets), in table order; for tests and docs.
llvm::ArrayRef<SyscallSignature> all_signatures();

// The operand names `syscall` accepts on `target` besides arg0..arg5
// (names and kernel names), for "did you mean".
std::vector<llvm::StringRef> operand_names(llvm::StringRef syscall, const Target& target);

// The policy-facing name of argument `index`, the same on every target, or
// "" (then print `argN`). With a target: that target's name.
std::string arg_display_name(llvm::StringRef syscall, unsigned index);
std::string arg_display_name(llvm::StringRef syscall, unsigned index, const Target& target);

}  // namespace aasmc
