// Curated syscall groups (`@name` in a policy). Each member carries a one-line
// reason, printed by `aasmc groups`.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

namespace aasmc {

struct GroupMember {
  llvm::StringRef syscall;
  llvm::StringRef reason;
  // A call that raises privilege only with this capability (CAP_SETUID):
  // without it, it can only keep or lower. It belongs to an allow list's
  // groups while the policy does not keep the capability, to a deny list's
  // while it does (isolation.linux_capabilities).
  llvm::StringRef capability = {};
};

// A call refused only for some arguments: a deny set's member that is a
// rule (ioctl with TIOCSTI), written in the `when:` language.
struct GroupRule {
  llvm::StringRef syscall;
  llvm::StringRef when;
  llvm::StringRef reason;
};

struct SyscallGroup {
  llvm::StringRef name;  // without '@'
  llvm::StringRef summary;
  llvm::ArrayRef<GroupMember> members;
  llvm::ArrayRef<GroupRule> rules = {};  // deny sets only: refused where the condition holds
};

llvm::ArrayRef<SyscallGroup> all_groups();
const SyscallGroup* find_group(llvm::StringRef name);

// What the dynamic loader and libc need between execve and main(); added to
// every allowlist and recorded in the plan as added.
const SyscallGroup& startup_group();

}  // namespace aasmc
