#include "backend/seccomp_lowering.h"

#include "backend/seccomp_prologue.h"
#include "middle/syscall_semantics.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

namespace aasmc {
namespace {

using aasm::plan::BpfInstruction;

std::vector<std::vector<scmp_arg_cmp>> libseccomp_comparisons(const Conjunct& conjunct);

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


// One libseccomp filter for one target architecture.
class Filter {
 public:
  static llvm::Expected<Filter> create(const Target& target, uint32_t default_action) {
    Filter filter(target, default_action);
    scmp_filter_ctx ctx = filter.ctx_.get();
    if (!ctx) return lowering_error(target, "seccomp_init", -ENOMEM);
    // The filter targets one architecture: drop the build host's, add the target's.
    if (int rc = seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE); rc != 0 && rc != -EEXIST)
      return lowering_error(target, "seccomp_arch_remove", rc);
    if (int rc = seccomp_arch_add(ctx, target.scmp_arch); rc != 0 && rc != -EEXIST)
      return lowering_error(target, "seccomp_arch_add", rc);
    // A syscall from any other architecture kills the process.
    if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc != 0)
      return lowering_error(target, "SCMP_FLTATR_ACT_BADARCH", rc);
    // The launcher sets no_new_privs itself; a binary tree keeps lookups O(log n).
    if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0); rc != 0)
      return lowering_error(target, "SCMP_FLTATR_CTL_NNP", rc);
    if (int rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2); rc != 0)
      return lowering_error(target, "SCMP_FLTATR_CTL_OPTIMIZE", rc);
    return filter;
  }

  // `action` for `name` when every comparison holds (none: always). A call
  // the target lacks is skipped; the default needs no rule (libseccomp
  // refuses one).
  llvm::Error add(const std::string& name, uint32_t action, const std::vector<scmp_arg_cmp>& comparisons = {}) {
    if (!syscall_number(target_, name) || action == default_action_) return llvm::Error::success();
    // libseccomp takes rule numbers in the build host's numbering (negative
    // pseudo-numbers for calls it lacks) and translates them by name to the
    // filter's architecture, so the output is the same on any build host.
    const int host_nr = seccomp_syscall_resolve_name(name.c_str());
    if (int rc = seccomp_rule_add_exact_array(ctx_.get(), action, host_nr, unsigned(comparisons.size()),
                                              comparisons.data());
        rc != 0)
      return lowering_error(target_, name, rc);
    return llvm::Error::success();
  }

  // `action` for `name` wherever `condition` holds.
  llvm::Error add(const std::string& name, uint32_t action, const NormalizedCondition& condition) {
    for (const Conjunct& conjunct : condition.disjuncts)
      for (const std::vector<scmp_arg_cmp>& comparisons : libseccomp_comparisons(conjunct))
        if (llvm::Error error = add(name, action, comparisons)) return error;
    return llvm::Error::success();
  }

  llvm::Expected<std::vector<aasm::plan::BpfInstruction>> program() { return export_program(ctx_.get(), target_); }

 private:
  Filter(const Target& target, uint32_t default_action)
      : target_(target), default_action_(default_action), ctx_(seccomp_init(default_action)) {}

  Target target_;
  uint32_t default_action_;
  std::unique_ptr<void, FilterDeleter> ctx_;
};

// libseccomp has no masked not-equal. (x & M) != V holds exactly when some
// bit b of M differs from V's, so it becomes one masked equality per bit of
// M, (x & b) == (~V & b), and a conjunct holding it becomes several.
std::vector<std::vector<scmp_arg_cmp>> libseccomp_comparisons(const Conjunct& conjunct) {
  std::vector<std::vector<scmp_arg_cmp>> out(1);
  for (const ArgComparison& c : conjunct.comparisons) {
    std::vector<scmp_arg_cmp> alternatives;
    switch (c.op) {
      case ArgComparison::Op::kEq: alternatives.push_back({c.arg, SCMP_CMP_EQ, c.value, 0}); break;
      case ArgComparison::Op::kNe: alternatives.push_back({c.arg, SCMP_CMP_NE, c.value, 0}); break;
      case ArgComparison::Op::kLt: alternatives.push_back({c.arg, SCMP_CMP_LT, c.value, 0}); break;
      case ArgComparison::Op::kLe: alternatives.push_back({c.arg, SCMP_CMP_LE, c.value, 0}); break;
      case ArgComparison::Op::kGt: alternatives.push_back({c.arg, SCMP_CMP_GT, c.value, 0}); break;
      case ArgComparison::Op::kGe: alternatives.push_back({c.arg, SCMP_CMP_GE, c.value, 0}); break;
      case ArgComparison::Op::kMaskedEq: alternatives.push_back({c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.value}); break;
      case ArgComparison::Op::kMaskedNe:
        for (int bit = 0; bit < 64; ++bit)
          if (const uint64_t b = uint64_t(1) << bit; c.mask & b)
            alternatives.push_back({c.arg, SCMP_CMP_MASKED_EQ, b, ~c.value & b});
        break;
    }
    std::vector<std::vector<scmp_arg_cmp>> next;
    for (const auto& partial : out)
      for (const scmp_arg_cmp& alternative : alternatives) {
        next.push_back(partial);
        next.back().push_back(alternative);
      }
    out = std::move(next);
  }
  return out;
}

uint32_t encode(const Action& action) { return seccomp_return_value(action); }

// The rules of a target split into as few programs as libseccomp can build
// without ambiguity: one program never holds two actions for one syscall
// (libseccomp leaves overlapping rules with different actions undefined),
// but rules of different syscalls share programs. Per syscall, its distinct
// actions go to programs 1, 2, ... in ascending return value, so among
// equally strict errno answers the larger value is installed later and wins
// (the kernel keeps the newest filter's data).
// Fallback rules (SyscallRuleIR::fallback) form programs of their own.
std::vector<std::vector<const SyscallRuleIR*>> rule_programs(const SyscallIR& ir, const Target& target, bool fallback) {
  std::map<std::string, std::map<uint32_t, std::vector<const SyscallRuleIR*>>> by_call;
  for (const SyscallRuleIR& rule : ir.rules)
    if (rule.action.kind != Action::Kind::kAllow && rule.normalized.count(target.name) && rule.fallback == fallback)
      by_call[rule.syscall][encode(rule.action)].push_back(&rule);
  std::vector<std::vector<const SyscallRuleIR*>> programs;
  for (const auto& [call, by_action] : by_call) {
    size_t index = 0;
    for (const auto& [value, rules] : by_action) {
      if (programs.size() <= index) programs.emplace_back();
      programs[index].insert(programs[index].end(), rules.begin(), rules.end());
      ++index;
    }
  }
  return programs;
}

// Each rule's action where its condition matches, allow elsewhere.
llvm::Expected<aasm::plan::SeccompProgram> lower_rule_program(const std::vector<const SyscallRuleIR*>& rules,
                                                              const Target& target, aasm::plan::FilterMode mode) {
  auto filter = Filter::create(target, SCMP_ACT_ALLOW);
  if (!filter) return filter.takeError();
  for (const SyscallRuleIR* rule : rules)
    if (llvm::Error error = filter->add(rule->syscall, scmp_action(rule->action), rule->normalized.at(target.name)))
      return error;
  auto instructions = filter->program();
  if (!instructions) return instructions.takeError();
  auto stripped = without_header(*instructions, target);
  if (!stripped) return stripped.takeError();
  return aasm::plan::SeccompProgram{target.audit_arch, mode, SECCOMP_RET_ALLOW, std::move(*stripped)};
}

// The allowlist or denylist itself, with the safe defaults, behind the
// prologue that answers unknown numbers.
llvm::Expected<aasm::plan::SeccompProgram> lower_main_program(const SyscallIR& ir, const Target& target) {
  const bool allowlist = ir.mode == SyscallIR::Mode::kAllowlist;
  const uint32_t default_action = allowlist ? scmp_action(ir.default_action.value) : SCMP_ACT_ALLOW;
  auto filter = Filter::create(target, default_action);
  if (!filter) return filter.takeError();
  const uint32_t enosys = SCMP_ACT_ERRNO(ENOSYS);
  if (allowlist) {
    for (const auto& [name, entry] : ir.allowed)
      if (llvm::Error error = filter->add(name, answers_enosys_by_design(name) ? enosys : SCMP_ACT_ALLOW)) return error;
    for (const auto& [name, by_target] : ir.conditionally_allowed)
      if (auto it = by_target.find(target.name); it != by_target.end())
        if (llvm::Error error = filter->add(name, SCMP_ACT_ALLOW, it->second)) return error;
    // clone3 answers ENOSYS wherever the default would not kill it.
    for (const FallbackCall& call : fallback_calls()) {
      const std::string name = call.name.str();
      const bool listed = ir.allowed.count(name) || ir.denied.count(name);
      if (!listed && ir.default_action.value.kind != Action::Kind::kKill)
        if (llvm::Error error = filter->add(name, enosys)) return error;
    }
  } else {
    const uint32_t deny = scmp_action(ir.default_action.value);
    for (const auto& [name, from] : ir.denied)
      if (llvm::Error error = filter->add(name, deny)) return error;
    for (llvm::StringRef name : io_uring_calls())
      if (llvm::Error error = filter->add(name.str(), deny)) return error;
    for (const FallbackCall& call : fallback_calls())
      if (!ir.denied.count(call.name.str()))
        if (llvm::Error error = filter->add(call.name.str(), enosys)) return error;
  }
  auto instructions = filter->program();
  if (!instructions) return instructions.takeError();
  auto spliced = with_prologue(*instructions, target);
  if (!spliced) return spliced.takeError();
  return aasm::plan::SeccompProgram{target.audit_arch,
                                    allowlist ? aasm::plan::FilterMode::kAllowlist : aasm::plan::FilterMode::kDenylist,
                                    allowlist ? encode(ir.default_action.value) : SECCOMP_RET_ALLOW,
                                    std::move(*spliced)};
}

}  // namespace


llvm::Expected<std::vector<aasm::plan::SeccompProgram>> lower_syscalls(const SyscallIR& ir, const Target& target) {
  if (int rc = seccomp_api_set(kSeccompApiLevel); rc != 0) return lowering_error(target, "seccomp_api_set", rc);
  std::vector<aasm::plan::SeccompProgram> programs;
  // Rule programs first: the launcher installs in plan order, and the main
  // program, installed last, must not refuse the seccomp() calls before it.
  for (const bool fallback : {false, true})
    for (const auto& rules : rule_programs(ir, target, fallback)) {
      using aasm::plan::FilterMode;
      auto program = lower_rule_program(rules, target, fallback ? FilterMode::kFallback : FilterMode::kRules);
      if (!program) return program.takeError();
      programs.push_back(std::move(*program));
    }
  auto main = lower_main_program(ir, target);
  if (!main) return main.takeError();
  programs.push_back(std::move(*main));
  return programs;
}

std::string libseccomp_version() {
  const scmp_version* v = seccomp_version();
  return std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->micro);
}

unsigned pinned_seccomp_api_level() { return kSeccompApiLevel; }

}  // namespace aasmc
