#include "supervisor/supervise.h"

#include "supervisor/egress_broker.h"
#include "supervisor/explain_tracer.h"
#include "supervisor/landlock_audit.h"
#include "supervisor/listener_answers.h"
#include "supervisor/output_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <utility>

namespace aasm {
namespace {

// The command's output, relayed through a pipe to the launcher's own stdout
// or stderr by an OutputWriter (output_writer.h: why a thread of its own
// makes the writes). Only one chunk is in hand at a time: while the writer
// has it, the pipe is not read, so a stalled output stops the command at
// its next write into the full pipe, and the loop goes on.
struct Stream {
  int fd;
  std::optional<uint64_t> limit;
  uint64_t count = 0;
  std::optional<OutputWriter> writer = std::nullopt;  // while fd >= 0, or a chunk it left

  // What to poll: the pipe when the last chunk is written, else the
  // writer's completion. One look at busy() for both, so that a chunk
  // completing in between cannot leave neither polled.
  std::pair<int, int> polled() const {
    const bool busy = writer && writer->busy();
    return {busy || fd < 0 ? -1 : fd, busy ? writer->done_fd() : -1};
  }

  // Reads what is there and hands it over; false once the limit is passed
  // (after handing over up to it). Only when the writer is not busy().
  bool relay() {
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
      ::close(fd);
      fd = -1;
      return true;
    }
    uint64_t allowed = uint64_t(n);
    if (limit && count + allowed > *limit) allowed = count >= *limit ? 0 : *limit - count;
    writer->write(std::string(buffer, size_t(allowed)));
    count += uint64_t(n);
    return !limit || count <= *limit;
  }

  OutputLoss loss() const {
    if (!writer) return {};
    return {writer->dropped(), writer->error(), writer->gave_up()};
  }
};

// Stops handled per round of the loop, between looks at the output and the
// deadline.
constexpr int kTracerBudget = 64;

}  // namespace

const char* ending_name(Ending ending) {
  switch (ending) {
    case Ending::kExited: return "exited";
    case Ending::kDeadline: return "wall-clock deadline";
    case Ending::kStdoutLimit: return "stdout limit";
    case Ending::kStderrLimit: return "stderr limit";
  }
  return "?";
}

SupervisionResult supervise(const SupervisedChild& child, const SupervisionLimits& limits,
                            const std::function<void()>& kill_tree) {
  SupervisionResult result;
  Stream out{child.stdout_read, limits.stdout_bytes};
  Stream err{child.stderr_read, limits.stderr_bytes};
  // Their threads start now, before the command can have used up the
  // processes its user may have (RLIMIT_NPROC).
  if (out.fd >= 0) out.writer.emplace(STDOUT_FILENO);
  if (err.fd >= 0) err.writer.emplace(STDERR_FILENO);
  const int64_t deadline = limits.wall_clock_seconds ? monotonic_ms() + int64_t(*limits.wall_clock_seconds) * 1000 : -1;
  bool killed = false;
  int listener = child.listener;
  bool tracer_behind = false;  // stops left waiting by the last round's budget
  auto end_run = [&](Ending why) {
    if (killed) return;
    killed = true;
    result.ending = why;
    kill_tree();
  };
  for (;;) {
    const auto [out_fd, out_done] = out.polled();
    const auto [err_fd, err_done] = err.polled();
    pollfd fds[10] = {{child.pidfd, POLLIN, 0},
                     {out_fd, POLLIN, 0},
                     {err_fd, POLLIN, 0},
                     {child.signal_fd, POLLIN, 0},
                     {listener, POLLIN, 0},
                     {child.tracer ? child.tracer->signal_fd() : -1, POLLIN, 0},
                     {child.audit ? child.audit->fd() : -1, POLLIN, 0},
                     {out_done, POLLIN, 0},
                     {err_done, POLLIN, 0},
                     {child.broker ? child.broker->listen_fd() : -1, POLLIN, 0}};
    int timeout = -1;
    if (deadline >= 0 && !killed) timeout = int(std::max<int64_t>(0, deadline - monotonic_ms()));
    if (tracer_behind) timeout = 0;
    const int ready = ::poll(fds, 10, timeout);
    if (ready < 0 && errno != EINTR) break;
    if (deadline >= 0 && !killed && monotonic_ms() >= deadline) end_run(Ending::kDeadline);
    if (fds[3].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(child.signal_fd, &info, sizeof info) == ssize_t(sizeof info)) ::kill(child.pid, int(info.ssi_signo));
    }
    if ((fds[5].revents & POLLIN) || tracer_behind) tracer_behind = child.tracer->handle_pending(kTracerBudget);
    // One call per turn: a command flooding the listener still leaves its
    // output relayed, its signals forwarded and its deadline kept.
    if (fds[4].revents & POLLIN) child.answers->answer_one(listener, child.denials);
    if (fds[6].revents & POLLIN) child.audit->read_pending();
    if (fds[9].revents & POLLIN) child.broker->accept_one();
    if (fds[4].revents & (POLLHUP | POLLERR | POLLNVAL)) listener = -1;  // no task left that uses the filter
    if (fds[7].revents & POLLIN) out.writer->acknowledge();
    if (fds[8].revents & POLLIN) err.writer->acknowledge();
    if ((fds[1].revents & (POLLIN | POLLHUP)) && !out.relay()) end_run(Ending::kStdoutLimit);
    if ((fds[2].revents & (POLLIN | POLLHUP)) && !err.relay()) end_run(Ending::kStderrLimit);
    if (fds[0].revents & POLLIN) break;  // the command has exited
  }
  if (child.audit) child.audit->read_pending();  // what came with the command's last calls
  // The tracer waits for every task it traces: it may have reaped the command.
  if (child.tracer && child.tracer->command_status()) {
    result.status = *child.tracer->command_status();
  } else {
    while (::waitpid(child.pid, &result.status, 0) < 0 && errno == EINTR) {
    }
  }
  // What the command wrote before it exited; a descendant that still holds
  // the pipe does not keep the supervisor waiting, nor does an output that
  // takes nothing: past kOutputGraceSeconds its writer gives it up, and the
  // rest is counted as dropped.
  const int64_t give_up_at = monotonic_ms() + int64_t(kOutputGraceSeconds) * 1000;
  for (Stream* s : {&out, &err}) {
    if (!s->writer) continue;
    if (s->fd >= 0) {
      ::fcntl(s->fd, F_SETFL, O_NONBLOCK);  // the run's own pipe
      for (int i = 0; i < 1024 && s->fd >= 0; ++i) {
        s->writer->wait(give_up_at);
        const uint64_t before = s->count;
        if (!s->relay()) break;
        if (s->fd >= 0 && s->count == before) break;  // EAGAIN: nothing more now
      }
      if (s->fd >= 0) ::close(s->fd);
      s->fd = -1;
    }
    s->writer->wait(give_up_at);
  }
  result.stdout_lost = out.loss();
  result.stderr_lost = err.loss();
  result.stdout_bytes = out.count;
  result.stderr_bytes = err.count;
  return result;
}

}  // namespace aasm
