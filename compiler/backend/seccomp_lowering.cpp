#include "backend/seccomp_lowering.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace aasmc {
namespace {

// API level 3 knows KILL_PROCESS and LOG, all a plan uses. Without pinning,
// libseccomp asks the running kernel, so the output would vary by build host.
constexpr unsigned kSeccompApiLevel = 3;

llvm::Error lowering_error(const Target& target, const std::string& what, int rc) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "seccomp lowering for %s: %s: %s", target.name,
                                 what.c_str(), std::strerror(-rc));
}

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

uint32_t scmp_action(const Action& action) {
  switch (action.kind) {
    case Action::Kind::kAllow: return SCMP_ACT_ALLOW;
    case Action::Kind::kLog: return SCMP_ACT_LOG;
    case Action::Kind::kErrno: return SCMP_ACT_ERRNO(uint32_t(action.errno_value));
    case Action::Kind::kKill: return SCMP_ACT_KILL_PROCESS;
  }
  return SCMP_ACT_KILL_PROCESS;
}

// libseccomp 2.5.4 has no export to memory: export to a memfd, read it back.
llvm::Expected<std::vector<aasm::plan::BpfInstruction>> export_program(scmp_filter_ctx ctx, const Target& target) {
  const int fd = memfd_create("aasm-bpf", MFD_CLOEXEC);
  if (fd < 0) return lowering_error(target, "memfd_create", -errno);
  std::vector<uint8_t> bytes;
  int rc = seccomp_export_bpf(ctx, fd);
  if (rc == 0) {
    const off_t size = lseek(fd, 0, SEEK_END);
    bytes.resize(size > 0 ? size_t(size) : 0);
    if (size < 0 || pread(fd, bytes.data(), bytes.size(), 0) != ssize_t(bytes.size())) rc = -EIO;
  }
  close(fd);
  if (rc != 0) return lowering_error(target, "seccomp_export_bpf", rc);
  if (bytes.size() % sizeof(sock_filter) != 0) return lowering_error(target, "exported program size", -EINVAL);
  std::vector<aasm::plan::BpfInstruction> program;
  for (size_t at = 0; at < bytes.size(); at += sizeof(sock_filter)) {
    sock_filter insn;
    std::memcpy(&insn, bytes.data() + at, sizeof insn);
    program.push_back({insn.code, insn.jt, insn.jf, insn.k});
  }
  return program;
}

}  // namespace

Action denylist_action() { return Action{Action::Kind::kKill, 0}; }

uint32_t seccomp_return_value(const Action& action) {
  switch (action.kind) {
    case Action::Kind::kAllow: return SECCOMP_RET_ALLOW;
    case Action::Kind::kLog: return SECCOMP_RET_LOG;
    case Action::Kind::kErrno: return SECCOMP_RET_ERRNO | (uint32_t(action.errno_value) & SECCOMP_RET_DATA);
    case Action::Kind::kKill: return SECCOMP_RET_KILL_PROCESS;
  }
  return SECCOMP_RET_KILL_PROCESS;
}

llvm::Expected<aasm::plan::SeccompProgram> lower_syscalls(const SyscallIR& ir, const Target& target) {
  if (int rc = seccomp_api_set(kSeccompApiLevel); rc != 0) return lowering_error(target, "seccomp_api_set", rc);
  const bool allowlist = ir.mode == aasm::plan::FilterMode::kAllowlist;
  std::unique_ptr<void, FilterDeleter> ctx(
      seccomp_init(allowlist ? scmp_action(ir.default_action.value) : SCMP_ACT_ALLOW));
  if (!ctx) return lowering_error(target, "seccomp_init", -ENOMEM);
  // The filter targets one architecture: drop the build host's, add the target's.
  if (int rc = seccomp_arch_remove(ctx.get(), SCMP_ARCH_NATIVE); rc != 0 && rc != -EEXIST)
    return lowering_error(target, "seccomp_arch_remove", rc);
  if (int rc = seccomp_arch_add(ctx.get(), target.scmp_arch); rc != 0 && rc != -EEXIST)
    return lowering_error(target, "seccomp_arch_add", rc);
  // A syscall from any other architecture kills the process.
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc != 0)
    return lowering_error(target, "SCMP_FLTATR_ACT_BADARCH", rc);
  // The launcher sets no_new_privs itself; a binary tree keeps lookups O(log n).
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc != 0)
    return lowering_error(target, "SCMP_FLTATR_CTL_NNP", rc);
  if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc != 0)
    return lowering_error(target, "SCMP_FLTATR_CTL_OPTIMIZE", rc);
  // libseccomp takes rule numbers in the build host's numbering (negative
  // pseudo-numbers for calls it lacks) and translates them by name to the
  // filter's architecture, so the output is the same on any build host.
  auto add = [&](const std::string& name, uint32_t action) -> llvm::Error {
    if (!syscall_number(target, name)) return llvm::Error::success();  // a group member this target lacks
    const int host_nr = seccomp_syscall_resolve_name(name.c_str());
    if (int rc = seccomp_rule_add_exact(ctx.get(), action, host_nr, 0); rc != 0)
      return lowering_error(target, name, rc);
    return llvm::Error::success();
  };
  for (const auto& [name, entry] : ir.allowed)
    if (llvm::Error error = add(name, SCMP_ACT_ALLOW)) return error;
  if (!allowlist)
    for (const auto& [name, from] : ir.denied)
      if (llvm::Error error = add(name, scmp_action(denylist_action()))) return error;
  auto instructions = export_program(ctx.get(), target);
  if (!instructions) return instructions.takeError();
  aasm::plan::SeccompProgram program;
  program.audit_arch = target.audit_arch;
  program.mode = ir.mode;
  program.default_action = allowlist ? seccomp_return_value(ir.default_action.value) : SECCOMP_RET_ALLOW;
  program.instructions = std::move(*instructions);
  return program;
}

std::string libseccomp_version() {
  const scmp_version* v = seccomp_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro);
}

unsigned pinned_seccomp_api_level() { return kSeccompApiLevel; }

}  // namespace aasmc
