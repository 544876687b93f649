#include "dry_run.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "exit_codes.h"
#include "preparation.h"
#include "self_checks.h"
#include "kernel/arch.h"
#include "supervisor/cgroup.h"
#include "supervisor/path_binding.h"

namespace aasm {
namespace {

bool seccomp_action_available(uint32_t action) {
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

void print_host(const Host& host) {
  const int abi = host.landlock.abi;
  std::printf("host: Linux %s %s; Landlock ABI %d%s; seccomp filters %s (kill_process %s, errno %s, log %s)\n",
              host.kernel_release.c_str(), host.machine.c_str(), abi, abi ? "" : " (none)",
              ::prctl(PR_GET_SECCOMP) >= 0 ? "available" : "unavailable",
              seccomp_action_available(SECCOMP_RET_KILL_PROCESS) ? "yes" : "no",
              seccomp_action_available(SECCOMP_RET_ERRNO) ? "yes" : "no",
              seccomp_action_available(SECCOMP_RET_LOG) ? "yes" : "no");
}

void print_controls(const LaunchReport& report, const plan::Plan& plan) {
  std::printf("controls (requested / planned / achievable here):\n");
  for (const ControlReport& c : report.controls)
    std::printf("  %-16s %s / %s / %s%s%s\n", control_name(c.control), c.requested.c_str(), planned_text(c.planned),
                control_level_name(c.achievable), c.why.empty() ? "" : ": ", c.why.c_str());
  for (plan::ControlDomain verb : plan::unconstrained_filesystem_verbs(plan))
    std::printf("  %-16s unconstrained: no document constrains it\n", plan::control_domain_name(verb));
  if (!plan::confines_filesystem(plan)) std::printf("filesystem: unconstrained (no document confines it)\n");
}

// Every rule path as it resolves here, missing ones too (the preparation
// stops binding at the first).
void print_paths(const plan::LandlockRuleset& ruleset) {
  auto context = current_launch_context();
  if (!context) return;
  std::printf("paths on this host (receipts record the templates, not these):\n");
  for (const plan::LandlockRule& rule : ruleset.rules) {
    const std::string text = rule_template(rule);
    const bool optional = rule.flags & plan::kRuleOptional;
    auto path = expand_rule_path(rule, *context);
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

// The filesystem view's mounts: the plan's trees and the view's own.
void print_view(const LaunchReport& report) {
  if (report.view.empty()) return;
  const bool built = std::none_of(report.controls.begin(), report.controls.end(), [](const ControlReport& c) {
    return c.control == Control::kFilesystemView && c.achievable == ControlLevel::kNotEnforced;
  });
  std::printf(built ? "filesystem view (the command's root: nothing else of the host exists there):\n"
                    : "filesystem view: NOT built here (it degraded; the command sees the host's filesystem, "
                      "confined by Landlock alone):\n");
  for (const ViewMount& m : report.view)
    std::printf("  %s: %s (%s)%s\n", m.path.c_str(), m.what.c_str(), m.options.c_str(),
                m.status == "bound" ? "" : (", " + m.status).c_str());
}

void print_self_checks(const Prepared& prepared) {
  if (prepared.ruleset_fd < 0) return;
  for (SelfCheck check : kSelfChecksInOrder)
    if (prepared.self_checks & check)
      std::printf("self-check: after restrict_self the child must fail %s\n", self_check_attempt(check));
  if (!prepared.self_checks) std::printf("self-check: none possible (every control stays asserted)\n");
}

const char* mode_text(plan::FilterMode mode) {
  switch (mode) {
    case plan::FilterMode::kRules: return "rules";
    case plan::FilterMode::kFallback: return "fallback rules (installed where a control degrades)";
    case plan::FilterMode::kAllowlist: return "allowlist";
    case plan::FilterMode::kDenylist: return "denylist";
  }
  return "?";
}

void print_seccomp(const plan::Plan& plan) {
  for (const plan::SeccompProgram* program : plan::programs_for(plan, kNativeAuditArch))
    std::printf("seccomp %s: %s, %zu instructions: enforced when installed (the kernel verifies it)\n",
                plan::audit_arch_name(program->audit_arch), mode_text(program->mode), program->instructions.size());
}

void print_cgroup_host(const plan::Plan& plan) {
  if (plan.process && plan.process->has_tree_limits())
    std::printf("cgroups on this host (the run's cgroup is created beneath the launcher's):\n%s",
                cgroup::describe_host_support().c_str());
}

// What the preparation holds open or created, let go: nothing runs.
void release(Prepared& prepared) {
  for (int fd : {prepared.ruleset_fd, prepared.denied_dir_fd})
    if (fd >= 0) ::close(fd);
  if (prepared.cgroup) prepared.cgroup->kill_and_remove({std::chrono::milliseconds(5000), cgroup::Reap::kNone});
}

}  // namespace

int dry_run(const LaunchRequest& request) {
  Preparation preparation = prepare(request, probe_host(), Exit::kDryRun);
  const LaunchReport& report = preparation.report;
  if (report.plan_sha256.empty()) {
    std::printf("verdict: refused: %s\n", report.refusal->error.message.c_str());
    return exit_code::kLauncherError;
  }
  std::printf("plan: %s sha256 %s\n", request.plan_path.c_str(), report.plan_sha256.c_str());
  print_host(report.host);
  if (preparation.plan_decoded) {
    const plan::Plan& plan = preparation.prepared.plan;
    print_controls(report, plan);
    if (preparation.prepared.negotiation) print_paths(preparation.prepared.negotiation->effective);
    print_view(report);
    print_self_checks(preparation.prepared);
    if (preparation.prepared.connect_answers) std::printf("network: %s\n", ConnectAnswers::kDescription);
    print_seccomp(plan);
    print_cgroup_host(plan);
  }
  release(preparation.prepared);
  if (report.refusal) {
    std::printf("verdict: the launch would be refused: %s\n", report.refusal->error.message.c_str());
    return exit_code::kLauncherError;
  }
  std::printf("verdict: the launch would proceed\n");
  return 0;
}

}  // namespace aasm
