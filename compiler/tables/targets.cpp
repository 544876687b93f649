#include "tables/targets.h"

#include <seccomp.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "plan/format.h"

namespace aasmc {

llvm::ArrayRef<Target> all_targets() {
  static const Target kTargets[] = {
      {"x86_64", aasm::plan::kAuditArchX86_64, SCMP_ARCH_X86_64, "SCMP_ARCH_X86_64", "x86-64", "amd64"},
      {"aarch64", aasm::plan::kAuditArchAarch64, SCMP_ARCH_AARCH64, "SCMP_ARCH_AARCH64", "arm64", "arm64"},
  };
  return kTargets;
}

std::optional<Target> find_target(llvm::StringRef name) {
  for (const Target& target : all_targets())
    if (name == target.name) return target;
  return std::nullopt;
}

std::optional<int> syscall_number(const Target& target, llvm::StringRef name) {
  // libseccomp answers a negative pseudo-number for a call that exists on
  // some other architecture, and __NR_SCMP_ERROR for an unknown name.
  const int nr = seccomp_syscall_resolve_name_arch(target.scmp_arch, name.str().c_str());
  if (nr < 0) return std::nullopt;
  return nr;
}

bool known_to_libseccomp(llvm::StringRef name) {
  return seccomp_syscall_resolve_name(name.str().c_str()) != __NR_SCMP_ERROR;
}

llvm::ArrayRef<llvm::StringRef> known_syscall_names() {
  static const std::vector<llvm::StringRef> names = [] {
    static std::set<std::string> owned;
    for (const Target& target : all_targets()) {
      for (int nr = 0; nr < 1024; ++nr) {
        char* name = seccomp_syscall_resolve_num_arch(target.scmp_arch, nr);
        if (!name) continue;
        owned.insert(name);
        std::free(name);
      }
    }
    return std::vector<llvm::StringRef>(owned.begin(), owned.end());
  }();
  return names;
}

}  // namespace aasmc
