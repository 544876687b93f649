#include "middle/syscall_semantics.h"

#include <llvm/ADT/STLExtras.h>

#include <linux/seccomp.h>
#include <seccomp.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace aasmc {
namespace {

constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;

bool matches(const std::map<std::string, NormalizedCondition>& by_target, const Target& target,
             const uint64_t (&args)[6]) {
  auto it = by_target.find(target.name);
  return it != by_target.end() && evaluate_condition(it->second, args);
}

uint32_t base_action(const SyscallIR& ir, const Target& target, const std::string& name, const SyscallCall& call) {
  uint32_t base;
  if (ir.mode == SyscallIR::Mode::kDenylist) {
    base = ir.denied.count(name) || is_io_uring(name) ? seccomp_return_value(ir.default_action.value) : kAllow;
  } else if (ir.denied.count(name)) {
    base = seccomp_return_value(ir.default_action.value);
  } else if (ir.allowed.count(name)) {
    base = kAllow;
  } else if (auto it = ir.conditionally_allowed.find(name);
             it != ir.conditionally_allowed.end() && matches(it->second, target, call.args)) {
    base = kAllow;
  } else {
    base = seccomp_return_value(ir.default_action.value);
  }
  if (answers_enosys_by_design(name) && base != kKill) return kEnosys;
  return base;
}

}  // namespace

llvm::ArrayRef<FallbackCall> fallback_calls() {
  static constexpr FallbackCall kFallbacks[] = {{"clone3", "clone"}};
  return kFallbacks;
}

bool answers_enosys_by_design(llvm::StringRef name) {
  const auto calls = fallback_calls();
  return std::any_of(calls.begin(), calls.end(), [&](const FallbackCall& c) { return c.name == name; });
}

uint32_t seccomp_return_value(const Action& action) {
  switch (action.kind) {
    case Action::Kind::kAllow: return kAllow;
    case Action::Kind::kLog: return SECCOMP_RET_LOG;
    case Action::Kind::kErrno: return SECCOMP_RET_ERRNO | (uint32_t(action.errno_value) & SECCOMP_RET_DATA);
    case Action::Kind::kKill: return kKill;
  }
  return kKill;
}

int64_t action_rank(uint32_t action) {
  // The kernel compares (s32)(action & SECCOMP_RET_ACTION_FULL): smaller wins.
  return -int64_t(int32_t(action & SECCOMP_RET_ACTION_FULL));
}

std::string syscall_name(const Target& target, int32_t nr) {
  if (nr < 0) return "";
  char* name = seccomp_syscall_resolve_num_arch(target.scmp_arch, nr);
  if (!name) return "";
  std::string out = name;
  std::free(name);
  return out;
}

int32_t max_syscall_number(const Target& target) {
  int32_t max = -1;
  for (int32_t nr = 0; nr < 1024; ++nr)
    if (!syscall_name(target, nr).empty()) max = nr;
  return max;
}

llvm::ArrayRef<llvm::StringRef> io_uring_calls() {
  static constexpr llvm::StringRef kCalls[] = {"io_uring_setup", "io_uring_enter", "io_uring_register"};
  return kCalls;
}

bool is_io_uring(llvm::StringRef name) { return llvm::is_contained(io_uring_calls(), name); }

uint32_t expected_action(const SyscallIR& ir, const Target& target, const SyscallCall& call) {
  if (call.arch != target.audit_arch) return kKill;
  const uint32_t nr = uint32_t(call.nr);
  if (std::string_view(target.name) == "x86_64" && nr >= 0x40000000 && call.nr != -1) return kKill;
  const std::string name = syscall_name(target, call.nr);
  if (name.empty()) return kEnosys;

  uint32_t result = base_action(ir, target, name, call);
  bool from_rule = false;
  for (const SyscallRuleIR& rule : ir.rules) {
    if (rule.syscall != name || rule.action.kind == Action::Kind::kAllow) continue;
    if (!matches(rule.normalized, target, call.args)) continue;
    const uint32_t action = seccomp_return_value(rule.action);
    const bool stricter = action_rank(action) > action_rank(result);
    const bool larger_errno_tie = from_rule && action_rank(action) == action_rank(result) && action > result;
    if (stricter || larger_errno_tie) {
      result = action;
      from_rule = true;
    }
  }
  return result;
}

}  // namespace aasmc
