#include "supervisor/janitor.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kernel/descriptors.h"

namespace aasm {
namespace {

constexpr char kDone = 'd';

[[noreturn]] void janitor_main(int pipe_read, pid_t process_group) {
  // Its own session and deaf to the terminal's and the supervisor's signals:
  // it must outlive the supervisor to do its one job.
  ::setsid();
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  descriptors::close_inherited(pipe_read, -1);
  for (int fd = 0; fd <= 2; ++fd) ::close(fd);
  char byte = 0;
  ssize_t n;
  while ((n = ::read(pipe_read, &byte, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && byte == kDone) _exit(0);
  // The supervisor is gone without cleaning up: end the command's group.
  ::kill(-process_group, SIGKILL);
  _exit(0);
}

}  // namespace

Result<Janitor> Janitor::start(pid_t process_group) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return make_error(std::string("janitor: pipe2: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return make_error(std::string("janitor: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[1]);
    janitor_main(fds[0], process_group);
  }
  ::close(fds[0]);
  return Janitor(fds[1], pid);
}

Janitor::Janitor(Janitor&& other) noexcept : pipe_write_(other.pipe_write_), pid_(other.pid_) {
  other.pipe_write_ = -1;
  other.pid_ = -1;
}

void Janitor::release() {
  if (pipe_write_ < 0) return;
  const char done = kDone;
  while (::write(pipe_write_, &done, 1) < 0 && errno == EINTR) {
  }
  ::close(pipe_write_);
  pipe_write_ = -1;
  // Not waited for: the supervisor exits right after, and the janitor, which
  // leaves as soon as it reads the byte, is reaped by whoever inherits it.
  pid_ = -1;
}

Janitor::~Janitor() { release(); }

}  // namespace aasm
