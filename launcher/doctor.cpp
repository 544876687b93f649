#include "doctor.h"

#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "aasm_version.h"
#include "bwrap_exec.h"
#include "launch_report.h"
#include "preparation.h"
#include "base/json_text.h"
#include "kernel/capabilities.h"
#include "kernel/kernel_log.h"
#include "kernel/landlock_rights_text.h"
#include "kernel/namespaces.h"
#include "kernel/seccomp.h"
#include "plan/controls.h"
#include "supervisor/cgroup.h"
#include "supervisor/cgroup_host.h"
#include "supervisor/landlock_audit.h"
#include "supervisor/landlock_negotiation.h"

namespace aasm {
namespace {

constexpr const char* kAvailable = "available";
const char* const kPartial = control_level_name(ControlLevel::kPartial);
constexpr const char* kMissing = "missing";
constexpr const char* kInfo = "info";

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// The rights this host's ABI lacks, each with the ABI and kernel that bring it.
std::vector<std::string> missing_rights(int abi) {
  std::vector<std::string> out;
  for (const landlock::Right& right : landlock::kRights)
    if (right.abi > abi)
      out.push_back(std::string(right.name) + " (ABI " + std::to_string(right.abi) + ", Linux " +
                    kernel_for_landlock_abi(uint32_t(right.abi)) + ")");
  return out;
}

DoctorCheck landlock_check(const landlock::AbiProbe& probe) {
  using landlock::RightKind;
  DoctorCheck c{"landlock", kAvailable, "", "", ""};
  if (probe.abi == 0) {
    c.status = kMissing;
    c.detail = std::string("landlock_create_ruleset: ") + std::strerror(probe.error);
    c.missing = "Landlock (every filesystem, network and scope control)";
    c.remedy = std::string("a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= list; Linux ") +
               kernel_for_landlock_abi(uint32_t(landlock::kLatestAbi)) + " or later for every right";
    return c;
  }
  const std::vector<std::string> errata = landlock::errata_names(probe.errata);
  c.detail = "ABI " + std::to_string(probe.abi) + " (Linux " + kernel_for_landlock_abi(uint32_t(probe.abi)) +
             "), errata fixed: " + (errata.empty() ? std::string("none") : join(errata, "; ")) + "; " +
             landlock::landlock_rights_text(landlock::fs_rights_for_abi(probe.abi),
                                            landlock::net_rights_for_abi(probe.abi), landlock::scopes_for_abi(probe.abi));
  const std::vector<std::string> missing = missing_rights(probe.abi);
  if (!missing.empty()) {
    c.status = kPartial;
    c.missing = join(missing, ", ");
    c.remedy = std::string("Linux ") + kernel_for_landlock_abi(uint32_t(landlock::kLatestAbi)) +
               " or later (Landlock ABI " + std::to_string(landlock::kLatestAbi) +
               "); plans whose controls need these rights are refused here unless isolation.degraded lists their domain";
  }
  return c;
}

DoctorCheck seccomp_check() {
  DoctorCheck c{"seccomp", kAvailable, "", "", ""};
  if (::prctl(PR_GET_SECCOMP) < 0) {
    c.status = kMissing;
    c.detail = std::string("prctl(PR_GET_SECCOMP): ") + std::strerror(errno);
    c.missing = "seccomp filters (every syscall control)";
    c.remedy = "a kernel with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y";
    return c;
  }
  std::vector<std::string> have, lack;
  for (const seccomp::ActionName& a : seccomp::kActionNames) (seccomp::action_available(a.action) ? have : lack).push_back(a.name);
  c.detail = "filters available; actions: " + (have.empty() ? std::string("none answer") : join(have, ","));
  if (!lack.empty()) {
    c.status = kPartial;
    c.missing = "actions " + join(lack, ",") + " (SECCOMP_GET_ACTION_AVAIL refused them)";
    c.remedy = "Linux 5.0 or later (user_notif; kill_process and log since 4.14)";
  }
  return c;
}

// Where the launcher would make the run's group for `controller`, as
// RunCgroup::create decides: v2 where the controller is delegated to its
// cgroup, otherwise v1 where it may create groups.
DoctorCheck cgroup_check(const cgroup::Host& host, const char* controller) {
  DoctorCheck c{std::string("cgroup_") + controller, kAvailable, "", "", ""};
  if (!host.problem.empty()) {
    c.status = kMissing;
    c.detail = host.problem;
    c.missing = std::string("the ") + controller + " controller (" + host.problem + ")";
    c.remedy = "mount /proc and cgroupfs as the kernel provides them";
    return c;
  }
  if (host.v2 && host.v2->usable() && host.v2->has(controller)) {
    c.detail = "cgroup v2 at " + host.v2->mount_point + ": delegated to the launcher's cgroup " + host.v2->own_dir +
               ", groups can be made there; the command starts inside its group (clone3 CLONE_INTO_CGROUP), no "
               "migration";
    return c;
  }
  if (const cgroup::Hierarchy* v1 = host.v1_for(controller); v1 && v1->usable()) {
    c.detail = "cgroup v1 at " + v1->mount_point + ": groups can be made in the launcher's cgroup " + v1->own_dir +
               "; v1 migration cost: one group per hierarchy, and the command moves its own thread into each "
               "(a write to tasks) before it starts (docs/cgroups.md#placing-the-command); v2 would need none, but " +
               cgroup::why_unavailable(host, controller, true, false);
    return c;
  }
  c.status = kMissing;
  c.detail = cgroup::why_unavailable(host, controller);
  c.missing = std::string("a ") + controller + " group the launcher may create (" + c.detail + ")";
  c.remedy = std::string("delegate ") + controller +
             " to the launcher's cgroup v2 (its parent's cgroup.subtree_control lists +" + controller +
             "; systemd: Delegate=yes), or mount the v1 " + controller +
             " hierarchy with a group the launcher may write; a plan that lists resource in isolation.degraded runs with rlimits "
             "instead";
  return c;
}

DoctorCheck user_namespace_check() {
  DoctorCheck c{"user_namespaces", kAvailable, "", "", ""};
  const int error = namespaces::try_user_namespace(::geteuid(), ::getegid());
  if (!error) {
    c.detail = "a user namespace with a mount and a PID namespace in it was made and set up (tried for real)";
    return c;
  }
  const std::string setting = namespaces::user_namespace_restriction();
  c.status = kMissing;
  c.detail = std::string("the trial user namespace failed: ") + std::strerror(error) +
             (setting.empty() ? "" : "; " + setting);
  c.missing = "user namespaces for aasm-launch (isolation.namespaces: user; a view without root)";
  c.remedy = namespaces::kUserNamespaceRemedy;
  return c;
}

// The bubblewrap backend's bwrap, probed as a launch of a bwrap plan probes
// it (bwrap_exec.h). Absent: a fact, not a lack; only plans compiled with
// --backend bwrap use it.
DoctorCheck bwrap_check() {
  DoctorCheck c{"bwrap", kAvailable, std::string(bwrap::kDefaultPath) + " runs plans compiled with --backend bwrap", "", ""};
  if (::access(bwrap::kDefaultPath, F_OK) != 0) {
    c.status = kInfo;
    c.detail = std::string(bwrap::kDefaultPath) + " is absent: only plans compiled with --backend bwrap need it "
               "(Debian's package bubblewrap; aasm-launch --bwrap PATH names another)";
    return c;
  }
  const std::string why = bwrap::probe(bwrap::kDefaultPath, ::geteuid(), ::getegid());
  if (why.empty()) return c;
  c.status = kMissing;
  c.detail = "a launch of a bwrap plan is refused here (125)";
  c.missing = "the bubblewrap backend (plans compiled with --backend bwrap)";
  c.remedy = why;  // the probe's refusal names what is missing and the remedy
  return c;
}

DoctorCheck view_check() {
  DoctorCheck c{control_name(Control::kFilesystemView), kAvailable, "mount_setattr present; the view's mounts can be made", "", ""};
  const std::string why = view_unavailable();
  if (why.empty()) return c;
  c.status = kMissing;
  c.detail = why;
  c.missing = "the filesystem view (filesystem.view)";
  c.remedy = why.find("mount_setattr") != std::string::npos ? "Linux 5.12 or later" : namespaces::kUserNamespaceRemedy;
  return c;
}

std::vector<std::string> capability_names(uint64_t set) {
  std::vector<std::string> out;
  for (int n = 0; n < capabilities::kCount; ++n)
    if (set & (uint64_t(1) << n)) out.push_back(capabilities::name(n));
  return out;
}

DoctorCheck capabilities_check(uint64_t held) {
  DoctorCheck c{control_name(Control::kCapabilities), kInfo, "", "", ""};
  c.detail = "the launcher holds " + capabilities::names(held) +
             ((held >> CAP_SYS_ADMIN) & 1 ? "; with CAP_SYS_ADMIN it builds a view without a user namespace"
                                          : "; a plan can keep only capabilities held here");
  return c;
}

// Which denials a launch can see and name here, without --explain: the
// Landlock audit records and the kernel log's seccomp kill records, probed as
// a launch probes them (supervisor/landlock_audit.h, kernel/kernel_log.h).
DoctorCheck denial_records_check(int landlock_abi) {
  DoctorCheck c{"denial_records", kInfo, "", "", ""};
  landlock_audit::Subscription audit = landlock_audit::subscribe(landlock_abi);
  if (audit.fd >= 0) {
    ::close(audit.fd);
    if (std::optional<std::string> off = landlock_audit::auditing_off()) audit.unavailable = *off;
  }
  c.detail = audit.unavailable.empty() ? "Landlock denials: recorded from the kernel's audit records"
                                       : landlock_audit::unseen_sentence(audit.unavailable);
  const int log = kernel_log::open_at_end();
  if (log >= 0) {
    ::close(log);
    c.detail += "; seccomp kills: named from the kernel log";
  } else {
    c.detail += "; seccomp kills: known from the exit status only: " + kernel_log::unreadable_text(-log);
  }
  return c;
}

// doctor --plan: the plan's launch as a dry run prepares it, reduced to
// whether it would run, under which backend, and why the others would not.
void write_plan(json::Writer& w, const std::string& path, const Preparation& p) {
  w.key("plan").begin_object().key("path").value(path).key("sha256").value(p.report.plan_sha256);
  write_backends(w, p.report);
  w.key("proceed").value(!p.report.refusal);
  w.key("refusal").value(p.report.refusal ? p.report.refusal->error.message : "").end_object();
}

void print_plan(const std::string& path, const Preparation& p) {
  std::printf("plan %s: %s\n", path.c_str(),
              p.report.refusal ? ("the launch would be refused: " + p.report.refusal->error.message).c_str()
                               : "the launch would proceed");
  for (const std::string& line : backend_lines(p.report)) std::printf("  %s\n", line.c_str());
}

void print_json(const Host& host, const std::vector<DoctorCheck>& checks, uint64_t held, bool complete,
                const std::optional<std::string>& plan_path, const std::optional<Preparation>& plan) {
  json::Writer w;
  w.begin_object().key("schema").value("aasm.dev/doctor/v1").key("version").value(kVersion);
  w.key("host").begin_object().key("kernel_release").value(host.kernel_release).key("architecture").value(host.machine).end_object();
  const int abi = host.landlock.abi;
  w.key("landlock").begin_object().key("abi").value(abi).key("errata").value(host.landlock.errata);
  w.key("errata_fixed").strings(landlock::errata_names(host.landlock.errata));
  w.key("fs").strings(landlock::rights_names(landlock::fs_rights_for_abi(abi), landlock::RightKind::kFs));
  w.key("net").strings(landlock::rights_names(landlock::net_rights_for_abi(abi), landlock::RightKind::kNet));
  w.key("scopes").strings(landlock::rights_names(landlock::scopes_for_abi(abi), landlock::RightKind::kScope));
  w.key("missing").strings(missing_rights(abi)).end_object();
  w.key("seccomp_actions").begin_object();
  for (const seccomp::ActionName& a : seccomp::kActionNames) w.key(a.name).value(seccomp::action_available(a.action));
  w.end_object();
  w.key("capabilities_held").strings(capability_names(held));
  w.key("checks").begin_array();
  for (const DoctorCheck& c : checks)
    w.begin_object()
        .key("feature").value(c.feature)
        .key("status").value(c.status)
        .key("detail").value(c.detail)
        .key("missing").value(c.missing)
        .key("remedy").value(c.remedy)
        .end_object();
  w.end_array().key("complete").value(complete);
  if (plan) write_plan(w, *plan_path, *plan);
  w.end_object();
  std::fputs(w.text().c_str(), stdout);
}

void print_text(const Host& host, const std::vector<DoctorCheck>& checks, bool complete) {
  std::printf("aasm-launch %s doctor: what this host can enforce (no plan)\nhost: Linux %s %s\n", kVersion,
              host.kernel_release.c_str(), host.machine.c_str());
  for (const DoctorCheck& c : checks) {
    std::printf("%s: %s: %s\n", c.feature.c_str(), c.status.c_str(), c.detail.c_str());
    if (!c.missing.empty()) std::printf("  missing: %s\n  remedy: %s\n", c.missing.c_str(), c.remedy.c_str());
  }
  std::printf(complete ? "verdict: nothing missing\n"
                       : "verdict: something is missing: plans that need it are refused (or degrade where they may)\n");
}

}  // namespace

std::vector<DoctorCheck> doctor_checks(const Host& host) {
  std::vector<DoctorCheck> checks;
  checks.push_back(landlock_check(host.landlock));
  checks.push_back(seccomp_check());
  const cgroup::Host cgroups = cgroup::discover_host();
  for (const char* controller : {cgroup::kMemory, cgroup::kPids, cgroup::kCpu})
    checks.push_back(cgroup_check(cgroups, controller));
  checks.push_back(user_namespace_check());
  checks.push_back(view_check());
  checks.push_back(bwrap_check());
  checks.push_back(capabilities_check(capabilities::permitted()));
  checks.push_back(denial_records_check(host.landlock.abi));
  return checks;
}

int doctor(bool json, const std::optional<std::string>& plan_path) {
  const Host host = probe_host();
  const std::vector<DoctorCheck> checks = doctor_checks(host);
  bool complete = true;
  for (const DoctorCheck& c : checks) complete = complete && (c.status == kAvailable || c.status == kInfo);
  std::optional<Preparation> plan;
  if (plan_path) {
    LaunchRequest request;
    request.plan_path = *plan_path;
    plan.emplace(prepare(request, host, Exit::kDryRun));
    release(plan->prepared);
  }
  if (json) {
    print_json(host, checks, capabilities::permitted(), complete, plan_path, plan);
  } else {
    print_text(host, checks, complete);
    if (plan) print_plan(*plan_path, *plan);
  }
  return complete && !(plan && plan->report.refusal) ? 0 : 1;
}

}  // namespace aasm
