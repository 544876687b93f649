#include "dry_run.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "exit_codes.h"
#include "self_checks.h"
#include "kernel/arch.h"
#include "kernel/capabilities.h"
#include "kernel/landlock.h"
#include "kernel/namespaces.h"
#include "plan/plan.h"
#include "launch.h"
#include "supervisor/cgroup.h"
#include "supervisor/connect_answers.h"
#include "supervisor/landlock_negotiation.h"
#include "supervisor/path_binding.h"

namespace aasm {
namespace {

bool seccomp_action_available(uint32_t action) {
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

void report_paths(const plan::LandlockRuleset& ruleset, const LaunchContext& context) {
  std::printf("paths on this host (receipts record the templates, not these):\n");
  for (const plan::LandlockRule& rule : ruleset.rules) {
    const std::string text = rule_template(rule);
    const bool optional = rule.flags & plan::kRuleOptional;
    auto path = expand_rule_path(rule, context);
    if (!path) {
      std::printf("  %s: %s\n", text.c_str(), path.error().message.c_str());
      continue;
    }
    const int fd = ::open(path->c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) {
      std::printf("  %s -> %s: missing (%s)\n", text.c_str(), path->c_str(),
                  optional ? "optional: its rule is skipped" : "required: the launch is refused");
      continue;
    }
    std::printf("  %s -> %s\n", text.c_str(), resolved_path(fd, *path).c_str());
    ::close(fd);
  }
}

// Namespaces, kept capabilities and tree limits: what the plan asks and
// what this host can give.
void report_process(const plan::Plan& plan, std::string& refusal) {
  const uint64_t kept = plan::kept_capabilities_of(plan);
  const Status holds = check_kept_capabilities(plan);
  std::printf("capabilities: kept %s%s\n", capabilities::names(kept).c_str(),
              holds ? (kept ? " (aasm-launch holds them)" : ", every other one dropped") : ": aasm-launch does not hold them");
  if (!holds && refusal.empty()) refusal = holds.error().message;
  if (!plan.process) return;
  const plan::ProcessSettings& p = *plan.process;
  if (p.namespaces)
    std::printf("namespaces: %s, created with the command's process\n", namespaces::names(p.namespaces).c_str());
  if (p.has_tree_limits())
    std::printf("tree limits (memory, swap, pids, cpu) in the run's cgroup%s; this host:\n%s",
                p.flags & plan::kProcessResourceDegradable ? " (may degrade to per-process rlimits)" : "",
                cgroup::describe_host_support().c_str());
}

}  // namespace

int dry_run(const std::string& plan_path, const std::optional<std::string>& expect_digest) {
  auto bytes = plan::read_plan_file(plan_path);
  if (!bytes) {
    std::printf("verdict: refused: %s\n", bytes.error().message.c_str());
    return exit_code::kLauncherError;
  }
  auto plan = plan::decode_plan(*bytes);
  const std::string digest = to_hex(plan::plan_digest(*bytes));
  std::printf("plan: %s sha256 %s\n", plan_path.c_str(), digest.c_str());
  std::string refusal;
  if (!plan) refusal = plan.error().message;
  else if (expect_digest && *expect_digest != digest) refusal = "the digest is not the expected " + *expect_digest;

  utsname host{};
  ::uname(&host);
  const landlock::AbiProbe probe = landlock::probe_abi();
  std::printf("host: Linux %s %s; Landlock ABI %d%s; seccomp filters %s (kill_process %s, errno %s, log %s)\n",
              host.release, host.machine, probe.abi, probe.abi ? "" : " (none)",
              ::prctl(PR_GET_SECCOMP) >= 0 ? "available" : "unavailable",
              seccomp_action_available(SECCOMP_RET_KILL_PROCESS) ? "yes" : "no",
              seccomp_action_available(SECCOMP_RET_ERRNO) ? "yes" : "no",
              seccomp_action_available(SECCOMP_RET_LOG) ? "yes" : "no");

  if (plan && scope_signals_by_pid_namespace(*plan, probe))
    std::printf("ipc: signals scoped by a new PID namespace (this Landlock ABI has no signal scope)\n");
  if (plan && plan->landlock) {
    const LandlockNegotiation negotiation = negotiate_landlock(*plan->landlock, probe);
    std::printf("landlock controls (requested rights / planned / achievable here):\n");
    for (const ControlOutcome& c : negotiation.controls)
      std::printf("  %-16s %s / %s / %s%s%s\n", plan::control_domain_name(c.control.domain),
                  control_rights_text(c.control).c_str(),
                  c.control.flags & plan::kControlDegradable ? "enforce, may degrade" : "enforce, required",
                  control_level_name(c.level), c.why.empty() ? "" : ": ", c.why.c_str());
    for (plan::ControlDomain verb : plan::unconstrained_filesystem_verbs(*plan))
      std::printf("  %-16s unconstrained: no document constrains it\n", plan::control_domain_name(verb));
    if (negotiation.applies && ConnectAnswers::for_ruleset(negotiation.effective))
      std::printf("network: %s\n", ConnectAnswers::kDescription);
    if (negotiation.refused() && refusal.empty()) refusal = negotiation.refusal();
    if (auto context = current_launch_context()) {
      report_paths(negotiation.effective, *context);
      if (auto bound = bind_landlock_ruleset(negotiation.effective, *context)) {
        ::close(bound->ruleset_fd);
        const int denied = open_denied_directory(*bound);
        const uint32_t checks = plan_self_checks(negotiation.effective, *bound, denied, plan::namespaces_of(*plan));
        for (SelfCheck check : kSelfChecksInOrder)
          if (checks & check) std::printf("self-check: after restrict_self the child must fail %s\n", self_check_attempt(check));
        if (!checks) std::printf("self-check: none possible (every control stays asserted)\n");
        if (denied >= 0) ::close(denied);
      } else if (refusal.empty() && negotiation.applies) {
        refusal = bound.error().message;
      }
    } else if (refusal.empty()) {
      refusal = context.error().message;
    }
  }
  if (plan && !plan::confines_filesystem(*plan)) std::printf("filesystem: unconstrained (no document confines it)\n");
  if (plan) {
    if (Status shape = check_plan_shape(*plan); !shape && refusal.empty()) refusal = shape.error().message;
    for (const plan::SeccompProgram* program : plan::programs_for(*plan, kNativeAuditArch))
      std::printf("seccomp %s: %s, %zu instructions: enforced when installed (the kernel verifies it)\n",
                  plan::audit_arch_name(program->audit_arch),
                  program->mode == plan::FilterMode::kRules ? "rules" :
                  program->mode == plan::FilterMode::kFallback ? "fallback rules (installed where a control degrades)" :
                  program->mode == plan::FilterMode::kAllowlist ? "allowlist" : "denylist",
                  program->instructions.size());
    report_process(*plan, refusal);
  }
  if (!refusal.empty()) {
    std::printf("verdict: the launch would be refused: %s\n", refusal.c_str());
    return exit_code::kLauncherError;
  }
  std::printf("verdict: the launch would proceed\n");
  return 0;
}

}  // namespace aasm
