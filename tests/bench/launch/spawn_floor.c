/* The floor of any launcher process (issue 26, `./run bench`): a static
 * program that does nothing but start the command and wait for it, linked
 * as aasm-launch is (a static PIE), so that what it costs over the bare
 * command is what a separate launcher costs before it confines anything:
 * its own exec, start-up and exit, and one more process start.
 *
 *   bench-spawn-floor COMMAND [ARG...]
 *
 * vfork (clone(CLONE_VM | CLONE_VFORK), as aasm-launch's clone(CLONE_VM):
 * no page table copied; not posix_spawn, whose child resets every signal's
 * disposition, 64 calls), execve, waitpid; exits with the command's status
 * (128+N for signal N), 125 on usage or wait errors, 127 when exec fails. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench-spawn-floor COMMAND [ARG...]\n");
    return 125;
  }
  const pid_t pid = vfork();
  if (pid == 0) {
    execve(argv[1], argv + 1, environ);
    _exit(127);
  }
  if (pid < 0) {
    fprintf(stderr, "bench-spawn-floor: vfork: %s\n", strerror(errno));
    return 125;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 125;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
