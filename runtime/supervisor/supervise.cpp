#include "supervisor/supervise.h"

#include "supervisor/explain_tracer.h"
#include "supervisor/landlock_audit.h"
#include "supervisor/listener_answers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace aasm {
namespace {

int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone: keep counting, stop writing
    data += n;
    size -= size_t(n);
  }
}

struct Stream {
  int fd;
  int out;
  std::optional<uint64_t> limit;
  uint64_t count = 0;

  // Relays what is there; false once the limit is passed (after relaying up to it).
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
    write_all(out, buffer, size_t(allowed));
    count += uint64_t(n);
    return !limit || count <= *limit;
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
  Stream out{child.stdout_read, STDOUT_FILENO, limits.stdout_bytes};
  Stream err{child.stderr_read, STDERR_FILENO, limits.stderr_bytes};
  const int64_t deadline = limits.wall_clock_seconds ? now_ms() + int64_t(*limits.wall_clock_seconds) * 1000 : -1;
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
    pollfd fds[7] = {{child.pidfd, POLLIN, 0},
                     {out.fd, POLLIN, 0},
                     {err.fd, POLLIN, 0},
                     {child.signal_fd, POLLIN, 0},
                     {listener, POLLIN, 0},
                     {child.tracer ? child.tracer->signal_fd() : -1, POLLIN, 0},
                     {child.audit ? child.audit->fd() : -1, POLLIN, 0}};
    int timeout = -1;
    if (deadline >= 0 && !killed) timeout = int(std::max<int64_t>(0, deadline - now_ms()));
    if (tracer_behind) timeout = 0;
    const int ready = ::poll(fds, 7, timeout);
    if (ready < 0 && errno != EINTR) break;
    if (deadline >= 0 && !killed && now_ms() >= deadline) end_run(Ending::kDeadline);
    if (fds[3].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(child.signal_fd, &info, sizeof info) == ssize_t(sizeof info)) ::kill(child.pid, int(info.ssi_signo));
    }
    if ((fds[5].revents & POLLIN) || tracer_behind) tracer_behind = child.tracer->handle_pending(kTracerBudget);
    // One call per turn: a command flooding the listener still leaves its
    // output relayed, its signals forwarded and its deadline kept.
    if (fds[4].revents & POLLIN) child.answers->answer_one(listener, child.denials);
    if (fds[6].revents & POLLIN) child.audit->read_pending();
    if (fds[4].revents & (POLLHUP | POLLERR | POLLNVAL)) listener = -1;  // no task left that uses the filter
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
  // the pipe does not keep the supervisor waiting.
  for (Stream* s : {&out, &err}) {
    if (s->fd < 0) continue;
    ::fcntl(s->fd, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 1024 && s->fd >= 0; ++i) {
      const uint64_t before = s->count;
      if (!s->relay()) break;
      if (s->fd >= 0 && s->count == before) break;  // EAGAIN: nothing more now
    }
    if (s->fd >= 0) ::close(s->fd);
  }
  result.stdout_bytes = out.count;
  result.stderr_bytes = err.count;
  return result;
}

}  // namespace aasm
