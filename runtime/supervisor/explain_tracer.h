// aasm-launch --explain: a ptrace tracer of the command's tree that sees
// its failing filesystem and network calls return, for the denials report
// on hosts that give no Landlock audit records (supervisor/landlock_audit.h).
//
// Only the calls of one table (kTracedCalls, explain_tracer.cpp) stop: the
// child installs a filter answering them SECCOMP_RET_TRACE before the plan's
// filters (trace_filter), and the supervisor, its tracer since before that
// (kernel/spawn.h, trace_options), lets each run to its exit
// (PTRACE_SYSCALL) and looks at the result. Every other call runs at full
// speed. A call that failed with EACCES or EPERM where the ruleset applied
// handles the right the call needed is recorded as a Landlock denial
// (witness kTracer), its path resolved from the caller's /proc and memory.
//
// The tracer never changes a call: it reads registers, memory and /proc,
// and resumes. A plan's filter that answers a call with an errno or a kill
// wins over RET_TRACE (the kernel takes the strictest answer), so seccomp's
// own refusals never reach the tracer; the connect() listener's answers
// are recorded where it gives them (supervisor/connect_answers.h). With the
// supervisor gone, PTRACE_O_EXITKILL ends the tree.
//
// What it costs: each traced call stops twice (docs/benchmarks.md); a
// command that itself uses ptrace (strace, gdb) cannot, since the tree is
// already traced.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <unordered_map>

#include "kernel/seccomp.h"
#include "plan/plan.h"
#include "supervisor/denials.h"

namespace aasm::explain {

// The options the supervisor seizes the child with (spawn::Options).
unsigned trace_options();

// The filter the child installs before the plan's: RET_TRACE for the
// table's calls of `audit_arch`, with the call's row in the action's data.
seccomp::PreparedFilter trace_filter(uint32_t audit_arch);

class Tracer {
 public:
  // SIGCHLD must be blocked in the supervisor before the command starts.
  // `effective` is the Landlock ruleset this host applies.
  Tracer(pid_t command, const plan::LandlockRuleset& effective, denials::Log& log);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // Readable when a traced task has stopped or ended (a SIGCHLD signalfd).
  int signal_fd() const { return signal_fd_; }

  // Handles at most `budget` stops, so the supervisor's other duties (the
  // output relay, the deadline) are not starved by a tree that stops in a
  // loop; true when more may be waiting.
  bool handle_pending(int budget);

  // The command's wait status, when the tracer has reaped it (the tracer
  // waits for every task it traces, the command among them).
  const std::optional<int>& command_status() const { return command_status_; }

 private:
  struct Call {
    uint32_t row = 0;  // in kTracedCalls
    uint64_t args[6] = {};
  };

  void on_stop(pid_t tid, int status);
  void on_call_exit(pid_t tid, const Call& call);
  void resume(pid_t tid, int signal);

  pid_t command_;
  plan::LandlockRuleset effective_;
  denials::Log& log_;
  int signal_fd_ = -1;
  std::unordered_map<pid_t, Call> in_call_;  // tasks between a traced call's entry and exit
  std::optional<int> command_status_;
};

}  // namespace aasm::explain
