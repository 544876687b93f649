#include "kernel/landlock_self_check.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>

#include "kernel/raw_syscall.h"

namespace aasm::landlock::self_check {
namespace {

Result judge(long answer, int refusal) {
  if (answer == -refusal) return {Outcome::kRefused, 0};
  return {Outcome::kNotRefused, answer >= 0 ? 0 : int(-answer)};
}

// socket + connect or bind of 127.0.0.1:0. A host without IPv4 sockets
// cannot be tested (not a failure of the ruleset).
Result tcp(long operation) {
  const long fd = raw::syscall4(SYS_socket, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {Outcome::kNotPossible, int(-fd)};
  sockaddr_in loopback{};
  loopback.sin_family = AF_INET;
  loopback.sin_port = 0;
  loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const long answer = raw::syscall4(operation, fd, long(&loopback), sizeof loopback);
  raw::syscall4(SYS_close, fd);
  return judge(answer, EACCES);
}

// Short, fixed and unlikely to exist: "/.aasm-write-check-" and the pid.
void check_name(char* out, long pid) {
  const char prefix[] = ".aasm-write-check-";
  char* at = out;
  for (const char* p = prefix; *p; ++p) *at++ = *p;
  char digits[20];
  int n = 0;
  do digits[n++] = char('0' + pid % 10); while ((pid /= 10) > 0);
  while (n > 0) *at++ = digits[--n];
  *at = '\0';
}

}  // namespace

Result read_directory(int directory_fd) {
  const long fd = raw::syscall4(SYS_openat, directory_fd, long("."), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) raw::syscall4(SYS_close, fd);
  return judge(fd, EACCES);
}

Result make_directory(int directory_fd) {
  char name[48];
  check_name(name, raw::syscall4(SYS_getpid));
  const long answer = raw::syscall4(SYS_mkdirat, directory_fd, long(name), 0700);
  if (answer == 0) raw::syscall4(SYS_unlinkat, directory_fd, long(name), AT_REMOVEDIR);
  return judge(answer, EACCES);
}

Result tcp_connect() { return tcp(SYS_connect); }
Result tcp_bind() { return tcp(SYS_bind); }

Result signal_process(pid_t process) { return judge(raw::syscall4(SYS_kill, process, 0), EPERM); }

}  // namespace aasm::landlock::self_check
