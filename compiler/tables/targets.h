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
  // Go's name (GOARCH), which docker's and moby's profiles match in a
  // syscall entry's includes.arches / excludes.arches
  const char* go_arch;
};

llvm::ArrayRef<Target> all_targets();
std::optional<Target> find_target(llvm::StringRef name);

// The syscall number of `name` on `target`, or nullopt when the target has
// no such call.
std::optional<int> syscall_number(const Target& target, llvm::StringRef name);

// True when some architecture libseccomp knows has a call `name` (chown32
// on i386, s390_runtime_instr on s390x), a target or not.
bool known_to_libseccomp(llvm::StringRef name);

// Every syscall name any target knows, sorted (for "did you mean").
llvm::ArrayRef<llvm::StringRef> known_syscall_names();

}  // namespace aasmc
