// Named constants usable as values in `when:` conditions (TIOCSTI, AF_UNIX,
// CLONE_NEWUSER, O_WRONLY, ...), with their value on each target. Values are
// the kernel UAPI's (include/uapi, asm-generic, arch/*/include/uapi), not
// libc's: seccomp sees what the kernel ABI defines.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>

#include "tables/targets.h"

namespace aasmc {

struct NamedConstant {
  const char* name;
  uint64_t x86_64;   // negative UAPI values are stored sign-extended (AT_FDCWD = 0xffffffffffffff9c)
  uint64_t aarch64;
  uint8_t targets;   // kOnX86_64 | kOnAarch64
  bool negative;     // the UAPI value is a negative int (sign-extended above)
};

inline constexpr uint8_t kOnX86_64 = 1;
inline constexpr uint8_t kOnAarch64 = 2;

// The table entry for `name` (any target), or nullptr.
const NamedConstant* find_constant(llvm::StringRef name);

// The value of `constant` on `target`, or nullopt when that target does not
// define it (MAP_32BIT on aarch64, PROT_BTI on x86_64).
std::optional<uint64_t> constant_value(const NamedConstant& constant, const Target& target);

// Every name, sorted (for "did you mean").
llvm::ArrayRef<llvm::StringRef> constant_names();

llvm::ArrayRef<NamedConstant> all_constants();

}  // namespace aasmc
