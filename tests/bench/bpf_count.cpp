// Deterministic cost of a compiled syscall filter: the BPF instructions the
// kernel executes per system call, counted with the userspace interpreter
// (compiler/bpf/interpreter.h) for every allowed call of the policy, on
// every target, stacked programs summed as the kernel runs them. Compared
// with what plain libseccomp emits for the same allowlist and rules: its
// binary tree (SCMP_FLTATR_CTL_OPTIMIZE=2) and its linear layout (=1).
// Checks the bound worst <= 2*log2(N) + 10, N the number of allowed calls.
//
//   bench-bpf-count testdata/policies/docker-default.yaml
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <set>

#include "bench_common.h"
#include "kernel/bpf_interpreter.h"
#include "middle/syscall_semantics.h"

namespace {

using aasm::plan::BpfInstruction;
using aasm::plan::SeccompProgram;
using namespace aasmc;
namespace bpf = aasm::bpf;

struct Count {
  uint32_t action = SECCOMP_RET_ALLOW;
  size_t executed = 0;
};

// Every program of the stack runs; the strictest answer wins.
Count run_stack(const std::vector<std::span<const BpfInstruction>>& stack, const bpf::SeccompData& data) {
  Count out;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    auto outcome = bpf::run(*it, data);
    if (!outcome) {
      std::fprintf(stderr, "a program the kernel would refuse\n");
      std::exit(2);
    }
    out.executed += outcome->executed;
    if (action_rank(outcome->action) > action_rank(out.action)) out.action = outcome->action;
  }
  return out;
}

void check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "libseccomp: %s: %s\n", what, std::strerror(-rc));
    std::exit(2);
  }
}

// What a libseccomp user writes for the same policy by hand: the allowed
// names, and the rules as libseccomp rules (32-bit request compared under a
// mask, each clone namespace flag a masked test), clone3 ENOSYS. Written for
// docker-default's two rules (ioctl TIOCSTI/TIOCLINUX EPERM, clone
// namespace flags kill); the answers are checked against the semantics.
std::vector<BpfInstruction> libseccomp_program(const SyscallIR& ir, const Target& target, int optimize) {
  check(seccomp_api_set(3), "seccomp_api_set");
  scmp_filter_ctx ctx = seccomp_init(seccomp_return_value(ir.default_action.value));
  check(seccomp_arch_remove(ctx, SCMP_ARCH_NATIVE), "arch_remove");
  check(seccomp_arch_add(ctx, target.scmp_arch), "arch_add");
  check(seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "BADARCH");
  check(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0), "NNP");
  check(seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, optimize), "OPTIMIZE");
  auto has_rule = [&](const char* name) {
    return std::any_of(ir.rules.begin(), ir.rules.end(), [&](const SyscallRuleIR& r) { return r.syscall == name; });
  };
  const int ioctl_nr = seccomp_syscall_resolve_name("ioctl");
  const bool ioctl_rule_is_default =
      has_rule("ioctl") && seccomp_return_value(ir.default_action.value) == (SECCOMP_RET_ERRNO | EPERM);
  for (const auto& [name, entry] : ir.allowed) {
    if (!syscall_number(target, name)) continue;
    if (name == "ioctl" && ioctl_rule_is_default) continue;  // conditional, below
    // libseccomp lets an unconditional allow absorb a conditional kill of
    // the same call: clone is allowed under a condition instead, below.
    if (name == "clone" && has_rule("clone")) continue;
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    check(seccomp_rule_add_exact(ctx, name == "clone3" ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ALLOW, nr, 0), name.c_str());
  }
  const uint32_t excluded[2] = {TIOCSTI, TIOCLINUX};
  if (!has_rule("ioctl")) {
  } else if (!ioctl_rule_is_default) {
    for (uint32_t request : excluded)
      check(seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), ioctl_nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, request)),
            "ioctl rule");
  } else {
    // libseccomp refuses a rule whose action is the default (EACCES), and
    // has no "not equal under a mask": ioctl is allowed where the low 32
    // bits of the request differ from both values, one masked equality per
    // term: a bit where both values agree and the request differs, or one
    // bit differing from TIOCSTI and another from TIOCLINUX.
    for (int i = 0; i < 32; ++i)
      for (int j = i; j < 32; ++j) {
        const uint32_t bi = 1u << i, bj = 1u << j;
        const bool agree_i = (excluded[0] & bi) == (excluded[1] & bi), agree_j = (excluded[0] & bj) == (excluded[1] & bj);
        uint32_t mask, value;
        if (i == j) {
          if (!agree_i) continue;
          mask = bi;
          value = ~excluded[0] & bi;
        } else {
          if (agree_i || agree_j) continue;  // subsumed by a single-bit term
          mask = bi | bj;
          value = (~excluded[0] & bi) | (~excluded[1] & bj);
          // and the mirror: bit j from TIOCSTI, bit i from TIOCLINUX
          check(seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, ioctl_nr, 1,
                                       SCMP_A1(SCMP_CMP_MASKED_EQ, mask, (~excluded[0] & bj) | (~excluded[1] & bi))),
                "ioctl allow");
        }
        check(seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, ioctl_nr, 1, SCMP_A1(SCMP_CMP_MASKED_EQ, mask, value)),
              "ioctl allow");
      }
  }
  const int clone_nr = seccomp_syscall_resolve_name("clone");
  const uint64_t namespaces =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (has_rule("clone") && ir.allowed.count("clone"))
    check(seccomp_rule_add_exact(ctx, SCMP_ACT_ALLOW, clone_nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, namespaces, 0)),
          "clone allow");
  if (has_rule("clone"))
    for (uint64_t flag : {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP})
    check(seccomp_rule_add_exact(ctx, SCMP_ACT_KILL_PROCESS, clone_nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
          "clone rule");
  auto program = aasm::bench::export_libseccomp(ctx);
  seccomp_release(ctx);
  return program;
}

struct Summary {
  size_t worst = 0;
  double average = 0;
  std::string worst_name;
};

struct Layout {
  const char* name;
  std::vector<std::span<const BpfInstruction>> stack;
  size_t instructions = 0;
};

const char* action_name(uint32_t action) {
  static char text[32];
  switch (action & SECCOMP_RET_ACTION_FULL) {
    case SECCOMP_RET_ALLOW: return "allow";
    case SECCOMP_RET_KILL_PROCESS: return "kill";
    case SECCOMP_RET_LOG: return "log";
    case SECCOMP_RET_ERRNO:
      std::snprintf(text, sizeof text, "errno %s", strerrorname_np(int(action & SECCOMP_RET_DATA)));
      return text;
  }
  std::snprintf(text, sizeof text, "%#x", action);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = aasm::bench::policy_path(argc, argv);
  const aasm::bench::Compiled compiled = aasm::bench::compile_policy(path);
  const SyscallIR& ir = compiled.ir;
  bool all_hold = true;
  bool all_agree = true;
  std::printf("policy: %s\n", path.c_str());

  for (size_t t = 0; t < compiled.targets.size(); ++t) {
    const Target& target = compiled.targets[t];
    const std::vector<BpfInstruction> o2 = libseccomp_program(ir, target, 2);
    const std::vector<BpfInstruction> o1 = libseccomp_program(ir, target, 1);
    Layout layouts[3] = {{"aasm (stacked)", {}, 0}, {"libseccomp tree (OPTIMIZE=2)", {o2}, o2.size()},
                         {"libseccomp linear (OPTIMIZE=1)", {o1}, o1.size()}};
    std::string sizes;
    for (const SeccompProgram& p : compiled.programs[t]) {
      layouts[0].stack.push_back(p.instructions);
      layouts[0].instructions += p.instructions.size();
      sizes += (sizes.empty() ? "" : " + ") + std::to_string(p.instructions.size());
    }

    // The allowed calls: what the semantics allow with every argument 0.
    std::vector<int32_t> allowed;
    for (int32_t nr = 0; nr <= max_syscall_number(target); ++nr) {
      SyscallCall call{target.audit_arch, nr, {}};
      if (expected_action(ir, target, call) == SECCOMP_RET_ALLOW) allowed.push_back(nr);
    }
    const size_t n = allowed.size();
    size_t plain_worst = 0;
    size_t cacheable = 0;
    for (int32_t nr : allowed)
      cacheable += std::all_of(compiled.programs[t].begin(), compiled.programs[t].end(),
                               [&](const SeccompProgram& p) { return bpf::is_constant_allow(p.instructions, target.audit_arch, nr); });

    std::printf("\n== %s: N = %zu allowed calls (%zu served from the kernel's action cache under aasm's programs); "
                "aasm programs: %s instructions\n",
                target.name, n, cacheable, sizes.c_str());
    std::printf("%-32s %8s %8s %8s  %s\n", "layout", "insns", "worst", "average", "worst call");
    Summary summaries[3];
    for (int l = 0; l < 3; ++l) {
      size_t total = 0;
      for (int32_t nr : allowed) {
        bpf::SeccompData data;
        data.nr = nr;
        data.arch = target.audit_arch;
        const Count c = run_stack(layouts[l].stack, data);
        if (c.action != SECCOMP_RET_ALLOW) {
          std::printf("  DISAGREE: %s answers %s for allowed %s\n", layouts[l].name, action_name(c.action),
                      syscall_name(target, nr).c_str());
          all_agree = false;
        }
        total += c.executed;
        if (c.executed > summaries[l].worst) {
          summaries[l].worst = c.executed;
          summaries[l].worst_name = syscall_name(target, nr);
        }
      }
      summaries[l].average = n ? double(total) / double(n) : 0;
      std::printf("%-32s %8zu %8zu %8.2f  %s\n", layouts[l].name, layouts[l].instructions, summaries[l].worst,
                  summaries[l].average, summaries[l].worst_name.c_str());
    }
    // The same over the calls no rule looks at (number-only decisions).
    std::set<std::string> with_rules;
    for (const SyscallRuleIR& rule : ir.rules) with_rules.insert(rule.syscall);
    size_t plain_n = 0;
    for (int l = 0; l < 3; ++l) {
      size_t worst = 0, total = 0;
      std::string worst_name;
      plain_n = 0;
      for (int32_t nr : allowed) {
        if (with_rules.count(syscall_name(target, nr))) continue;
        bpf::SeccompData data;
        data.nr = nr;
        data.arch = target.audit_arch;
        const Count c = run_stack(layouts[l].stack, data);
        ++plain_n;
        total += c.executed;
        if (c.executed > worst) worst = c.executed, worst_name = syscall_name(target, nr);
      }
      if (l == 0) plain_worst = worst;
      std::printf("%-32s %8s %8zu %8.2f  %s (the %zu calls without argument rules)\n", layouts[l].name, "", worst,
                  plain_n ? double(total) / double(plain_n) : 0, worst_name.c_str(), plain_n);
    }
    const double bound = 2 * std::log2(double(n)) + 10;
    const bool holds = double(summaries[0].worst) <= bound;
    const bool plain_holds = double(plain_worst) <= bound;
    all_hold = all_hold && holds;
    std::printf("bound: aasm worst over all allowed calls %zu <= 2*log2(%zu)+10 = %.2f: %s\n", summaries[0].worst, n,
                bound, holds ? "holds" : "DOES NOT HOLD");
    std::printf("bound: aasm worst over calls without argument rules %zu <= %.2f: %s\n", plain_worst, bound,
                plain_holds ? "holds" : "DOES NOT HOLD");

    // Argument-checked calls: every layout runs the argument comparisons.
    std::printf("\nargument-checked calls on %s (instructions executed / answer):\n", target.name);
    std::printf("%-44s %-22s %-22s %-22s\n", "call", layouts[0].name, "libseccomp tree", "libseccomp linear");
    struct ArgCase {
      const char* label;
      const char* syscall;
      unsigned arg;
      uint64_t value;
    };
    const uint64_t thread_flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                                  CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    const ArgCase cases[] = {
        {"ioctl(fd, TCGETS)", "ioctl", 1, TCGETS},
        {"ioctl(fd, TIOCGWINSZ)", "ioctl", 1, TIOCGWINSZ},
        {"ioctl(fd, FIONREAD)", "ioctl", 1, FIONREAD},
        {"ioctl(fd, TIOCSTI)", "ioctl", 1, TIOCSTI},
        {"ioctl(fd, TIOCLINUX)", "ioctl", 1, TIOCLINUX},
        {"ioctl(fd, TIOCSTI | 1 << 32)", "ioctl", 1, TIOCSTI | (uint64_t(1) << 32)},
        {"ioctl(fd, 0xffffffff)", "ioctl", 1, 0xffffffff},
        {"clone(SIGCHLD) (fork)", "clone", 0, SIGCHLD},
        {"clone(thread flags) (pthread_create)", "clone", 0, thread_flags},
        {"clone(CLONE_NEWUSER | SIGCHLD)", "clone", 0, CLONE_NEWUSER | SIGCHLD},
    };
    for (const ArgCase& c : cases) {
      const auto nr = syscall_number(target, c.syscall);
      if (!nr) continue;
      bpf::SeccompData data;
      data.nr = *nr;
      data.arch = target.audit_arch;
      data.args[c.arg] = c.value;
      SyscallCall call{target.audit_arch, *nr, {}};
      call.args[c.arg] = c.value;
      const uint32_t want = expected_action(ir, target, call);
      std::printf("%-44s", c.label);
      for (int l = 0; l < 3; ++l) {
        const Count got = run_stack(layouts[l].stack, data);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%zu / %s%s", got.executed, action_name(got.action), got.action == want ? "" : " (!)");
        if (got.action != want) all_agree = false;
        std::printf(" %-22s", cell);
      }
      std::printf("\n");
    }
  }
  std::printf("\nsummary: bound %s on every target; every layout %s with the semantics on the calls measured%s\n",
              all_hold ? "holds" : "DOES NOT HOLD", all_agree ? "agrees" : "DISAGREES",
              all_agree ? "" : " ((!) marks a disagreement)");
  return all_hold && all_agree ? 0 : 1;
}
