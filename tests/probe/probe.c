// aasm-probe: performs one operation and prints one line, `OK` (exit 0) or
// the errno name such as `EACCES` (exit 1). The kernel tests run it under
// aasm-launch, so its own system calls are few and known: besides libc
// start-up it uses only write(2) on stdout, the syscall its op names, and
// exit_group. No stdio: printf would add fstat/brk to the footprint.
//
// strace on Debian 12 (glibc 2.36), start-up: execve brk arch_prctl mmap
// access openat newfstatat close read pread64 mprotect munmap
// set_tid_address set_robust_list rseq prlimit64. Ops: read = openat read;
// write = openat write; exec = execve; getppid = getppid; raise = getpid
// kill; exit = nothing more.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

static int say(const char* line) {
  size_t n = strlen(line);
  (void)!write(STDOUT_FILENO, line, n);
  (void)!write(STDOUT_FILENO, "\n", 1);
  return 0;
}

static int ok(void) {
  say("OK");
  return 0;
}

static int fail(int error) {
  const char* name = strerrorname_np(error);
  say(name ? name : "EUNKNOWN");
  return 1;
}

static int usage(void) {
  static const char text[] =
      "usage: aasm-probe read PATH | write PATH | exec PATH [ARG...] | getppid\n"
      "                | exit N | raise SIGNAL\n";
  (void)!write(STDERR_FILENO, text, sizeof text - 1);
  return 2;
}

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const char* op = argv[1];
  if (strcmp(op, "read") == 0 && argc == 3) {
    int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(errno);
    char byte;
    if (read(fd, &byte, 1) < 0) return fail(errno);
    return ok();
  }
  if (strcmp(op, "write") == 0 && argc == 3) {
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return fail(errno);
    if (write(fd, "x", 1) != 1) return fail(errno);
    return ok();
  }
  if (strcmp(op, "exec") == 0 && argc >= 3) {
    execve(argv[2], argv + 2, environ);
    return fail(errno);
  }
  if (strcmp(op, "getppid") == 0 && argc == 2) {
    // Raw syscall: libc must not substitute or cache another call.
    long ppid = syscall(SYS_getppid);
    if (ppid < 0) return fail(errno);
    return ppid > 0 ? ok() : fail(ESRCH);
  }
  if (strcmp(op, "exit") == 0 && argc == 3) return atoi(argv[2]);
  if (strcmp(op, "raise") == 0 && argc == 3) {
    // kill(getpid()) rather than raise(): raise() also blocks signals with
    // rt_sigprocmask and uses tgkill.
    if (syscall(SYS_kill, syscall(SYS_getpid), atoi(argv[2])) != 0) return fail(errno);
    return ok();  // still alive: signal 0, or one that does not kill
  }
  return usage();
}
