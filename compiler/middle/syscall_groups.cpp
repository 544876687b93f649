#include "middle/syscall_groups.h"

namespace aasmc {
namespace {

// Measured with `strace -f` on dynamically linked Debian 12 binaries (glibc
// 2.36) from execve to main(). Members absent on a target (arch_prctl and
// access on aarch64) are skipped for that target.
constexpr GroupMember kStartup[] = {
    {"execve", "the launcher's own final call, made after the filter is installed"},
    {"brk", "malloc's heap set-up in ld.so and libc"},
    {"mmap", "ld.so maps the program's libraries"},
    {"mprotect", "ld.so applies RELRO and segment permissions"},
    {"munmap", "ld.so unmaps temporary mappings"},
    {"arch_prctl", "x86_64 libc sets the thread pointer (FS base)"},
    {"set_tid_address", "libc thread start-up (clear_child_tid)"},
    {"set_robust_list", "libc registers the robust futex list"},
    {"rseq", "glibc 2.35+ registers restartable sequences"},
    {"prlimit64", "libc reads the stack limit"},
    {"getrandom", "libc seeds malloc and stack-protector state"},
    {"openat", "ld.so opens ld.so.cache and libraries"},
    {"read", "ld.so reads ELF headers"},
    {"pread64", "ld.so reads program headers"},
    {"close", "ld.so closes library descriptors"},
    {"newfstatat", "ld.so stats libraries (fstat is newfstatat in glibc 2.33+)"},
    {"fstat", "older libc stats libraries with fstat"},
    {"access", "ld.so checks /etc/ld.so.preload"},
    {"faccessat", "ld.so checks /etc/ld.so.preload on aarch64"},
    {"exit", "a thread ending"},
    {"exit_group", "the process ending, and the child reporting a failed execve"},
    {"rt_sigreturn", "returning from a signal handler"},
};

constexpr SyscallGroup kGroups[] = {
    {"startup", "what the dynamic loader and libc start-up need after execve", kStartup},
};

}  // namespace

llvm::ArrayRef<SyscallGroup> all_groups() { return kGroups; }

const SyscallGroup* find_group(llvm::StringRef name) {
  for (const SyscallGroup& group : kGroups)
    if (group.name == name) return &group;
  return nullptr;
}

const SyscallGroup& startup_group() { return kGroups[0]; }

}  // namespace aasmc
