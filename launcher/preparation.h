// One preparation of a launch, two exits: `aasm-launch --dry-run` prints its
// report and stops; a launch starts the command with what it prepared and
// completes the report into the receipt. Every step that can refuse runs
// here, in the supervisor, before the command's process exists, so both
// exits refuse alike (docs/cli.md, "What the launcher does, in order").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bwrap_exec.h"
#include "kernel/mount_view.h"
#include "kernel/rlimits.h"
#include "kernel/seccomp.h"
#include "launch.h"
#include "launch_report.h"
#include "plan/plan.h"
#include "supervisor/cgroup.h"
#include "supervisor/connect_answers.h"
#include "supervisor/listener_answers.h"
#include "supervisor/landlock_negotiation.h"

namespace aasm {

enum class Exit {
  kDryRun,  // reports every control, past refusals; finds no command, builds no environment
  kLaunch,  // stops at the first refusal
};

// What the child applies, all of it made by the supervisor before the clone.
struct Prepared {
  plan::Plan plan;  // as decoded, with the signal scope moved to a PID namespace where that stands in
  std::vector<uint8_t> plan_bytes;  // as read: its provenance is decoded only to explain a denial (with_provenance)
  std::optional<LandlockNegotiation> negotiation;
  std::string executable;
  // The command's executable where the plan pins it: the descriptor its
  // content was checked through, which the child execs (spawn::exec_descriptor),
  // and the same file as /proc/self/fd/N for where execveat is refused.
  int exec_fd = -1;
  std::string exec_fd_path;
  bool exec_fd_script = false;  // "#!": the interpreter reads it as /dev/fd/N, so it stays open across exec
  int ruleset_fd = -1;
  int denied_dir_fd = -1;    // for the read and write self-checks; -1: no read right handled, or no candidate
  uint32_t self_checks = 0;  // SelfCheck bits: the checks the child runs after restrict_self
  std::optional<cgroup::RunCgroup> cgroup;  // the run's, when the plan sets tree limits the host can give
  rlimits::TreeLimits tree_limits = rlimits::TreeLimits::kCgroup;  // stand-ins where resource degraded
  std::vector<std::string> environment;  // the command's
  std::vector<char*> envp;
  std::vector<seccomp::PreparedFilter> filters;  // in install order: rule filters, the main one last
  std::optional<ConnectAnswers> connect_answers;  // set when the ruleset applied here handles TCP connect
  seccomp::PreparedFilter connect_notifier;       // hands connect() to the supervisor, for those answers
  std::optional<seccomp::PreparedFilter> trace_filter;  // --explain: stops the traced calls for the tracer
  uint32_t restrict_flags = 0;  // landlock_restrict_self's: audit records after exec, where they can be read
  // The run's listener on the main program (supervisor/listener_answers.h):
  // `observed` the installed programs as written (the main one last), which
  // the supervisor runs on each call; `observing` the main program's
  // rewrite, installed in place of filters.back() with the listener,
  // connect() included where answered. Unset: the main program goes in as
  // written (connect_notifier, if any, holds the listener), and the report's
  // denials_unseen says why.
  std::vector<plan::SeccompProgram> observed;
  std::optional<seccomp::PreparedFilter> observing;
  // Calls `observing` leaves answered with the main program's own errno
  // (shared_errno_numbers), where the rule programs could not go in
  // notifying (seccomp::notifying_rule): named in the report's
  // denials_unseen at the end, where the plan's call names are decoded.
  std::vector<int32_t> errno_kept;
  bool futex_allowed = false;  // by every filter, whatever its arguments: the hand-over may wake with it
  std::optional<mount_view::Prepared> view;       // the filesystem view's steps, built in the child
  // Rules for the view's own filesystems, opened in the child after the
  // build (a rule on the host's /tmp does not cover the view's /tmp).
  struct ViewRule {
    std::string path;
    uint64_t access = 0;
  };
  std::vector<ViewRule> view_rules;
  // A bwrap plan (bwrap_exec.h): the child execs bwrap with these instead of
  // confining itself; the filters above go to it by descriptor.
  std::optional<bwrap::Exec> bwrap;
};

struct Preparation {
  LaunchReport report;
  bool plan_decoded = false;  // false: the report has no controls, only the refusal
  Prepared prepared;
};

// The plan read, then its steps run; for a plan of several lowerings, the
// first this host can run (docs/backends.md, "Selection at launch").
Preparation prepare(const LaunchRequest& request, const Host& host, Exit exit);

// What a preparation holds open or created, let go: nothing runs with it.
void release(Prepared& prepared);

// Where the supervisor cannot take the run's listener after all: every
// program goes in as written (the rule programs' errno answers would
// otherwise notify a listener nobody holds), nothing observed.
void install_as_written(Prepared& prepared);

// Why this host cannot build a filesystem view, or "" when it can (a user
// namespace is tried for real where the launcher lacks CAP_SYS_ADMIN): the
// preparation's check, and doctor's.
std::string view_unavailable();

}  // namespace aasm
