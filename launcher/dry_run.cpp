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
#include "base/json_text.h"
#include "preparation.h"
#include "self_checks.h"
#include "kernel/arch.h"
#include "kernel/seccomp.h"
#include "supervisor/cgroup.h"
#include "supervisor/path_binding.h"

namespace aasm {
namespace {

// The filter actions the dry run reports available or not (by seccomp::kActionNames' names).
constexpr uint32_t kDryRunActions[] = {SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO, SECCOMP_RET_LOG};

void print_host(const Host& host) {
  const int abi = host.landlock.abi;
  std::string actions;  // "kill_process yes, errno yes, log yes"
  for (const uint32_t action : kDryRunActions)
    actions += std::string(actions.empty() ? "" : ", ") + seccomp::action_name(action) +
               (seccomp::action_available(action) ? " yes" : " no");
  std::printf("host: Linux %s %s; Landlock ABI %d%s; seccomp filters %s (%s)\n", host.kernel_release.c_str(),
              host.machine.c_str(), abi, abi ? "" : " (none)", ::prctl(PR_GET_SECCOMP) >= 0 ? "available" : "unavailable",
              actions.c_str());
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

// One rule path as it resolves here: `resolved` empty where it does not.
struct PathHere {
  std::string rule_template;
  std::string resolved;
  std::string status;  // "" when it resolves; else why not and what that does
};

// Every rule path as it resolves here, missing ones too (the preparation
// stops binding at the first).
std::vector<PathHere> paths_here(const plan::LandlockRuleset& ruleset) {
  std::vector<PathHere> out;
  auto context = current_launch_context();
  if (!context) return out;
  for (const plan::LandlockRule& rule : ruleset.rules) {
    PathHere here{rule_template(rule), "", ""};
    const bool optional = rule.flags & plan::kRuleOptional;
    auto path = expand_rule_path(rule, *context);
    if (!path) {
      here.status = path.error().message;
    } else if (const int fd = ::open(path->c_str(), O_PATH | O_CLOEXEC); fd < 0) {
      here.resolved = *path;
      here.status = std::string("missing (") +
                    (optional ? "optional: its rule is skipped" : "required: the launch is refused") + ")";
    } else {
      here.resolved = resolved_path(fd, *path);
      ::close(fd);
    }
    out.push_back(std::move(here));
  }
  return out;
}

void print_paths(const std::vector<PathHere>& paths) {
  if (paths.empty()) return;
  std::printf("paths on this host (receipts record the templates, not these):\n");
  for (const PathHere& p : paths) {
    if (p.resolved.empty())
      std::printf("  %s: %s\n", p.rule_template.c_str(), p.status.c_str());
    else if (!p.status.empty())
      std::printf("  %s -> %s: %s\n", p.rule_template.c_str(), p.resolved.c_str(), p.status.c_str());
    else
      std::printf("  %s -> %s\n", p.rule_template.c_str(), p.resolved.c_str());
  }
}

// The filesystem view's mounts: the plan's trees and the view's own.
bool view_built(const LaunchReport& report) {
  return std::none_of(report.controls.begin(), report.controls.end(), [](const ControlReport& c) {
    return c.control == Control::kFilesystemView && c.achievable == ControlLevel::kNotEnforced;
  });
}

void print_view(const LaunchReport& report) {
  if (report.view.empty()) return;
  const bool built = view_built(report);
  std::printf(built ? "filesystem view (the command's root: nothing else of the host exists there):\n"
                    : "filesystem view: NOT built here (it degraded; the command sees the host's filesystem, "
                      "confined by Landlock alone):\n");
  for (const ViewMount& m : report.view)  // a link not followed has no mount, so no options
    std::printf("  %s: %s%s%s\n", m.path.c_str(), m.what.c_str(), m.options.empty() ? "" : (" (" + m.options + ")").c_str(),
                m.status == "bound" ? "" : (", " + m.status).c_str());
}

// The plan's pins, one line each, as re-hashed here.
void print_pins(const LaunchReport& report) {
  if (report.pins.empty()) return;
  std::printf("pinned files (re-hashed here):\n");
  for (const PinCheck& pin : report.pins)
    std::printf("  %s: %s\n", plan::pinned_text(pin.planned).c_str(), pin.status().c_str());
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
  if (plan::has_tree_limits(plan))
    std::printf("cgroups on this host (the run's cgroup is created beneath the launcher's):\n%s",
                cgroup::describe_host_support().c_str());
}

// The same report as one JSON document (schemas/dry-run.schema.json), each
// part from what the text's printers print.
void write_host(json::Writer& w, const Host& host) {
  w.key("host").begin_object();
  w.key("kernel_release").value(host.kernel_release).key("architecture").value(host.machine);
  w.key("landlock_abi").value(host.landlock.abi).key("seccomp_filters").value(::prctl(PR_GET_SECCOMP) >= 0);
  w.key("seccomp_actions").begin_object();
  for (const uint32_t action : kDryRunActions) w.key(seccomp::action_name(action)).value(seccomp::action_available(action));
  w.end_object().end_object();
}

void write_plan_parts(json::Writer& w, const Preparation& preparation) {
  const LaunchReport& report = preparation.report;
  const Prepared& prepared = preparation.prepared;
  const plan::Plan& plan = prepared.plan;
  w.key("controls").begin_array();
  for (const ControlReport& c : report.controls)
    w.begin_object().key("domain").value(control_name(c.control)).key("requested").value(c.requested)
        .key("planned").value(planned_text(c.planned)).key("achievable").value(control_level_name(c.achievable))
        .key("why").value(c.why).end_object();
  w.end_array();
  w.key("unconstrained").begin_array();
  for (plan::ControlDomain verb : plan::unconstrained_filesystem_verbs(plan)) w.value(plan::control_domain_name(verb));
  w.end_array().key("filesystem_confined").value(plan::confines_filesystem(plan));
  w.key("paths").begin_array();
  if (prepared.negotiation)
    for (const PathHere& p : paths_here(prepared.negotiation->effective))
      w.begin_object().key("template").value(p.rule_template).key("resolved").value(p.resolved)
          .key("status").value(p.status).end_object();
  w.end_array();
  w.key("view").begin_object().key("built").value(!report.view.empty() && view_built(report)).key("mounts").begin_array();
  for (const ViewMount& m : report.view)
    w.begin_object().key("path").value(m.path).key("what").value(m.what).key("options").value(m.options)
        .key("status").value(m.status).end_object();
  w.end_array().end_object();
  w.key("pinned").begin_array();
  for (const PinCheck& pin : report.pins)
    w.begin_object().key("path").value(pin.planned.path).key("sha256").value(plan::identity_text(pin.planned.sha256))
        .key("size").value(pin.planned.size).key("status").value(pin.status()).end_object();
  w.end_array();
  w.key("self_checks").begin_array();
  if (prepared.ruleset_fd >= 0)
    for (SelfCheck check : kSelfChecksInOrder)
      if (prepared.self_checks & check) w.value(self_check_attempt(check));
  w.end_array();
  w.key("network").value(prepared.connect_answers ? ConnectAnswers::kDescription : "");
  w.key("seccomp").begin_array();
  for (const plan::SeccompProgram* program : plan::programs_for(plan, kNativeAuditArch))
    w.begin_object().key("architecture").value(plan::audit_arch_name(program->audit_arch))
        .key("mode").value(mode_text(program->mode)).key("instructions").value(uint64_t(program->instructions.size()))
        .end_object();
  w.end_array();
  w.key("cgroups").value(plan::has_tree_limits(plan) ? cgroup::describe_host_support() : "");
}

int dry_run_json(const LaunchRequest& request, Preparation& preparation) {
  const LaunchReport& report = preparation.report;
  json::Writer w;
  w.begin_object().key("schema").value("aasm.dev/dry-run/v1").key("plan").value(request.plan_path);
  w.key("plan_sha256").value(report.plan_sha256);
  if (!report.plan_sha256.empty()) write_host(w, report.host);
  if (!report.plan_sha256.empty()) write_backends(w, report);
  if (!report.plan_sha256.empty() && preparation.plan_decoded) write_plan_parts(w, preparation);
  release(preparation.prepared);
  w.key("verdict").begin_object().key("proceed").value(!report.refusal);
  w.key("refusal").value(report.refusal ? report.refusal->error.message : "").end_object().end_object();
  std::fputs(w.text().c_str(), stdout);
  return report.refusal ? exit_code::kLauncherError : 0;
}

}  // namespace

int dry_run(const LaunchRequest& request, bool json) {
  Preparation preparation = prepare(request, probe_host(), Exit::kDryRun);
  if (json) return dry_run_json(request, preparation);
  const LaunchReport& report = preparation.report;
  if (report.plan_sha256.empty()) {
    std::printf("verdict: refused: %s\n", report.refusal->error.message.c_str());
    return exit_code::kLauncherError;
  }
  std::printf("plan: %s sha256 %s\n", request.plan_path.c_str(), report.plan_sha256.c_str());
  print_host(report.host);
  for (const std::string& line : backend_lines(report)) std::printf("%s\n", line.c_str());
  if (preparation.plan_decoded) {
    const plan::Plan& plan = preparation.prepared.plan;
    print_controls(report, plan);
    if (preparation.prepared.negotiation) print_paths(paths_here(preparation.prepared.negotiation->effective));
    print_view(report);
    print_pins(report);
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
