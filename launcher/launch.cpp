#include "launch.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <new>
#include <optional>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "command_path.h"
#include "exit_codes.h"
#include "self_checks.h"
#include "kernel/arch.h"
#include "kernel/capabilities.h"
#include "kernel/descriptors.h"
#include "kernel/rlimits.h"
#include "kernel/landlock.h"
#include "kernel/seccomp.h"
#include "plan/plan.h"
#include "kernel/landlock_uapi.h"
#include "kernel/namespaces.h"
#include "kernel/raw_syscall.h"
#include "kernel/signals.h"
#include "kernel/spawn.h"
#include "supervisor/landlock_negotiation.h"
#include "supervisor/path_binding.h"
#include "supervisor/cgroup.h"
#include "supervisor/environment.h"
#include "supervisor/janitor.h"
#include "supervisor/receipt.h"
#include "supervisor/supervise.h"

extern char** environ;

namespace aasm {
namespace {

int refuse(const std::string& message) {
  std::fprintf(stderr, "aasm-launch: error: %s\n", message.c_str());
  return exit_code::kLauncherError;
}

// What the child reports when a step before or at exec fails. It lives in
// memory the supervisor shares with the child, so the child reports with a
// plain store, without a system call its own seccomp filter might forbid; a
// successful exec leaves it zero.
enum class ChildStage : uint32_t {
  kNone, kCgroup, kSignals, kSession, kParentGone, kDescriptors, kResourceLimits, kNamespaces, kCapabilities, kNoNewPrivs, kLandlock,
  kSelfCheck, kSeccomp, kExec
};

// Steps the child completed, stored before exec: the receipt's "measured".
enum ChildDone : uint32_t {
  kLandlockRestricted = 1u << 0,
  kSeccompInstalled = 1u << 2,
  kNamespacesReady = 1u << 3,
  kCapabilitiesDropped = 1u << 4,
  kResourceLimitsSet = 1u << 5,
  // and the SelfCheck bits (self_checks.h) of the checks the ruleset passed
};

struct ChildReport {
  std::atomic<uint32_t> stage;
  std::atomic<int32_t> error;
  std::atomic<uint32_t> done;
  std::atomic<uint32_t> failed_check;  // kSelfCheck: the SelfCheck that was not refused
};

const char* stage_name(ChildStage stage) {
  switch (stage) {
    case ChildStage::kNone: return "none";
    case ChildStage::kCgroup: return "moving into the run's cgroup";
    case ChildStage::kSignals: return "resetting signal dispositions";
    case ChildStage::kSession: return "new session";
    case ChildStage::kParentGone: return "parent-death check";
    case ChildStage::kDescriptors: return "closing inherited descriptors";
    case ChildStage::kResourceLimits: return "resource limits";
    case ChildStage::kNamespaces: return "setting up the new namespaces (user id maps, private mounts)";
    case ChildStage::kCapabilities: return "dropping capabilities";
    case ChildStage::kNoNewPrivs: return "no_new_privs";
    case ChildStage::kLandlock: return "landlock_restrict_self";
    case ChildStage::kSelfCheck: return "Landlock self-check";
    case ChildStage::kSeccomp: return "seccomp filter";
    case ChildStage::kExec: return "execve";
  }
  return "?";
}

struct Prepared {
  plan::Plan plan;
  std::string executable;
  int ruleset_fd = -1;
  int denied_dir_fd = -1;  // for the read and write self-checks; -1: no read right handled, or no candidate
  uint32_t self_checks = 0;  // SelfCheck bits: the checks the child runs after restrict_self
  std::optional<cgroup::RunCgroup> cgroup;  // the run's, when the plan sets tree limits the host can give
  std::string no_cgroup_because;  // set when tree limits fall back to per-process rlimits (resource may degrade)
  std::vector<std::string> environment;  // the command's, built before fork
  std::vector<char*> envp;
  std::vector<seccomp::PreparedFilter> filters;  // in install order: rule filters, the main one last
  // For the receipt.
  std::string plan_sha256;
  int landlock_abi = 0;
  std::optional<LandlockNegotiation> negotiation;
  std::vector<BoundPath> paths;
  bool signals_by_pid_namespace = false;  // scope_signals_by_pid_namespace
};

int child_exit_code(ChildStage stage, int error) {
  if (stage != ChildStage::kExec) return exit_code::kLauncherError;
  return error == ENOENT ? exit_code::kNotFound : exit_code::kCannotExecute;
}

[[noreturn]] void child_fail(ChildReport* report, ChildStage stage, int error) {
  report->error.store(error);
  report->stage.store(uint32_t(stage));
  _exit(child_exit_code(stage, error));
}

// What the child needs besides the prepared plan: its ends of the output
// pipes, the signal mask to restore, and how to check that the supervisor
// is still there.
struct ChildIo {
  int stdout_write = -1, stderr_write = -1;
  std::vector<int> cgroup_procs;  // v1: the run's groups' tasks files, to move itself in
  pid_t supervisor = -1;
  int supervisor_pidfd = -1;      // readable once the supervisor has exited
  uint64_t ignored_signals = 0;   // dispositions to reset (kernel/signals.h)
  uid_t uid = 0;
  gid_t gid = 0;
  sigset_t original_mask;
};

struct ChildStart {
  Prepared* prepared;
  char* const* argv;
  ChildReport* report;
  const ChildIo* io;
};

bool supervisor_gone(int pidfd) {
  pollfd exited{pidfd, POLLIN, 0};
  return ::poll(&exited, 1, 0) != 0;
}

// Proof, before exec, that each control is enforced (self_checks.h).
void run_self_checks(const Prepared& prepared, ChildReport* report, const ChildIo& io) {
  const SelfCheckTarget target{prepared.denied_dir_fd, io.supervisor};
  for (SelfCheck check : kSelfChecksInOrder) {
    if (!(prepared.self_checks & check)) continue;
    const landlock::self_check::Result result = run_self_check(check, target);
    if (result.outcome == landlock::self_check::Outcome::kNotRefused) {
      report->failed_check.store(check);
      // EPERM stands for "it succeeded", which has no errno of its own.
      child_fail(report, ChildStage::kSelfCheck, result.error ? result.error : EPERM);
    }
    if (result.outcome == landlock::self_check::Outcome::kRefused) report->done.fetch_or(check);
  }
}

// Runs in the new process, which shares the supervisor's memory until it
// execs (kernel/spawn.h). In this order (docs/cli.md says why each step
// comes where it does).
[[noreturn]] void run_child(Prepared& prepared, char* const argv[], ChildReport* report, const ChildIo& io) {
  // Into the run's cgroup first, so everything this process does and starts
  // is counted there (on v2 the clone already put it there).
  if (int error = cgroup::place_self(io.cgroup_procs.data(), io.cgroup_procs.size()))
    child_fail(report, ChildStage::kCgroup, error);
  // A new session: no controlling terminal, so TIOCSTI has no terminal of
  // the user's to type into, and the tree is one process group to signal.
  if (::setsid() < 0) child_fail(report, ChildStage::kSession, errno);
  // Die with the supervisor; re-check in case it died before prctl took
  // effect (in a new PID namespace getppid() is 0: there, through its pidfd).
  const uint32_t fresh = plan::namespaces_of(prepared.plan);
  const bool parent_gone = (fresh & plan::kNamespacePid) ? supervisor_gone(io.supervisor_pidfd) : ::getppid() != io.supervisor;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || parent_gone) child_fail(report, ChildStage::kParentGone, ESRCH);
  if (int error = namespaces::finish_in_child(fresh, io.uid, io.gid)) child_fail(report, ChildStage::kNamespaces, error);
  report->done.fetch_or(kNamespacesReady);
  if ((io.stdout_write >= 0 && ::dup2(io.stdout_write, STDOUT_FILENO) < 0) ||
      (io.stderr_write >= 0 && ::dup2(io.stderr_write, STDERR_FILENO) < 0))
    child_fail(report, ChildStage::kDescriptors, errno);
  // Nothing the launcher inherited reaches the command but 0-2.
  if (int error = descriptors::close_inherited(prepared.ruleset_fd, prepared.denied_dir_fd))
    child_fail(report, ChildStage::kDescriptors, error);
  const rlimits::TreeLimits tree =
      prepared.no_cgroup_because.empty() ? rlimits::TreeLimits::kCgroup : rlimits::TreeLimits::kPerProcessStandIns;
  if (int error = rlimits::apply(prepared.plan.process ? &*prepared.plan.process : nullptr, tree))
    child_fail(report, ChildStage::kResourceLimits, error);
  report->done.fetch_or(kResourceLimitsSet);
  // Every capability goes but those the plan keeps: a root command with
  // CAP_SYS_PTRACE would still read other processes' /proc files under
  // Landlock. Before no_new_privs and Landlock, which need none of them.
  if (int error = capabilities::restrict_to(plan::kept_capabilities_of(prepared.plan))) child_fail(report, ChildStage::kCapabilities, error);
  report->done.fetch_or(kCapabilitiesDropped);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(report, ChildStage::kNoNewPrivs, errno);
  if (prepared.ruleset_fd >= 0) {
    if (int error = landlock::restrict_self(prepared.ruleset_fd)) child_fail(report, ChildStage::kLandlock, error);
    report->done.fetch_or(kLandlockRestricted);
    ::close(prepared.ruleset_fd);
    run_self_checks(prepared, report, io);
    if (prepared.denied_dir_fd >= 0) ::close(prepared.denied_dir_fd);
  }
  // The janitor exists before the command can run (and before the filters,
  // which need not allow the futex this waits on).
  spawn::await_supervisor();
  // Every signal the supervisor ignores back to its default (it holds no
  // handlers, and exec keeps only ignored dispositions), then the mask the
  // launcher started with: every signal stayed blocked until now, since the
  // clone. The supervisor read its ignored set while this child confined
  // itself.
  if (int error = signals::reset_to_default(io.ignored_signals)) child_fail(report, ChildStage::kSignals, error);
  ::sigprocmask(SIG_SETMASK, &io.original_mask, nullptr);
  // The filters last: nothing after them needs a system call but execve.
  for (seccomp::PreparedFilter& filter : prepared.filters)
    if (int error = seccomp::install(filter)) child_fail(report, ChildStage::kSeccomp, error);
  if (!prepared.filters.empty()) report->done.fetch_or(kSeccompInstalled);
  child_fail(report, ChildStage::kExec, spawn::exec(prepared.executable.c_str(), argv, prepared.envp.data()));
}

int child_entry(void* argument) {
  const ChildStart& start = *static_cast<const ChildStart*>(argument);
  run_child(*start.prepared, start.argv, start.report, *start.io);
}

Result<plan::Plan> load_verified_plan(const LaunchRequest& request, std::string& digest) {
  auto bytes = plan::read_plan_file(request.plan_path);
  if (!bytes) return bytes.error();
  auto decoded = plan::decode_plan(*bytes);
  if (!decoded) return make_error(request.plan_path + ": " + decoded.error().message);
  digest = to_hex(plan::plan_digest(*bytes));
  if (request.expect_digest && digest != *request.expect_digest)
    return make_error(request.plan_path + ": digest " + digest + " is not the expected " + *request.expect_digest);
  return decoded;
}

// Limits of the whole tree (memory, tasks, CPU) go into the run's cgroup,
// created beneath the launcher's own. Without one the launch is refused, or,
// where the plan lets the resource domain degrade, runs with per-process
// stand-ins (said).
Status create_run_cgroup(Prepared& prepared) {
  if (!prepared.plan.process || !prepared.plan.process->has_tree_limits()) return Ok{};
  const plan::ProcessSettings& p = *prepared.plan.process;
  cgroup::Limits limits{p.memory, p.swap, p.pids, p.cpu_millicores};
  auto created = cgroup::RunCgroup::create(limits, "aasm-" + std::to_string(::getpid()));
  if (created) {
    prepared.cgroup = std::move(*created);
    return Ok{};
  }
  const std::string what = "resource: " + created.error().message;
  if (!(p.flags & plan::kProcessResourceDegradable))
    return make_error(what + " (or list resource in isolation.degraded to run with per-process stand-ins)");
  prepared.no_cgroup_because = created.error().message;
  std::fprintf(stderr,
               "aasm-launch: note: %s; isolation.degraded permits running with per-process rlimits instead "
               "(RLIMIT_AS for memory, RLIMIT_NPROC for tasks; swap and cpu not enforced): partial\n",
               what.c_str());
  return Ok{};
}

Result<Prepared> prepare(const LaunchRequest& request, int& lookup_errno) {
  std::string digest;
  auto plan = load_verified_plan(request, digest);
  if (!plan) return plan.error();
  if (Status shape = check_plan_shape(*plan); !shape) return shape.error();
  std::optional<LandlockNegotiation> negotiation;
  const landlock::AbiProbe probe = plan->landlock ? landlock::probe_abi() : landlock::AbiProbe{};
  const bool signals_by_pid_namespace = scope_signals_by_pid_namespace(*plan, probe);
  if (plan->landlock) {
    negotiation = negotiate_landlock(*plan->landlock, probe);
    if (negotiation->refused()) return make_error(negotiation->refusal());
    for (const ControlOutcome& c : negotiation->controls)
      if (c.level != ControlLevel::kEnforced)
        std::fprintf(stderr, "aasm-launch: note: %s is %s here: %s\n", plan::control_domain_name(c.control.domain),
                     control_level_name(c.level), c.why.c_str());
  }
  if (signals_by_pid_namespace) {
    const uint32_t signal_abi = landlock::abi_floor(0, 0, landlock::scope::kSignal);
    std::fprintf(stderr, "aasm-launch: note: ipc: signals are scoped by a new PID namespace (Landlock ABI %d here "
                         "has no signal scope; ABI %u, Linux %s, has)\n",
                 probe.abi, signal_abi, kernel_for_landlock_abi(signal_abi));
  }
  auto executable = find_command(request.command.front(), lookup_errno);
  if (!executable) return executable.error();

  Prepared prepared;
  prepared.plan = std::move(*plan);
  prepared.executable = std::move(*executable);
  prepared.plan_sha256 = digest;
  prepared.landlock_abi = probe.abi;
  prepared.negotiation = negotiation;
  prepared.signals_by_pid_namespace = signals_by_pid_namespace;
  if (negotiation && negotiation->applies) {
    auto context = current_launch_context();
    if (!context) return context.error();
    auto bound = bind_landlock_ruleset(negotiation->effective, *context,
                                       request.receipt_path ? ResolvedPaths::kRecord : ResolvedPaths::kSkip);
    if (!bound) return bound.error();
    prepared.ruleset_fd = bound->ruleset_fd;
    prepared.paths = bound->granted;
    if (negotiation->effective.handled_fs & landlock::fs::kReadDir) prepared.denied_dir_fd = open_denied_directory(*bound);
    prepared.self_checks =
        plan_self_checks(negotiation->effective, *bound, prepared.denied_dir_fd, plan::namespaces_of(prepared.plan));
    for (const std::string& path : bound->skipped_optional)
      std::fprintf(stderr, "aasm-launch: note: optional path '%s' does not exist here; its rule is skipped\n",
                   path.c_str());
  }
  const bool fallback = negotiation && negotiation->needs_seccomp_fallback();
  for (const plan::SeccompProgram* program : plan::programs_for(prepared.plan, kNativeAuditArch))
    if (program->mode != plan::FilterMode::kFallback || fallback) prepared.filters.push_back(seccomp::prepare(*program));
  if (Status kept = check_kept_capabilities(prepared.plan); !kept) return kept.error();
  if (Status tree = create_run_cgroup(prepared); !tree) return tree.error();
  prepared.environment = build_environment(prepared.plan.process ? &*prepared.plan.process : nullptr, environ);
  for (std::string& variable : prepared.environment) prepared.envp.push_back(variable.data());
  prepared.envp.push_back(nullptr);
  return prepared;
}

SupervisionLimits supervision_limits(const plan::Plan& plan) {
  if (!plan.process) return {};
  return {plan.process->wall_clock_seconds, plan.process->stdout_bytes, plan.process->stderr_bytes};
}

std::string ending_description(Ending ending, const SupervisionLimits& limits) {
  switch (ending) {
    case Ending::kDeadline: return "wall-clock limit of " + std::to_string(*limits.wall_clock_seconds) + "s";
    case Ending::kStdoutLimit: return "stdout limit of " + std::to_string(*limits.stdout_bytes) + " bytes";
    case Ending::kStderrLimit: return "stderr limit of " + std::to_string(*limits.stderr_bytes) + " bytes";
    case Ending::kExited: break;
  }
  return "?";
}

// What the run's cgroup saw, and whether its end was proven.
struct RunReport {
  std::vector<std::string> events;  // OOM kills, task-limit hits: from the kernel's counters
  bool cleanup_complete = true;
  std::string cleanup = "complete";
};

// Requested, planned and achieved per control, each achieved level with its
// basis: only what this launch measured is called enforced.
Receipt make_receipt(const Prepared& prepared, uint32_t done, const std::string& outcome, int code,
                     const RunReport& run) {
  Receipt r;
  r.plan_sha256 = prepared.plan_sha256;
  utsname host{};
  ::uname(&host);
  r.kernel_release = host.release;
  r.architecture = plan::audit_arch_name(kNativeAuditArch);
  r.landlock_abi = prepared.landlock_abi;
  const bool restricted = done & kLandlockRestricted;
  if (prepared.negotiation)
    for (const ControlOutcome& c : prepared.negotiation->controls) {
      ReceiptControl rc{plan::control_domain_name(c.control.domain), control_rights_text(c.control),
                        c.control.flags & plan::kControlDegradable ? "enforce, may degrade" : "enforce, required", "", ""};
      if (c.level == ControlLevel::kNotEnforced) {
        rc.achieved = "not enforced";
        rc.basis = "asserted: " + c.why;
      } else if (!restricted) {
        rc.achieved = "not established";
        rc.basis = "measured: the child stopped before landlock_restrict_self";
      } else {
        rc.achieved = control_level_name(c.level);
        rc.basis = self_check_basis(c.control, done) + (c.why.empty() ? "" : "; " + c.why);
      }
      r.controls.push_back(std::move(rc));
    }
  if (prepared.signals_by_pid_namespace) {
    const bool ready = done & kNamespacesReady;
    r.controls.push_back({"ipc", "signals scoped to the command's tree", "enforce, required",
                          ready ? "enforced" : "not established",
                          ready ? "measured: the command's process was created in a new PID namespace (clone returned "
                                  "its pid), where no process outside its tree has a pid"
                                : "measured: the child stopped before its namespaces were set up"});
  }
  if (!prepared.filters.empty()) {
    const bool installed = done & kSeccompInstalled;
    r.controls.push_back({"syscall", std::to_string(prepared.filters.size()) + " seccomp programs for " + r.architecture,
                          "enforce, required", installed ? "enforced" : "not established",
                          installed ? "measured: seccomp(SECCOMP_SET_MODE_FILTER) returned 0 for every program"
                                    : "measured: the child stopped before the filters were installed"});
  }
  const uint32_t fresh = plan::namespaces_of(prepared.plan);
  if (fresh) {
    const bool ready = done & kNamespacesReady;
    r.controls.push_back({"namespaces", namespaces::names(fresh), "enforce, required", ready ? "enforced" : "not established",
                          ready ? "measured: the command's process was created in them (clone returned its pid)" +
                                      std::string(fresh & plan::kNamespaceUser ? "; its user namespace's id maps were written" : "") +
                                      (fresh & plan::kNamespaceMount ? "; its mounts were made private" : "")
                                : "measured: the child stopped before its namespaces were set up"});
  }
  const bool dropped = done & kCapabilitiesDropped;
  const uint64_t kept = plan::kept_capabilities_of(prepared.plan);
  r.controls.push_back({"capabilities", kept ? "kept: " + capabilities::names(kept) : "none kept", "enforce, required",
                        dropped ? "enforced" : "not established",
                        !dropped ? "measured: the child stopped before dropping its capabilities"
                        : kept   ? "measured: every other capability dropped from the bounding set, the kept ones set "
                                   "as effective, permitted, inheritable and ambient, the securebits locked; every call "
                                   "returned 0"
                                 : "measured: the ambient set cleared, the bounding set emptied, the securebits locked and "
                                   "capset to empty sets returned 0"});
  for (const BoundPath& path : prepared.paths)
    r.paths.push_back({path.rule_template,
                       path.resolved.empty() ? "" : to_hex(sha256({reinterpret_cast<const uint8_t*>(path.resolved.data()), path.resolved.size()})),
                       path.identity ? "bound" : "skipped (optional, missing)"});
  if (prepared.plan.process) {
    const plan::ProcessSettings& p = *prepared.plan.process;
    if (p.has_tree_limits()) {
      std::string read_back;
      if (prepared.cgroup)
        for (const cgroup::Knob& knob : prepared.cgroup->knobs()) read_back += " " + knob.path + "=" + knob.read_back + ";";
      std::string requested;
      const auto add = [&requested](const char* name, const std::optional<uint64_t>& value, const char* unit) {
        if (value) requested += (requested.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(*value) + unit;
      };
      add("memory", p.memory, " bytes");
      add("swap", p.swap, " bytes");
      add("pids", p.pids, "");
      add("cpu", p.cpu_millicores, " millicores");
      const char* planned = p.flags & plan::kProcessResourceDegradable ? "enforce, may degrade" : "enforce, required";
      if (prepared.cgroup) {
        r.controls.push_back({"resource", requested + " for the whole tree", planned, "enforced",
                              "measured: the kernel read back" + read_back});
      } else if (!(done & kResourceLimitsSet)) {
        r.controls.push_back({"resource", requested + " for the whole tree", planned, "not established",
                              "measured: the child stopped before its resource limits"});
      } else {
        std::string stand_ins;
        if (p.memory) stand_ins += " RLIMIT_AS=" + std::to_string(*p.memory) + " (each process, not the tree);";
        if (p.pids)
          stand_ins += " RLIMIT_NPROC=" + std::to_string(*p.pids) + " (every process of the user" +
                       (::geteuid() == 0 ? "; root is exempt, so not enforced here)" : ")") + ";";
        if (p.swap) stand_ins += " swap not enforced;";
        if (p.cpu_millicores) stand_ins += " cpu not enforced;";
        r.controls.push_back({"resource", requested + " for the whole tree", planned,
                              p.memory || (p.pids && ::geteuid() != 0) ? "partial" : "not enforced",
                              "measured: no cgroup (" + prepared.no_cgroup_because +
                                  "); per-process stand-ins set in the child:" + stand_ins});
      }
    }
  }
  r.outcome = outcome;
  r.exit_code = code;
  r.events = run.events;
  r.cleanup = run.cleanup;
  return r;
}


RunReport finish_cgroup(Prepared& prepared) {
  RunReport report;
  if (!prepared.cgroup) {
    report.cleanup = "complete as far as a process group shows (no cgroup: a descendant in its own session is not tracked)";
    return report;
  }
  const cgroup::Events events = prepared.cgroup->events();  // before the groups go
  if (events.oom_kills)
    report.events.push_back("the memory ceiling was reached: " + std::to_string(events.oom_kills) +
                            " process(es) killed by the kernel (memory.oom_control)");
  if (events.pids_max_hits)
    report.events.push_back("the task ceiling was reached: " + std::to_string(events.pids_max_hits) +
                            " fork(s) refused (pids.events)");
  const cgroup::Cleanup cleanup =
      prepared.cgroup->kill_and_remove({std::chrono::milliseconds(5000), cgroup::Reap::kAllChildren});
  report.cleanup_complete = cleanup.complete;
  if (!cleanup.complete) {
    report.cleanup = "incomplete:";
    for (const std::string& residual : cleanup.residuals) report.cleanup += " " + residual + ";";
  } else {
    report.cleanup = "complete: every task of the run's cgroup killed, the groups proven empty and removed";
  }
  return report;
}

// Why the command's process could not be created, with the remedy.
std::string spawn_failure(uint32_t fresh, bool into_cgroup, int error) {
  std::string message = std::string(into_cgroup ? "clone3" : "clone") + ": " + std::strerror(error);
  if (fresh && (error == EPERM || error == EINVAL || error == ENOSPC || error == EUSERS))
    message += " (isolation.namespaces: the kernel refused a new namespace; creating them needs root, or, for a "
               "user namespace, user namespaces enabled (sysctl user.max_user_namespaces > 0))";
  else if (into_cgroup)
    message += " (resource: CLONE_INTO_CGROUP needs Linux 5.7 or later)";
  return message;
}

}  // namespace

bool scope_signals_by_pid_namespace(plan::Plan& plan, const landlock::AbiProbe& probe) {
  if (!plan.landlock || !(plan.landlock->scoped & landlock::scope::kSignal) ||
      (landlock::scopes_for_abi(probe.abi) & landlock::scope::kSignal))
    return false;
  if (!(capabilities::permitted() & (uint64_t(1) << CAP_SYS_ADMIN))) return false;
  plan::LandlockRuleset& ruleset = *plan.landlock;
  ruleset.scoped &= ~landlock::scope::kSignal;
  for (plan::LandlockControl& control : ruleset.controls) control.scoped &= ~landlock::scope::kSignal;
  std::erase_if(ruleset.controls, [](const plan::LandlockControl& c) {
    return c.domain == plan::ControlDomain::kIpc && !c.fs && !c.net && !c.scoped;
  });
  if (!ruleset.handled_fs && !ruleset.handled_net && !ruleset.scoped) plan.landlock.reset();
  if (!plan.process) plan.process.emplace();
  plan.process->namespaces |= plan::kNamespacePid;
  return true;
}

Status check_plan_shape(const plan::Plan& plan) {
  if (!plan.landlock && plan.seccomp.empty())
    return make_error("the plan enforces no control (no Landlock ruleset, no seccomp program)");
  if (!plan.seccomp.empty() && !plan::find_program(plan, kNativeAuditArch)) {
    std::string has;
    for (const auto& program : plan.seccomp) has += std::string(has.empty() ? "" : ", ") + plan::audit_arch_name(program.audit_arch);
    return make_error(std::string("syscall: the plan has no seccomp program for this host's architecture (") +
                      plan::audit_arch_name(kNativeAuditArch) + "; it has " + has +
                      "); recompile with --arch " + plan::audit_arch_name(kNativeAuditArch));
  }
  return Ok{};
}

Status check_kept_capabilities(const plan::Plan& plan) {
  const uint64_t kept = plan::kept_capabilities_of(plan);
  if (!kept) return Ok{};  // no capget on every launch for nothing
  const uint64_t missing = kept & ~capabilities::permitted();
  if (!missing) return Ok{};
  return make_error("isolation.linux_capabilities: the plan keeps " + capabilities::names(missing) +
                    ", which aasm-launch does not hold; run it as root, or grant it the capability "
                    "(setcap, or the service manager's AmbientCapabilities)");
}

int launch(const LaunchRequest& request) {
  int lookup_errno = 0;
  auto prepared = prepare(request, lookup_errno);
  if (!prepared) {
    std::fprintf(stderr, "aasm-launch: error: %s\n", prepared.error().message.c_str());
    if (lookup_errno == ENOENT) return exit_code::kNotFound;
    if (lookup_errno != 0) return exit_code::kCannotExecute;
    return exit_code::kLauncherError;
  }

  // A refusal from here on also takes the run's cgroup, made by prepare(), away.
  const auto abandon = [&prepared](const std::string& message) {
    if (prepared->cgroup) prepared->cgroup->kill_and_remove({std::chrono::milliseconds(5000), cgroup::Reap::kAllChildren});
    return refuse(message);
  };
  // The child shares this memory until it execs, except when clone3 puts it
  // into a v2 cgroup (kernel/spawn.h): then the report needs a shared page.
  static ChildReport report_in_this_memory;
  ChildReport* report = &report_in_this_memory;
  if (prepared->cgroup && prepared->cgroup->v2_directory_fd() >= 0) {
    void* page = ::mmap(nullptr, sizeof(ChildReport), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return abandon(std::string("mmap: ") + std::strerror(errno));
    report = new (page) ChildReport{};
  }

  std::vector<char*> argv;
  for (const std::string& arg : request.command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  // A reader of our output that goes away must not kill the supervisor: its
  // writes fail with EPIPE instead, and it goes on to end the run properly.
  ::signal(SIGPIPE, SIG_IGN);
  // Output the plan limits is relayed through pipes the supervisor counts.
  const SupervisionLimits limits = supervision_limits(prepared->plan);
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if ((limits.stdout_bytes && ::pipe2(out_pipe, O_CLOEXEC) != 0) || (limits.stderr_bytes && ::pipe2(err_pipe, O_CLOEXEC) != 0))
    return abandon(std::string("pipe2: ") + std::strerror(errno));
  // Orphans of the tree are reparented here and reaped at once, instead of
  // lingering under pid 1 and keeping the cgroup's task count up.
  if (prepared->cgroup) ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  const uint32_t fresh = plan::namespaces_of(prepared->plan);
  ChildIo io{out_pipe[1], err_pipe[1], {}, ::getpid(), -1, 0, ::geteuid(), ::getegid(), {}};
  if (fresh & plan::kNamespacePid) {
    // PID 1 of a new namespace reads its parent as 0: it checks this pidfd.
    io.supervisor_pidfd = int(::syscall(SYS_pidfd_open, ::getpid(), 0));
    if (io.supervisor_pidfd < 0)
      return abandon(std::string("pidfd_open: ") + std::strerror(errno) + " (Linux 5.3 or later is needed)");
  }
  const int cgroup_v2_fd = prepared->cgroup ? prepared->cgroup->v2_directory_fd() : -1;
  if (prepared->cgroup && cgroup_v2_fd < 0) {
    auto procs = prepared->cgroup->open_placement_files();
    if (!procs) return abandon("resource: cannot place the command in the run's cgroup: " + procs.error().message);
    io.cgroup_procs = std::move(*procs);
  }
  // SIGINT, SIGTERM and SIGHUP are forwarded to the command: blocked here,
  // read from a signalfd by the supervision loop, restored in the child.
  sigset_t forwarded;
  sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &io.original_mask);
  const int signal_fd = ::signalfd(-1, &forwarded, SFD_CLOEXEC);
  if (signal_fd < 0) return abandon(std::string("signalfd: ") + std::strerror(errno));

  ChildStart start{&*prepared, argv.data(), report, &io};
  // While the child confines itself: the janitor starts (if this supervisor
  // is killed, it ends the command's group and empties and removes the run's
  // cgroup; it learns the command's pid from the kernel, which wrote it as
  // the child was created), and the signals to reset are read. The child
  // waits for both before its last steps.
  std::optional<Result<Janitor>> janitor;
  static const cgroup::sweep::Targets no_cgroup{};
  const cgroup::sweep::Targets& cgroups = prepared->cgroup ? prepared->cgroup->sweep_targets() : no_cgroup;
  const pid_t child = spawn::start({namespaces::clone_flags(fresh), cgroup_v2_fd, Janitor::pid_slot()}, child_entry,
                                   &start, [&] {
                                     io.ignored_signals = signals::ignored();
                                     janitor.emplace(Janitor::start(cgroups));
                                     return bool(*janitor);
                                   });
  for (int fd : {prepared->ruleset_fd, prepared->denied_dir_fd, out_pipe[1], err_pipe[1], io.supervisor_pidfd})
    if (fd >= 0) ::close(fd);
  for (int fd : io.cgroup_procs) ::close(fd);
  if (janitor && !*janitor) return abandon(janitor->error().message);
  if (child < 0) return abandon(spawn_failure(fresh, cgroup_v2_fd >= 0, -child));
  const int pidfd = int(::syscall(SYS_pidfd_open, child, 0));
  if (pidfd < 0) {
    ::kill(child, SIGKILL);
    return abandon(std::string("pidfd_open: ") + std::strerror(errno) + " (Linux 5.3 or later is needed)");
  }
  // Without the run's cgroup, the tree is the command's session and process
  // group; a descendant that starts its own session escapes this kill.
  const auto kill_tree = [child, &prepared] {
    ::kill(-child, SIGKILL);
    ::kill(child, SIGKILL);
    if (prepared->cgroup) prepared->cgroup->kill_all();
  };
  const SupervisionResult supervised =
      supervise({child, pidfd, out_pipe[0], err_pipe[0], signal_fd}, limits, kill_tree);
  ::close(pidfd);
  ::close(signal_fd);
  // At the end, always: whatever of the command's group is left goes too;
  // with a cgroup, every task in it, proven gone, and the groups removed.
  kill_tree();
  RunReport run_report = finish_cgroup(*prepared);
  (*janitor)->release();
  const int status = supervised.status;
  int code = WIFSIGNALED(status) ? exit_code::kSignalBase + WTERMSIG(status) : WEXITSTATUS(status);
  if (supervised.ending != Ending::kExited)
    std::fprintf(stderr, "aasm-launch: error: the run passed its %s and its process group was killed\n",
                 ending_description(supervised.ending, limits).c_str());
  for (const std::string& event : run_report.events)
    std::fprintf(stderr, "aasm-launch: note: %s\n", event.c_str());
  if (!run_report.cleanup_complete) {
    std::fprintf(stderr, "aasm-launch: error: cleanup incomplete: %s\n", run_report.cleanup.c_str());
    if (code == 0) code = exit_code::kLauncherError;
  }
  const auto stage = ChildStage(report->stage.load());
  if (stage != ChildStage::kNone) {
    // The child failed before its command ran. Its own exit might not have gone
    // through (a filter may forbid exit_group), so the code comes from the report.
    const int error = report->error.load();
    const std::string step = stage != ChildStage::kSelfCheck
                                 ? stage_name(stage)
                                 : std::string(stage_name(stage)) + " (" +
                                       self_check_failure(SelfCheck(report->failed_check.load())) + ")";
    std::fprintf(stderr, "aasm-launch: error: %s '%s': %s: %s\n",
                 stage == ChildStage::kExec ? "cannot execute" : "cannot confine", request.command.front().c_str(),
                 step.c_str(), std::strerror(error));
    code = child_exit_code(stage, error);
  }
  if (request.receipt_path) {
    const std::string outcome = stage != ChildStage::kNone                ? "not started"
                                : supervised.ending != Ending::kExited      ? std::string("stopped at its ") + ending_name(supervised.ending)
                                : WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                      : "exited";
    Status written =
        write_receipt(*request.receipt_path, make_receipt(*prepared, report->done.load(), outcome, code, run_report));
    if (!written) {
      std::fprintf(stderr, "aasm-launch: error: %s\n", written.error().message.c_str());
      if (code == 0) code = exit_code::kLauncherError;
    }
  }
  return code;
}

}  // namespace aasm
