#include "launch.h"

#include <poll.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <chrono>
#include <new>
#include <optional>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "exit_codes.h"
#include "preparation.h"
#include "receipt_builder.h"
#include "self_checks.h"
#include "base/path_tree.h"
#include "kernel/arch.h"
#include "kernel/bpf_interpreter.h"
#include "kernel/capabilities.h"
#include "kernel/descriptors.h"
#include "kernel/kernel_log.h"
#include "kernel/rlimits.h"
#include "kernel/landlock.h"
#include "kernel/landlock_uapi.h"
#include "kernel/loopback.h"
#include "kernel/mount_view.h"
#include "kernel/seccomp.h"
#include "kernel/seccomp_notify.h"
#include "plan/plan.h"
#include "kernel/namespaces.h"
#include "kernel/raw_syscall.h"
#include "kernel/signals.h"
#include "kernel/spawn.h"
#include "supervisor/cgroup.h"
#include "supervisor/egress_broker.h"
#include "supervisor/denial_report.h"
#include "supervisor/denials.h"
#include "supervisor/explain_tracer.h"
#include "supervisor/git_dirs.h"
#include "supervisor/landlock_audit.h"
#include "supervisor/janitor.h"
#include "supervisor/exec_refusal.h"
#include "supervisor/listener_answers.h"
#include "supervisor/output_writer.h"
#include "supervisor/supervise.h"

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
  kSelfCheck, kSeccomp, kExec, kView, kViewProtection, kViewLandlock, kBroker
};

struct ChildReport {
  std::atomic<uint32_t> stage;
  std::atomic<int32_t> error;
  std::atomic<uint32_t> done;  // ChildDone and SelfCheck bits (self_checks.h)
  std::atomic<uint32_t> failed_check;  // kSelfCheck: the SelfCheck that was not refused
  std::atomic<uint32_t> failed_step;   // kView: the view's step; kViewProtection: the path's offset
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
    case ChildStage::kView: return "building the filesystem view";
    case ChildStage::kViewProtection: return "checking the filesystem view's protected paths";
    case ChildStage::kViewLandlock: return "adding Landlock rules for the view's own filesystems";
    case ChildStage::kBroker: return "making the broker's socket in the command's network namespace (loopback up, 127.0.0.1:3128)";
  }
  return "?";
}

int child_exit_code(ChildStage stage, int error) {
  return stage == ChildStage::kExec ? exit_code::of_exec_failure(error) : exit_code::kLauncherError;
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
  int connect_handoff = -1;  // where the child sends the connect() listener (connect_answers.h)
  int broker_handoff = -1;   // where it sends the broker's listening socket (egress_broker.h)
  spawn::Handover* handover = nullptr;  // where it hands over the main program's listener (Prepared::observing)
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

// The listener goes first, while the plan's filters cannot yet refuse the
// sendmsg that hands it over. An outer sandbox's listener (EBUSY: one per
// filter chain) leaves Landlock's EACCES as the answer: no control is lost.
void hand_over_connect_listener(Prepared& prepared, ChildReport* report, int handoff) {
  const int listener = seccomp::install_with_listener(prepared.connect_notifier);
  if (listener == -EBUSY) return;
  if (listener < 0) child_fail(report, ChildStage::kSeccomp, -listener);
  if (int error = seccomp::send_descriptor(handoff, listener)) child_fail(report, ChildStage::kSeccomp, error);
  raw::syscall4(SYS_close, listener);
  raw::syscall4(SYS_close, handoff);
  report->done.fetch_or(kConnectListenerHanded);
}

// True when the main program went in rewritten with the run's listener,
// handed over; false when an outer sandbox's listener (EBUSY: one per filter
// chain) leaves it to go in as written. From the moment the filter is in,
// any call may wait on the listener, so the descriptor goes over without a
// system call (spawn::hand_over).
bool listen_on_main(Prepared& prepared, ChildReport* report, const ChildIo& io) {
  const int listener = seccomp::install_with_listener(*prepared.observing);
  if (listener < 0) spawn::hand_over(*io.handover, spawn::Handover::kNone);
  if (listener == -EBUSY) return false;
  if (listener < 0) child_fail(report, ChildStage::kSeccomp, -listener);
  const int32_t copy = spawn::hand_over(*io.handover, listener);
  if (copy < 0) {
    // The supervisor kills this process: even its exit might wait on the
    // listener now, which nobody reads.
    report->error.store(-copy);
    report->stage.store(uint32_t(ChildStage::kSeccomp));
    for (;;) {
    }
  }
  report->done.fetch_or(kErrnoAnswersListened);
  return true;
}

// What the programs as written answer the child's own exec call, where
// that is an errno; nullopt: the call goes to the kernel. The child must not
// make such a call: its filters would hand it to the listener, which the
// supervisor reads only once clone has returned, after the exec
// (kernel/spawn.h). So it answers it itself, with the interpreter the
// supervisor runs on the same registers (supervisor/listener_answers.h).
// No allocation: the child shares the supervisor's memory.
std::optional<int> refused_exec(const Prepared& prepared, long nr, std::initializer_list<uint64_t> args) {
  if (prepared.observed.empty()) return std::nullopt;
  bpf::SeccompData data;
  data.nr = int32_t(nr);
  data.arch = kNativeAuditArch;
  std::copy(args.begin(), args.end(), data.args);
  const std::optional<bpf::StackOutcome> decided = bpf::run_stack(prepared.observed, data);
  return decided ? errno_of(decided->action) : std::nullopt;
}

// In the command's new network namespace, while the child still holds its
// capabilities there: loopback up, and the broker's socket listening on it,
// sent to the supervisor, which serves it from the host's namespace. The
// child keeps no copy: the command cannot accept on it.
void make_broker_socket(ChildReport* report, int handoff) {
  if (int error = loopback::bring_up()) child_fail(report, ChildStage::kBroker, error);
  const int listening = loopback::listen_on(plan::kBrokerPort);
  if (listening < 0) child_fail(report, ChildStage::kBroker, -listening);
  if (int error = seccomp::send_descriptor(handoff, listening)) child_fail(report, ChildStage::kBroker, error);
  ::close(listening);
  ::close(handoff);
  report->done.fetch_or(kBrokerListening);
}

// The command's exec. A pinned executable goes by the descriptor its
// content was checked through: execveat(fd, "", AT_EMPTY_PATH), and where
// the plan refuses that with EACCES or EPERM (the safe default
// @descriptor-exec), execve of "/proc/self/fd/N" (made before the clone):
// the same open file, no path to race; the first errno where that path
// does not exist.
[[noreturn]] void exec_command(const Prepared& prepared, ChildReport* report, char* const argv[]) {
  char* const* envp = prepared.envp.data();
  const auto execve = [&](const char* path) {
    const std::optional<int> refused =
        refused_exec(prepared, SYS_execve, {uintptr_t(path), uintptr_t(argv), uintptr_t(envp)});
    return refused ? *refused : spawn::exec(path, argv, envp);
  };
  if (prepared.exec_fd < 0) child_fail(report, ChildStage::kExec, execve(prepared.executable.c_str()));
  const std::optional<int> refused = refused_exec(
      prepared, SYS_execveat, {uint64_t(prepared.exec_fd), uintptr_t(""), uintptr_t(argv), uintptr_t(envp), AT_EMPTY_PATH});
  int error = refused ? *refused : spawn::exec_descriptor(prepared.exec_fd, argv, envp);
  if (error == EACCES || error == EPERM)
    if (const int fallback = execve(prepared.exec_fd_path.c_str()); fallback != ENOENT) error = fallback;
  child_fail(report, ChildStage::kExec, error);
}

// The filters last: nothing after them needs a system call but execve. The
// main program, last of all, with the run's listener where it is observed.
void install_filters(Prepared& prepared, ChildReport* report, const ChildIo& io) {
  for (size_t i = 0; i < prepared.filters.size(); ++i) {
    const bool main = i + 1 == prepared.filters.size();
    if (main && prepared.observing && listen_on_main(prepared, report, io)) break;
    if (int error = seccomp::install(prepared.filters[i])) child_fail(report, ChildStage::kSeccomp, error);
  }
  if (!prepared.filters.empty()) report->done.fetch_or(kSeccompInstalled);
}

// In the new mount namespace, while the child still holds its capabilities
// there and before Landlock (a restricted process may not mount): the view,
// the evidence that each protected path is read-only, then the rules for the
// view's own filesystems, which exist only now (docs/filesystem-view.md).
void build_view(const Prepared& prepared, ChildReport* report) {
  const mount_view::Failure failure = mount_view::build(*prepared.view);
  if (failure.error) {
    report->failed_step.store(failure.step);
    child_fail(report, ChildStage::kView, failure.error);
  }
  const mount_view::ProtectionCheck check = mount_view::check_protected(*prepared.view);
  if (!check.refused) {
    report->failed_step.store(check.path);
    // EPERM stands for "writable", which has no errno of its own.
    child_fail(report, ChildStage::kViewProtection, check.answer ? check.answer : EPERM);
  }
  for (const Prepared::ViewRule& rule : prepared.view_rules)
    if (int error = landlock::add_directory_rule(prepared.ruleset_fd, rule.path.c_str(), rule.access))
      child_fail(report, ChildStage::kViewLandlock, error);
  report->done.fetch_or(kViewBuilt);
}

// The seccomp programs' descriptors, the only ones bwrap gets beyond 0-2.
descriptors::Kept bwrap_kept(const bwrap::Exec& exec) {
  descriptors::Kept kept{-1, -1, -1, -1};
  for (size_t i = 0; i < exec.seccomp_fds.size() && i < kept.size(); ++i) kept[i] = exec.seccomp_fds[i];
  return kept;
}

// A bwrap plan's end in the child (bwrap_exec.h): bwrap makes the
// namespaces, builds the root, drops the capabilities and installs the
// filters, so the child does none of that; it keeps the descriptors bwrap
// reads open across exec, sets no_new_privs (a bwrap that would gain
// privileges by exec gains none), waits for the janitor, restores the
// signals and execs bwrap.
[[noreturn]] void exec_bwrap(Prepared& prepared, ChildReport* report, const ChildIo& io) {
  for (int fd : prepared.bwrap->seccomp_fds)
    if (::fcntl(fd, F_SETFD, 0) != 0) child_fail(report, ChildStage::kDescriptors, errno);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(report, ChildStage::kNoNewPrivs, errno);
  spawn::await_supervisor();
  if (int error = signals::reset_to_default(io.ignored_signals)) child_fail(report, ChildStage::kSignals, error);
  ::sigprocmask(SIG_SETMASK, &io.original_mask, nullptr);
  report->done.fetch_or(kBwrapExecuted);
  child_fail(report, ChildStage::kExec,
             spawn::exec(prepared.bwrap->path.c_str(), prepared.bwrap->argv.data(), prepared.envp.data()));
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
  if (io.broker_handoff >= 0) make_broker_socket(report, io.broker_handoff);
  if (prepared.view) build_view(prepared, report);
  if ((io.stdout_write >= 0 && ::dup2(io.stdout_write, STDOUT_FILENO) < 0) ||
      (io.stderr_write >= 0 && ::dup2(io.stderr_write, STDERR_FILENO) < 0))
    child_fail(report, ChildStage::kDescriptors, errno);
  // Nothing the launcher inherited reaches the command but 0-2 (and, under
  // bwrap, the seccomp programs' descriptors, which bwrap reads).
  if (int error = descriptors::close_inherited(prepared.bwrap ? bwrap_kept(*prepared.bwrap)
                                                               : descriptors::Kept{prepared.ruleset_fd, prepared.denied_dir_fd,
                                                                                   io.connect_handoff, prepared.exec_fd}))
    child_fail(report, ChildStage::kDescriptors, error);
  // A pinned script's interpreter reads it as /dev/fd/N: the kernel refuses
  // to exec a script whose descriptor closes on exec (ENOENT), so that one
  // descriptor, of the file the command is, reaches it.
  if (prepared.exec_fd_script && ::fcntl(prepared.exec_fd, F_SETFD, 0) != 0)
    child_fail(report, ChildStage::kDescriptors, errno);
  if (int error = rlimits::apply(prepared.plan.process ? &*prepared.plan.process : nullptr, prepared.tree_limits))
    child_fail(report, ChildStage::kResourceLimits, error);
  report->done.fetch_or(kResourceLimitsSet);
  if (prepared.bwrap) exec_bwrap(prepared, report, io);
  // Every capability goes but those the plan keeps: a root command with
  // CAP_SYS_PTRACE would still read other processes' /proc files under
  // Landlock. Before no_new_privs and Landlock, which need none of them.
  if (int error = capabilities::restrict_to(plan::kept_capabilities_of(prepared.plan))) child_fail(report, ChildStage::kCapabilities, error);
  report->done.fetch_or(kCapabilitiesDropped);
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(report, ChildStage::kNoNewPrivs, errno);
  if (prepared.ruleset_fd >= 0) {
    if (int error = landlock::restrict_self(prepared.ruleset_fd, prepared.restrict_flags))
      child_fail(report, ChildStage::kLandlock, error);
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
  if (io.connect_handoff >= 0) hand_over_connect_listener(prepared, report, io.connect_handoff);
  // Before the plan's filters, which need not allow seccomp(); the
  // supervisor is this process's tracer already (kernel/spawn.h).
  if (prepared.trace_filter)
    if (int error = seccomp::install(*prepared.trace_filter)) child_fail(report, ChildStage::kSeccomp, error);
  // The filters last: nothing after them needs a system call but execve.
  install_filters(prepared, report, io);
  exec_command(prepared, report, argv);
}

int child_entry(void* argument) {
  const ChildStart& start = *static_cast<const ChildStart*>(argument);
  run_child(*start.prepared, start.argv, start.report, *start.io);
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

// A receipt event and a note: what of the command's relayed output did not
// reach the launcher's own, and why.
std::string output_loss_event(const char* stream, const OutputLoss& loss) {
  std::string event = std::to_string(loss.bytes) + " bytes of the command's " + stream + " were dropped: ";
  if (loss.stalled)
    return event + "the launcher's " + stream + " took no more within " + std::to_string(kOutputGraceSeconds) +
           " s of the command's end (a terminal whose output is stopped, a reader that does not read)";
  return event + "writing the launcher's " + stream + " failed: " + std::strerror(loss.error);
}

// Writes the launcher's last words on stderr. Not with fprintf: the command
// may have stopped the terminal's output (TCOOFF on the terminal it
// inherited), or stderr be a pipe nobody reads, and a blocking write would
// keep the launcher from ever exiting. An OutputWriter's thread writes them,
// given up after kOutputGraceSeconds (at once on a file the relay gave up on).
void say_last(const std::string& text) {
  if (text.empty()) return;
  OutputWriter writer(STDERR_FILENO);
  writer.write(text);
  writer.wait(monotonic_ms() + int64_t(kOutputGraceSeconds) * 1000);
}

// What the broker let through and refused: a refused host is a denial,
// joined to the policy's lines like any other; each host is a receipt event
// with its counts, on the broker's word ("brokered": no kernel saw names).
void record_egress(const egress::Broker& broker, denials::Log& log, std::vector<std::string>& events) {
  const std::string control = std::string(control_name(Control::kNetworkHosts)) + " (brokered): ";
  for (const egress::HostTally& t : broker.tallies()) {
    const std::string host = plan::host_port_text(t.host, t.port);
    if (!t.allowed) {
      for (uint64_t i = 0; i < t.connections; ++i)
        log.add({denials::Layer::kBroker, denials::Witness::kBroker, -1, 0, 0, 0, t.host, t.port, ""});
      events.push_back(control + "denied " + host + ", " + std::to_string(t.connections) +
                       (t.connections == 1 ? " request: " : " requests: ") + t.why);
      continue;
    }
    events.push_back(control + "allowed " + host + ", " + std::to_string(t.connections) +
                     (t.connections == 1 ? " connection, " : " connections, ") + std::to_string(t.bytes_sent) +
                     " bytes sent, " + std::to_string(t.bytes_received) + " received" +
                     (t.why.empty() ? "" : "; last failure: " + t.why));
  }
}

// What the run's cgroup saw, and whether its end was proven.
struct RunReport {
  std::vector<std::string> events;  // OOM kills, task-limit hits: from the kernel's counters
  cgroup::Events counters;          // the same, as numbers, for the receipt's outcome
  bool cleanup_complete = true;
  std::string cleanup = "complete";
};

RunReport finish_cgroup(Prepared& prepared) {
  RunReport report;
  if (!prepared.cgroup) {
    report.cleanup = "complete as far as a process group shows (no cgroup: a descendant in its own session is not tracked)";
    return report;
  }
  const cgroup::Events events = prepared.cgroup->events();  // before the groups go
  report.counters = events;
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

// What this host gives less of than the plan asks, or gives another way,
// where the plan permits it; and the optional paths missing here.
void print_notes(const LaunchReport& report) {
  for (const ControlReport& c : report.controls)
    if (!c.why.empty())
      std::fprintf(stderr, "aasm-launch: note: %s is %s here: %s\n", control_name(c.control),
                   control_level_name(c.achievable), c.why.c_str());
  for (const std::string& path : report.skipped_optional)
    std::fprintf(stderr, "aasm-launch: note: optional path '%s' does not exist here; its rule is skipped\n", path.c_str());
  // A missing file in a directory that exists is an optional file's usual
  // state (git's .git/commondir): the run's end names it if the command
  // made it. A missing directory (a workspace that is no git repository,
  // or whose .git is a file) is worth saying before the run.
  for (const LaunchReport::MissingProtected& path : report.skipped_protected) {
    struct stat st {};
    if (::stat(std::string(parent_of(path.host_path)).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    std::fprintf(stderr,
                 "aasm-launch: note: optional path '%s' does not exist here; it is not protected (the command could "
                 "create it; the run's end names it if it does)\n",
                 path.path_template.c_str());
  }
  // git itself would follow such a link: what it leads to, where the view
  // holds it, is not protected, and the user is the one to look.
  for (const LaunchReport::GitDir& dir : report.git_dirs)
    for (const std::string& link : dir.links)
      std::fprintf(stderr,
                   "aasm-launch: note: '%s/%s' is a symbolic link where a git directory could be; it is not followed, "
                   "so nothing it leads to is protected (git would follow it: inspect it)\n",
                   dir.path_template.c_str(), link.c_str());
}

// A git directory (or a link where one could be) the command added beneath
// one the launch protected: found again by the same walk, and named, since
// nothing of it was protected and git would run its hooks and config later.
void created_git_dirs(const LaunchReport::GitDir& dir, std::vector<std::string>& sentences) {
  const auto found = git_dirs::find_nested(dir.host_path);
  if (!found) {  // the command may have made it unwalkable: what it added there cannot be told
    sentences.push_back("the git directories beneath '" + dir.path_template + "' cannot be found again after the run (" +
                        found.error().message + "): inspect what the command left there before git uses it outside "
                        "the sandbox");
    return;
  }
  const auto name = [&](const std::string& nested, const char* what) {
    sentences.push_back("the command created " + std::string(what) + " '" + dir.path_template + "/" + nested + "' (" +
                        dir.host_path + "/" + nested + "), which was not there at launch and so not protected: "
                        "inspect its config and hooks before git uses it outside the sandbox");
  };
  for (const std::string& nested : found->git_dirs)
    if (std::find(dir.nested.begin(), dir.nested.end(), nested) == dir.nested.end()) name(nested, "the git directory");
  for (const std::string& link : found->links)
    if (std::find(dir.links.begin(), dir.links.end(), link) == dir.links.end())
      name(link, "a symbolic link where a git directory could be,");
}

// A protected path missing at launch was not protected; one the command
// made is what the protection was for (git reads its configuration and
// hooks through .git/config, .git/commondir, .git/config.worktree), so the
// run ends saying so. lstat only: the command may have made it a link.
std::vector<std::string> created_protected(const LaunchReport& report) {
  std::vector<std::string> sentences;
  for (const LaunchReport::MissingProtected& path : report.skipped_protected) {
    struct stat st {};
    if (::lstat(path.host_path.c_str(), &st) == 0)
      sentences.push_back("the command created '" + path.path_template + "' (" + path.host_path +
                          "), a protected path that was missing at launch and so not protected: inspect it before "
                          "anything outside the sandbox reads it");
  }
  for (const LaunchReport::GitDir& dir : report.git_dirs) created_git_dirs(dir, sentences);
  return sentences;
}

// The plan's provenance, decoded only now that denials are to be explained
// (prepare() defers it: the command does not wait for it). A section that
// does not decode leaves the plan without provenance, and the report says so.
void with_provenance(Prepared& prepared) {
  if (auto full = plan::decode_plan(prepared.plan_bytes)) prepared.plan.provenance = std::move(full->provenance);
}

// The calls the main program keeps answering with its own errno
// (Prepared::errno_kept), by name.
std::string errno_kept_unseen(const Prepared& prepared) {
  std::string names;
  for (const int32_t nr : prepared.errno_kept) names += (names.empty() ? "" : ", ") + denials::call_name(prepared.plan, nr);
  return "seccomp: " + names + " refused with an errno: answered by the kernel alone and not recorded (the main "
         "program and an argument rule may both refuse them with an errno, and handing them to the listener would let "
         "the rule's errno replace the main program's)";
}

// A command its filter killed (SIGSYS): the call from the kernel's record
// of the kill where this launcher can read one, else only that it happened.
void record_kill(int kernel_log, pid_t command, denials::Log& log) {
  denials::Denial kill;
  kill.layer = denials::Layer::kSeccomp;
  kill.witness = denials::Witness::kExitStatus;
  if (kernel_log >= 0)
    for (const kernel_log::SeccompKill& record : kernel_log::seccomp_kills(kernel_log, command, 250)) {
      kill.witness = denials::Witness::kKernelRecord;
      kill.syscall = record.syscall;
      if (record.arch != kNativeAuditArch) {
        kill.arch = record.arch;  // its number is of that table, not the host's (denial_report.cpp)
        char hex[16];
        std::snprintf(hex, sizeof hex, "0x%08x", record.arch);
        kill.arguments = std::string("arch=") + hex;
      }
    }
  log.add(std::move(kill));
}

// What the launcher cannot see of the filter's kills.
void kills_unseen(int kernel_log, std::vector<std::string>& unseen) {
  unseen.push_back("seccomp: a call the plan kills in a descendant of the command is not recorded (its parent sees "
                   "SIGSYS; `dmesg` shows the kernel's record, type=1326)");
  if (kernel_log < 0)
    unseen.push_back("seccomp: a call the plan kills is known from the exit status only, not which call: " +
                     kernel_log::unreadable_text(-kernel_log) + "; `dmesg` as root shows the kernel's record");
}

// Why the command's process could not be created, with the remedy.
std::string spawn_failure(uint32_t fresh, bool into_cgroup, int error) {
  std::string message = std::string(into_cgroup ? "clone3" : "clone") + ": " + std::strerror(error);
  if (fresh && (error == EPERM || error == EINVAL || error == ENOSPC || error == EUSERS))
    message += std::string(" (isolation.namespaces: the kernel refused a new namespace; creating them needs root") +
               (fresh & plan::kNamespaceUser ? std::string(", or, for a user namespace: ") + namespaces::kUserNamespaceRemedy
                                             : "") +
               ")";
  else if (into_cgroup)
    message += " (resource: CLONE_INTO_CGROUP needs Linux 5.7 or later)";
  return message;
}

}  // namespace

int launch(const LaunchRequest& request) {
  // Before anything else: a receipt that cannot be written refuses the
  // launch now, not after the command has run.
  ReceiptTimeline timeline{now_ms()};
  std::optional<ReceiptOutput> receipt;
  std::optional<ReceiptKey> receipt_key;
  if (request.receipt_path || request.receipt_fd) {
    Result<ReceiptOutput> opened = request.receipt_path ? ReceiptOutput::open_path(*request.receipt_path)
                                                        : ReceiptOutput::open_descriptor(*request.receipt_fd);
    if (!opened) return refuse(opened.error().message);
    Result<ReceiptKey> key = load_receipt_key(request.receipt_key_file);
    if (!key) return refuse(key.error().message);
    receipt.emplace(std::move(*opened));
    receipt_key.emplace(std::move(*key));
  }
  Preparation preparation = prepare(request, probe_host(), Exit::kLaunch);
  LaunchReport& launch_report = preparation.report;
  // What the receipt keeps only counts and keyed digests of.
  const auto withheld = [&](const std::string& cwd) {
    const std::optional<plan::ProcessSettings>& process = preparation.prepared.plan.process;
    return Withheld{&*receipt_key, request.command, preparation.prepared.environment,
                    process && process->environment_filtered, cwd};
  };
  // A launch refused before the command started: its receipt says so, every
  // control not established.
  const auto not_started = [&](int code) {
    if (!receipt) return code;
    // An invalid plan's trailer is no digest of anything verified.
    if (!preparation.plan_decoded) launch_report.plan_sha256.clear();
    complete(launch_report, 0);
    timeline.cleanup = now_ms();
    const RunEnd end{outcome::kNotStarted, 0, code, {}, "complete: nothing was started", timeline};
    const Result<LaunchContext> context = current_launch_context();
    Status written = receipt->commit(render_receipt(build_receipt(launch_report, end, withheld(context ? context->cwd : ""))));
    if (!written) std::fprintf(stderr, "aasm-launch: error: %s\n", written.error().message.c_str());
    return code;
  };
  if (const std::optional<Refusal>& refusal = launch_report.refusal) {
    std::fprintf(stderr, "aasm-launch: error: %s\n", refusal->error.message.c_str());
    return not_started(refusal->exit_code);
  }
  print_notes(launch_report);
  Prepared* const prepared = &preparation.prepared;

  // A refusal from here on also takes the run's cgroup, made by prepare(), away.
  const auto abandon = [&prepared, &not_started](const std::string& message) {
    if (prepared->cgroup) prepared->cgroup->kill_and_remove({std::chrono::milliseconds(5000), cgroup::Reap::kAllChildren});
    return not_started(refuse(message));
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
  // The tracer learns of its tracees' stops from SIGCHLD, read from a
  // signalfd of its own.
  sigset_t forwarded, blocked;
  sigemptyset(&forwarded);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&forwarded, sig);
  blocked = forwarded;
  if (request.explain) sigaddset(&blocked, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &blocked, &io.original_mask);
  const int signal_fd = ::signalfd(-1, &forwarded, SFD_CLOEXEC);
  if (signal_fd < 0) return abandon(std::string("signalfd: ") + std::strerror(errno));
  // clone3 into a v2 cgroup suspends the supervisor until the exec
  // (kernel/spawn.h), which leaves it no moment to take the listener.
  if (prepared->observing && cgroup_v2_fd >= 0) {
    install_as_written(*prepared);
    launch_report.denials_unseen.push_back(
        "seccomp: calls refused with an errno are answered by the kernel alone and not recorded (the command "
        "starts in its cgroup v2 group by clone3, which suspends the supervisor until the exec)");
  }
  // Opened before the command exists: only records of this run are read.
  const int kernel_log = prepared->filters.empty() ? -ENOENT : kernel_log::open_at_end();
  if (!prepared->filters.empty()) kills_unseen(kernel_log, launch_report.denials_unseen);
  if (prepared->view)
    launch_report.denials_unseen.push_back(
        "filesystem view: a write beneath a read-only part of the view (the protected paths, the host's trees the "
        "policy reads) fails with EROFS, and no witness records it, --explain's tracer neither (it traces Landlock's "
        "EACCES); aasm-launch --dry-run lists the view's mounts");
  static spawn::Handover handover;
  if (prepared->observing) {
    handover.may_wake = prepared->futex_allowed;
    io.handover = &handover;
  }
  int handoff[2] = {-1, -1};
  if (prepared->connect_answers && !prepared->observing && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, handoff) != 0)
    return abandon(std::string("socketpair: ") + std::strerror(errno));
  io.connect_handoff = handoff[1];
  int broker_handoff[2] = {-1, -1};
  if (prepared->plan.egress && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, broker_handoff) != 0)
    return abandon(std::string("socketpair: ") + std::strerror(errno));
  io.broker_handoff = broker_handoff[1];

  ChildStart start{&*prepared, argv.data(), report, &io};
  // While the child confines itself: the janitor starts (if this supervisor
  // is killed, it ends the command's group and empties and removes the run's
  // cgroup; it learns the command's pid from the kernel, which wrote it as
  // the child was created), and the signals to reset are read. The child
  // waits for both before its last steps.
  std::optional<Result<Janitor>> janitor;
  static const cgroup::sweep::Targets no_cgroup{};
  const cgroup::sweep::Targets& cgroups = prepared->cgroup ? prepared->cgroup->sweep_targets() : no_cgroup;
  // How the run's Landlock denials become known: the tracer, or Landlock's
  // audit records where the host delivers them, or, said, not at all.
  static const plan::LandlockRuleset no_ruleset{};
  const bool landlock_applies = prepared->negotiation && prepared->negotiation->applies;
  const plan::LandlockRuleset& effective = landlock_applies ? prepared->negotiation->effective : no_ruleset;
  if (request.explain) prepared->trace_filter = explain::trace_filter(kNativeAuditArch);
  landlock_audit::Subscription audit;
  if (landlock_applies && !request.explain) {
    audit = landlock_audit::subscribe(launch_report.host.landlock.abi);
    if (audit.fd >= 0) prepared->restrict_flags = landlock_audit::restrict_flags();
    else launch_report.denials_unseen.push_back(landlock_audit::unseen_sentence(audit.unavailable));
  }
  const unsigned trace_options = request.explain ? explain::trace_options() : 0;
  const pid_t child = spawn::start({namespaces::clone_flags(fresh), cgroup_v2_fd, Janitor::pid_slot(), trace_options,
                                    io.handover},
                                   child_entry,
                                   &start, [&] {
                                     io.ignored_signals = signals::ignored();
                                     janitor.emplace(Janitor::start(cgroups));
                                     return bool(*janitor);
                                   });
  for (int fd : {prepared->ruleset_fd, prepared->denied_dir_fd, prepared->exec_fd, out_pipe[1], err_pipe[1],
                 io.supervisor_pidfd, handoff[1], broker_handoff[1]})
    if (fd >= 0) ::close(fd);
  for (int fd : io.cgroup_procs) ::close(fd);
  // clone returned after the exec, or after the child stopped before it (kernel/spawn.h).
  if (child >= 0 && report->stage.load() == 0) timeline.exec = now_ms();
  if (janitor && !*janitor) return abandon(janitor->error().message);
  if (child < 0) return abandon(spawn_failure(fresh, cgroup_v2_fd >= 0, -child));
  const int pidfd = int(::syscall(SYS_pidfd_open, child, 0));
  if (pidfd < 0) {
    ::kill(child, SIGKILL);
    return abandon(std::string("pidfd_open: ") + std::strerror(errno) + " (Linux 5.3 or later is needed)");
  }
  // Without the run's cgroup, the tree is the command's session and process
  // group; a descendant that starts its own session escapes this kill.
  const auto kill_group = [child] {
    ::kill(-child, SIGKILL);
    ::kill(child, SIGKILL);
  };
  const auto kill_tree = [&kill_group, &prepared] {
    kill_group();
    if (prepared->cgroup) prepared->cgroup->kill_all();
  };
  // Handed over or sent before exec, which clone returned after (kernel/spawn.h).
  int listener = handoff[0] >= 0 ? seccomp::receive_descriptor(handoff[0]) : -1;
  if (handoff[0] >= 0) ::close(handoff[0]);
  if (io.handover && handover.copy.load() >= 0) listener = handover.copy.load();
  if (io.handover && handover.child_fd.load() == spawn::Handover::kNone && report->stage.load() == 0)
    launch_report.denials_unseen.push_back(
        "seccomp: calls refused with an errno are answered by the kernel alone and not recorded (an outer sandbox "
        "holds this process tree's seccomp listener)");
  // Sent before the exec too; served until the command's end, from this
  // process's network namespace: the host's.
  std::unique_ptr<egress::Broker> broker;
  if (broker_handoff[0] >= 0) {
    const int listening = seccomp::receive_descriptor(broker_handoff[0]);
    ::close(broker_handoff[0]);
    if (listening >= 0) broker = std::make_unique<egress::Broker>(listening, *prepared->plan.egress);
  }
  ListenerAnswers answers(io.handover ? std::span<const plan::SeccompProgram>(prepared->observed)
                                      : std::span<const plan::SeccompProgram>(),
                          prepared->connect_answers ? &*prepared->connect_answers : nullptr);
  denials::Log denial_log;  // what the run's confinement refused, for the report and the receipt
  std::optional<explain::Tracer> tracer;
  if (request.explain) tracer.emplace(child, effective, denial_log);
  std::optional<landlock_audit::Reader> audit_reader;
  if (audit.fd >= 0) audit_reader.emplace(audit.fd, child, denial_log);
  const SupervisionResult supervised =
      supervise({child, pidfd, out_pipe[0], err_pipe[0], signal_fd, listener, listener >= 0 ? &answers : nullptr,
                 &denial_log, tracer ? &*tracer : nullptr, audit_reader ? &*audit_reader : nullptr, broker.get()},
                limits, kill_tree);
  if (timeline.exec) timeline.exit = now_ms();
  if (listener >= 0) ::close(listener);
  if (broker) broker->stop();
  if (WIFSIGNALED(supervised.status) && WTERMSIG(supervised.status) == SIGSYS) record_kill(kernel_log, child, denial_log);
  if (kernel_log >= 0) ::close(kernel_log);
  ::close(pidfd);
  ::close(signal_fd);
  // At the end, always: whatever of the command's group is left goes too;
  // with a cgroup, every task in it (finish_cgroup's sweep kills them),
  // proven gone, and the groups removed.
  kill_group();
  RunReport run_report = finish_cgroup(*prepared);
  if (prepared->connect_answers)
    for (std::string& line : prepared->connect_answers->summary()) run_report.events.push_back(std::move(line));
  if (broker) record_egress(*broker, denial_log, run_report.events);
  for (const auto& [stream, loss] : {std::pair{"stdout", supervised.stdout_lost}, std::pair{"stderr", supervised.stderr_lost}})
    if (loss.bytes) run_report.events.push_back(output_loss_event(stream, loss));
  const bool audit_subscribed = audit.fd >= 0;
  if (audit_subscribed) ::close(audit.fd);
  (*janitor)->release();
  const int status = supervised.status;
  int code = WIFSIGNALED(status) ? exit_code::kSignalBase + WTERMSIG(status) : WEXITSTATUS(status);
  // Told apart from the command's own SIGKILL and an OOM kill, as timeout(1) does.
  if (supervised.ending == Ending::kDeadline) code = exit_code::kDeadline;
  // The launcher's last words on stderr, written at the very end (say_last).
  std::string said;
  if (supervised.ending != Ending::kExited)
    said += "aasm-launch: error: the run passed its " + ending_description(supervised.ending, limits) +
            " and its process group was killed\n";
  for (const std::string& event : run_report.events) said += "aasm-launch: note: " + event + "\n";
  if (!run_report.cleanup_complete) {
    said += "aasm-launch: error: cleanup incomplete: " + run_report.cleanup + "\n";
    if (code == 0) code = exit_code::kLauncherError;
  }
  // The exec itself refused: which file of it Landlock refused `execute`.
  const bool exec_refused = ChildStage(report->stage.load()) == ChildStage::kExec && report->error.load() == EACCES;
  if (exec_refused && landlock_applies && (effective.handled_fs & landlock::fs::kExecute))
    if (std::optional<denials::Denial> refused = exec_refusal(prepared->executable, launch_report.paths))
      denial_log.add(std::move(*refused));
  // A command that failed on its own may have met a denial nobody saw; a run
  // the supervisor ended, a child that never started, a ceiling the kernel
  // enforced (its note says so) or an interrupt (Ctrl-C, a TERM or HUP the
  // launcher passed on) says why already. By the code, as a shell that
  // died of it (or the PID namespace's init passing it on) reports it.
  const bool interrupted = code == exit_code::kSignalBase + SIGINT || code == exit_code::kSignalBase + SIGTERM ||
                           code == exit_code::kSignalBase + SIGHUP;
  const bool ceiling_hit = run_report.counters.oom_kills || run_report.counters.pids_max_hits;
  const bool failed_on_its_own = code != 0 && supervised.ending == Ending::kExited && !interrupted && !ceiling_hit &&
                                 ChildStage(report->stage.load()) == ChildStage::kNone;
  // Whether the subscription's records had a way to come, asked only where a
  // report says so (landlock_audit.h: the question costs a kernel thread).
  if (audit_subscribed && (receipt || failed_on_its_own))
    if (std::optional<std::string> off = landlock_audit::auditing_off())
      launch_report.denials_unseen.push_back(landlock_audit::unseen_sentence(*off));
  const bool unseen_named = !prepared->errno_kept.empty() && failed_on_its_own && request.denials == denials::Detail::kFull;
  if (!denial_log.empty() || receipt || unseen_named) with_provenance(*prepared);
  if (!prepared->errno_kept.empty()) launch_report.denials_unseen.push_back(errno_kept_unseen(*prepared));
  const Result<LaunchContext> found_context = current_launch_context();
  const LaunchContext context = found_context ? *found_context : LaunchContext{};
  said += denials::render_report(denial_log, prepared->plan, context, launch_report.denials_unseen, failed_on_its_own,
                                 request.denials);
  // Warned on stderr and kept among the receipt's events.
  const std::vector<std::string> created = created_protected(launch_report);
  for (const std::string& sentence : created) said += "aasm-launch: warning: " + sentence + "\n";
  const auto stage = ChildStage(report->stage.load());
  if (stage != ChildStage::kNone) {
    // The child failed before its command ran. Its own exit might not have gone
    // through (a filter may forbid exit_group), so the code comes from the report.
    const int error = report->error.load();
    std::string step = stage_name(stage);
    if (stage == ChildStage::kSelfCheck) step += std::string(" (") + self_check_failure(SelfCheck(report->failed_check.load())) + ")";
    if (stage == ChildStage::kView) step += " (" + mount_view::describe(*prepared->view, report->failed_step.load()) + ")";
    if (stage == ChildStage::kViewProtection)
      step += std::string(" (") + prepared->view->at(report->failed_step.load()) + " is not read-only)";
    // Looked up on the host (a pyenv shim on PATH, ~/.local/bin), absent in
    // the view, which holds only the policy's trees.
    if (stage == ChildStage::kExec && error == ENOENT && prepared->view)
      step += " of " + prepared->executable +
              (request.command.front().find('/') == std::string::npos ? " (found on the host's PATH; " : " (") +
              "the filesystem view holds only the policy's trees, and this file or its interpreter is not among "
              "them: name a command the view holds, as /usr/bin/NAME, or put such a directory first on PATH)";
    // CONFIG_RT_GROUP_SCHED: a new v1 cpu group has cpu.rt_runtime_us 0,
    // and the kernel refuses a real-time task into it.
    const int policy = ::sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
    if (stage == ChildStage::kCgroup && error == EINVAL && (policy == SCHED_FIFO || policy == SCHED_RR))
      step += " (the launcher runs with a real-time scheduling policy, and a new cpu group grants real-time tasks no "
              "runtime (cpu.rt_runtime_us 0); start aasm-launch with a normal policy, not under chrt -f or -r)";
    said += std::string("aasm-launch: error: ") + (stage == ChildStage::kExec ? "cannot execute" : "cannot confine") +
            " '" + request.command.front() + "': " + step + ": " + std::strerror(error) + "\n";
    code = child_exit_code(stage, error);
  }
  if (receipt) {
    const std::string outcome = run_outcome({stage == ChildStage::kNone, supervised.ending, status,
                                             run_report.counters.oom_kills, run_report.counters.pids_max_hits});
    const int signal = stage == ChildStage::kNone && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    complete(launch_report, report->done.load());
    if (outcome == outcome::kNotStarted) timeline.exec = timeline.exit = 0;
    timeline.cleanup = now_ms();
    std::vector<std::string> events = run_report.events;
    events.insert(events.end(), created.begin(), created.end());
    const RunEnd end{outcome, signal, code, events, run_report.cleanup, timeline};
    Status written = receipt->commit(render_receipt(build_receipt(
        launch_report, end, withheld(context.cwd),
        receipt_denials(denial_log, prepared->plan, context, launch_report.denials_unseen))));
    if (!written) {
      said += "aasm-launch: error: " + written.error().message + "\n";
      if (code == 0) code = exit_code::kLauncherError;
    }
  }
  say_last(said);
  return code;
}

}  // namespace aasm
