#include "tables/syscall_signatures.h"

#include <algorithm>
#include <set>

namespace aasmc {

unsigned arg_type_bits(ArgType type) {
  switch (type) {
    case ArgType::kU32:
    case ArgType::kS32: return 32;
    case ArgType::kU16: return 16;
    default: return 64;
  }
}

bool arg_type_signed(ArgType type) { return type == ArgType::kS32 || type == ArgType::kS64; }

const char* arg_type_name(ArgType type) {
  switch (type) {
    case ArgType::kU64: return "unsigned long";
    case ArgType::kS64: return "long";
    case ArgType::kPtr: return "pointer";
    case ArgType::kU32: return "unsigned int";
    case ArgType::kS32: return "int";
    case ArgType::kU16: return "umode_t";
  }
  return "?";
}

namespace {

// Notes for calls whose interesting arguments seccomp cannot see.
constexpr const char* kClone3Note =
    "clone3 passes its flags inside struct clone_args, which seccomp cannot read; deny clone3 "
    "(errno:ENOSYS makes libc fall back to clone) and put the condition on clone's flags";
constexpr const char* kOpenat2Note =
    "openat2 passes its flags inside struct open_how, which seccomp cannot read; condition openat instead";
constexpr const char* kArgNNote =
    "its arguments after the first are named arg2..arg5 in the kernel but are operands arg1..arg4 here "
    "(argN is always the N-th argument, counting from 0)";

#define A(name, kernel, type) ArgSpec{name, kernel, ArgType::type}
#define N nullptr

// One line per syscall (per target where the targets differ). Names and
// types follow the kernel's SYSCALL_DEFINE (file in the comment); the
// policy-facing name is the man page's, the kernel's name is accepted too.
// Narrowed types (a `unsigned long` parameter the kernel truncates before
// any use) say so in their comment.
const SyscallSignature kSignatures[] = {
    {"ioctl", N, 3, {A("fd", N, kU32), A("request", "cmd", kU32), A("arg", N, kU64)}, N},  // fs/ioctl.c
    {"socket", N, 3, {A("domain", "family", kS32), A("type", N, kS32), A("protocol", N, kS32)}, N},  // net/socket.c
    {"socketpair", N, 4, {A("domain", "family", kS32), A("type", N, kS32), A("protocol", N, kS32), A("sv", "usockvec", kPtr)}, N},
    // kernel/fork.c: x86_64 builds the plain variant, arm64 selects CONFIG_CLONE_BACKWARDS (tls before
    // child_tidptr). clone_flags is unsigned long, but clone() passes lower_32_bits(clone_flags) on: 32 bits.
    {"clone", "x86_64", 5, {A("flags", "clone_flags", kU32), A("stack", "newsp", kU64), A("parent_tid", "parent_tidptr", kPtr), A("child_tid", "child_tidptr", kPtr), A("tls", N, kU64)}, N},
    {"clone", "aarch64", 5, {A("flags", "clone_flags", kU32), A("stack", "newsp", kU64), A("parent_tid", "parent_tidptr", kPtr), A("tls", N, kU64), A("child_tid", "child_tidptr", kPtr)}, N},
    {"clone3", N, 2, {A("cl_args", "uargs", kPtr), A("size", N, kU64)}, kClone3Note},  // kernel/fork.c
    {"unshare", N, 1, {A("flags", "unshare_flags", kU64)}, N},  // kernel/fork.c (checks all 64 bits)
    {"setns", N, 2, {A("fd", N, kS32), A("nstype", "flags", kS32)}, N},  // kernel/nsproxy.c
    // arch/x86/kernel/sys_x86_64.c, arch/arm64/kernel/sys.c: all unsigned long; fd is truncated by fget(unsigned int).
    {"mmap", N, 6, {A("addr", N, kU64), A("length", "len", kU64), A("prot", N, kU64), A("flags", N, kU64), A("fd", N, kU32), A("offset", "off", kU64)}, N},
    {"mprotect", N, 3, {A("addr", "start", kU64), A("len", N, kU64), A("prot", N, kU64)}, N},  // mm/mprotect.c
    {"pkey_mprotect", N, 4, {A("addr", "start", kU64), A("len", N, kU64), A("prot", N, kU64), A("pkey", N, kS32)}, N},
    {"madvise", N, 3, {A("addr", "start", kU64), A("len", "len_in", kU64), A("advice", "behavior", kS32)}, N},  // mm/madvise.c
    {"open", N, 3, {A("pathname", "filename", kPtr), A("flags", N, kS32), A("mode", N, kU16)}, N},  // fs/open.c
    {"openat", N, 4, {A("dirfd", "dfd", kS32), A("pathname", "filename", kPtr), A("flags", N, kS32), A("mode", N, kU16)}, N},
    {"creat", N, 2, {A("pathname", N, kPtr), A("mode", N, kU16)}, N},
    {"openat2", N, 4, {A("dirfd", "dfd", kS32), A("pathname", "filename", kPtr), A("how", N, kPtr), A("size", "usize", kU64)}, kOpenat2Note},
    {"fcntl", N, 3, {A("fd", N, kU32), A("cmd", N, kU32), A("arg", N, kU64)}, N},  // fs/fcntl.c
    {"dup3", N, 3, {A("oldfd", N, kU32), A("newfd", N, kU32), A("flags", N, kS32)}, N},  // fs/file.c
    {"pipe2", N, 2, {A("pipefd", "fildes", kPtr), A("flags", N, kS32)}, N},  // fs/pipe.c
    {"eventfd2", N, 2, {A("initval", "count", kU32), A("flags", N, kS32)}, N},  // fs/eventfd.c
    {"memfd_create", N, 2, {A("name", "uname", kPtr), A("flags", N, kU32)}, N},  // mm/memfd.c
    {"prctl", N, 5, {A("option", N, kS32), A(N, N, kU64), A(N, N, kU64), A(N, N, kU64), A(N, N, kU64)}, kArgNNote},  // kernel/sys.c
    {"keyctl", N, 5, {A("option", N, kS32), A(N, N, kU64), A(N, N, kU64), A(N, N, kU64), A(N, N, kU64)}, kArgNNote},
    {"personality", N, 1, {A("persona", "personality", kU32)}, N},  // kernel/exec_domain.c
    {"kill", N, 2, {A("pid", N, kS32), A("sig", N, kS32)}, N},  // kernel/signal.c
    {"tkill", N, 2, {A("tid", "pid", kS32), A("sig", N, kS32)}, N},
    {"tgkill", N, 3, {A("tgid", N, kS32), A("tid", "pid", kS32), A("sig", N, kS32)}, N},
    {"pidfd_open", N, 2, {A("pid", N, kS32), A("flags", N, kU32)}, N},  // kernel/pid.c
    {"pidfd_send_signal", N, 4, {A("pidfd", N, kS32), A("sig", N, kS32), A("info", N, kPtr), A("flags", N, kU32)}, N},
    {"ptrace", N, 4, {A("request", N, kS64), A("pid", N, kS64), A("addr", N, kU64), A("data", N, kU64)}, N},  // kernel/ptrace.c
    {"setsockopt", N, 5, {A("fd", N, kS32), A("level", N, kS32), A("optname", N, kS32), A("optval", N, kPtr), A("optlen", N, kS32)}, N},
    {"getsockopt", N, 5, {A("fd", N, kS32), A("level", N, kS32), A("optname", N, kS32), A("optval", N, kPtr), A("optlen", N, kPtr)}, N},
    {"bind", N, 3, {A("fd", N, kS32), A("addr", "umyaddr", kPtr), A("addrlen", N, kS32)}, N},
    {"connect", N, 3, {A("fd", N, kS32), A("addr", "uservaddr", kPtr), A("addrlen", N, kS32)}, N},
    {"listen", N, 2, {A("fd", N, kS32), A("backlog", N, kS32)}, N},
    {"accept4", N, 4, {A("fd", N, kS32), A("addr", "upeer_sockaddr", kPtr), A("addrlen", "upeer_addrlen", kPtr), A("flags", N, kS32)}, N},
    {"shutdown", N, 2, {A("fd", N, kS32), A("how", N, kS32)}, N},
    {"sendto", N, 6, {A("fd", N, kS32), A("buf", "buff", kPtr), A("len", N, kU64), A("flags", N, kU32), A("dest_addr", "addr", kPtr), A("addrlen", "addr_len", kS32)}, N},
    {"recvfrom", N, 6, {A("fd", N, kS32), A("buf", "ubuf", kPtr), A("len", "size", kU64), A("flags", N, kU32), A("src_addr", "addr", kPtr), A("addrlen", "addr_len", kPtr)}, N},
    {"sendmsg", N, 3, {A("fd", N, kS32), A("msg", N, kPtr), A("flags", N, kU32)}, N},
    {"sendmmsg", N, 4, {A("fd", N, kS32), A("msgvec", "mmsg", kPtr), A("vlen", N, kU32), A("flags", N, kU32)}, N},
    {"recvmsg", N, 3, {A("fd", N, kS32), A("msg", N, kPtr), A("flags", N, kU32)}, N},
    {"mount", N, 5, {A("source", "dev_name", kPtr), A("target", "dir_name", kPtr), A("filesystemtype", "type", kPtr), A("mountflags", "flags", kU64), A("data", N, kPtr)}, N},  // fs/namespace.c
    {"umount2", N, 2, {A("target", "name", kPtr), A("flags", N, kS32)}, N},  // fs/namespace.c (SYSCALL_DEFINE2(umount, ...))
    {"umask", N, 1, {A("mask", N, kS32)}, N},  // kernel/sys.c
    {"chmod", N, 2, {A("pathname", "filename", kPtr), A("mode", N, kU16)}, N},  // fs/open.c
    {"fchmod", N, 2, {A("fd", N, kU32), A("mode", N, kU16)}, N},
    {"fchmodat", N, 3, {A("dirfd", "dfd", kS32), A("pathname", "filename", kPtr), A("mode", N, kU16)}, N},
    {"fchmodat2", N, 4, {A("dirfd", "dfd", kS32), A("pathname", "filename", kPtr), A("mode", N, kU16), A("flags", N, kU32)}, N},  // fs/open.c
    {"mkdirat", N, 3, {A("dirfd", "dfd", kS32), A("pathname", N, kPtr), A("mode", N, kU16)}, N},  // fs/namei.c
    {"mknod", N, 3, {A("pathname", "filename", kPtr), A("mode", N, kU16), A("dev", N, kU32)}, N},  // fs/namei.c
    {"mknodat", N, 4, {A("dirfd", "dfd", kS32), A("pathname", "filename", kPtr), A("mode", N, kU16), A("dev", N, kU32)}, N},
    {"execveat", N, 5, {A("dirfd", "fd", kS32), A("pathname", "filename", kPtr), A("argv", N, kPtr), A("envp", N, kPtr), A("flags", N, kS32)}, N},  // fs/exec.c
    {"seccomp", N, 3, {A("operation", "op", kU32), A("flags", N, kU32), A("args", "uargs", kPtr)}, N},  // kernel/seccomp.c
    {"bpf", N, 3, {A("cmd", N, kS32), A("attr", "uattr", kPtr), A("size", N, kU32)}, N},  // kernel/bpf/syscall.c
    {"setuid", N, 1, {A("uid", N, kU32)}, N},  // kernel/sys.c (uid_t: unsigned int)
    {"prlimit64", N, 4, {A("pid", N, kS32), A("resource", N, kU32), A("new_limit", "new_rlim", kPtr), A("old_limit", "old_rlim", kPtr)}, N},
    {"setgid", N, 1, {A("gid", N, kU32)}, N},
};

#undef A
#undef N

}  // namespace

llvm::ArrayRef<SyscallSignature> all_signatures() { return kSignatures; }

const SyscallSignature* find_signature(llvm::StringRef syscall, const Target& target) {
  for (const SyscallSignature& sig : kSignatures) {
    if (syscall != sig.syscall) continue;
    if (sig.only_on && llvm::StringRef(sig.only_on) != target.name) continue;
    return &sig;
  }
  return nullptr;
}

std::vector<llvm::StringRef> operand_names(llvm::StringRef syscall, const Target& target) {
  std::vector<llvm::StringRef> out;
  if (const SyscallSignature* sig = find_signature(syscall, target)) {
    for (unsigned i = 0; i < sig->count; ++i) {
      if (sig->args[i].name) out.push_back(sig->args[i].name);
      if (sig->args[i].kernel_name) out.push_back(sig->args[i].kernel_name);
    }
  }
  return out;
}

std::string arg_display_name(llvm::StringRef syscall, unsigned index, const Target& target) {
  const SyscallSignature* sig = find_signature(syscall, target);
  if (!sig || index >= sig->count || !sig->args[index].name) return "";
  return sig->args[index].name;
}

std::string arg_display_name(llvm::StringRef syscall, unsigned index) {
  std::set<std::string> names;
  for (const Target& target : all_targets()) names.insert(arg_display_name(syscall, index, target));
  return names.size() == 1 ? *names.begin() : "";
}

}  // namespace aasmc
