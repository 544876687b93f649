// Target architectures and their syscall tables (from libseccomp).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aasmc {

struct Target {
  const char* name;     // "x86_64", "aarch64"
  uint32_t audit_arch;  // AUDIT_ARCH_*
  uint32_t scmp_arch;   // SCMP_ARCH_*
  const char* oci_arch;      // its name in an OCI seccomp profile's architectures
  const char* systemd_arch;  // its name in systemd's SystemCallArchitectures=
};

llvm::ArrayRef<Target> all_targets();
std::optional<Target> find_target(llvm::StringRef name);

// The syscall number of `name` on `target`, or nullopt when the target has
// no such call.
std::optional<int> syscall_number(const Target& target, llvm::StringRef name);

// Every syscall name any target knows, sorted (for "did you mean").
llvm::ArrayRef<llvm::StringRef> known_syscall_names();

}  // namespace aasmc
