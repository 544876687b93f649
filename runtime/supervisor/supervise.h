// The supervisor's loop while the command runs: relay its output through
// pipes counting bytes (never waiting on the launcher's own stdout/stderr:
// output_writer.h), enforce the wall-clock deadline and the output
// limits, forward SIGINT/SIGTERM/SIGHUP, answer the calls its seccomp
// listener hands it (listener_answers.h), follow the --explain tracer's
// stops, and notice the command's exit
// without waiting on descendants that keep a pipe open.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>

namespace aasm {

class ListenerAnswers;
namespace denials { class Log; }
namespace explain { class Tracer; }
namespace landlock_audit { class Reader; }
namespace egress { class Broker; }

struct SupervisionLimits {
  std::optional<uint64_t> wall_clock_seconds, stdout_bytes, stderr_bytes;
};

enum class Ending { kExited, kDeadline, kStdoutLimit, kStderrLimit };
const char* ending_name(Ending ending);

// How long, at the end of the run, the launcher waits for its own stdout
// and stderr to take what is left for them (output_writer.h); then it gives
// them up.
constexpr int kOutputGraceSeconds = 5;

// What of the command's relayed output did not reach the launcher's own.
struct OutputLoss {
  uint64_t bytes = 0;  // counted toward the limits all the same
  int error = 0;       // the errno of the write that failed (a reader gone: EPIPE), or 0
  bool stalled = false;  // given up on: it took nothing for kOutputGraceSeconds at the end
};

struct SupervisionResult {
  int status = 0;  // waitpid status of the command
  Ending ending = Ending::kExited;
  uint64_t stdout_bytes = 0, stderr_bytes = 0;
  OutputLoss stdout_lost, stderr_lost;
};

struct SupervisedChild {
  pid_t pid = -1;
  int pidfd = -1;          // readable when the command exits
  int stdout_read = -1;    // -1: the command writes to the launcher's stdout itself
  int stderr_read = -1;
  int signal_fd = -1;      // signalfd of SIGINT, SIGTERM, SIGHUP (blocked in the supervisor)
  int listener = -1;                   // the run's seccomp listener (kernel/seccomp_notify.h)
  ListenerAnswers* answers = nullptr;  // answers it; set with the listener
  denials::Log* denials = nullptr;     // where observers record what was refused
  explain::Tracer* tracer = nullptr;   // --explain: the tree's tracer, whose stops are handled here
  landlock_audit::Reader* audit = nullptr;  // Landlock's audit records, where the host delivers them
  egress::Broker* broker = nullptr;         // network.outbound.hosts: its connections accepted here
};

// `kill_tree` ends the whole tree (the deadline, an output limit).
SupervisionResult supervise(const SupervisedChild& child, const SupervisionLimits& limits,
                            const std::function<void()>& kill_tree);

}  // namespace aasm
