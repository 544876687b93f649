/* The launch-time benchmark's floor (docs/benchmarks.md, "Launch time"): the
 * least a launcher must do to run a command under Landlock and seccomp, and
 * nothing else. libc only.
 *
 *   bench-reference-launcher [--unshare] [FILTER.bpf...] -- COMMAND [ARG...]
 *
 * Parent: read each FILTER.bpf (a raw struct sock_filter array, from
 * bench-export-filter), create a Landlock ruleset handling every filesystem
 * right up to ABI 5 that this kernel knows, add three path-beneath rules
 * (/usr read+execute, /etc read, /tmp read+write), fork, wait, exit with the
 * command's status (128+N for signal N).
 * Child: no_new_privs, landlock_restrict_self, the filters in the order
 * given (the plan's install order, main program last), execv(COMMAND): no
 * PATH lookup, no session, no parent-death signal, no descriptor hygiene,
 * no self-check, no supervision.
 *
 * --unshare: the same plus the namespaces bwrap --unshare-all creates, as
 * cheaply as the kernel allows: unshare(CLONE_NEWPID) before the fork (the
 * child is pid 1 of a new namespace), then, in the child, unshare of the
 * mount, UTS, IPC, network and cgroup namespaces. Root only (no user
 * namespace is made). It measures the kernel's price of the namespaces,
 * without any mount set-up.
 *
 * Exit 125 when a step fails (a message on stderr), 126/127 when execv fails. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The Landlock UAPI, spelled out: the build host's headers may predate ABI 5. */
#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_ABI1 ((1ull << 13) - 1) /* execute .. make_sym */
#define LL_FS_REFER (1ull << 13)       /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)    /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)   /* ABI 5 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
};
struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

#define MAX_FILTERS 8

static void die(const char *what) {
  fprintf(stderr, "bench-reference-launcher: %s: %s\n", what, strerror(errno));
  exit(125);
}

static struct sock_fprog read_filter(const char *path) {
  struct sock_fprog prog = {0, NULL};
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) die(path);
  if (st.st_size <= 0 || st.st_size % (off_t)sizeof(struct sock_filter) != 0 ||
      st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
    fprintf(stderr, "bench-reference-launcher: %s: not a sock_filter array\n", path);
    exit(125);
  }
  prog.filter = malloc((size_t)st.st_size);
  if (!prog.filter || read(fd, prog.filter, (size_t)st.st_size) != st.st_size) die(path);
  prog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
  close(fd);
  return prog;
}

static void add_rule(int ruleset, const char *path, uint64_t access, uint64_t handled) {
  struct ll_path_beneath_attr rule = {access & handled, open(path, O_PATH | O_CLOEXEC)};
  if (rule.parent_fd < 0) die(path);
  if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0) != 0) die("landlock_add_rule");
  close(rule.parent_fd);
}

int main(int argc, char **argv) {
  struct sock_fprog filters[MAX_FILTERS];
  int filter_count = 0, unshare_all = 0, i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    if (strcmp(argv[i], "--unshare") == 0) {
      unshare_all = 1;
    } else if (filter_count < MAX_FILTERS) {
      filters[filter_count++] = read_filter(argv[i]);
    } else {
      fprintf(stderr, "bench-reference-launcher: at most %d filters\n", MAX_FILTERS);
      return 125;
    }
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "usage: %s [--unshare] [FILTER.bpf...] -- COMMAND [ARG...]\n", argv[0]);
    return 125;
  }
  char **command = argv + i + 1;

  const long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi < 1) die("landlock_create_ruleset(VERSION)");
  struct ll_ruleset_attr attr = {LL_FS_ABI1};
  if (abi >= 2) attr.handled_access_fs |= LL_FS_REFER;
  if (abi >= 3) attr.handled_access_fs |= LL_FS_TRUNCATE;
  if (abi >= 5) attr.handled_access_fs |= LL_FS_IOCTL_DEV;
  const uint64_t handled = attr.handled_access_fs;
  const int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) die("landlock_create_ruleset");
  add_rule(ruleset, "/usr", LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR, handled);
  add_rule(ruleset, "/etc", LL_FS_READ_FILE | LL_FS_READ_DIR, handled);
  add_rule(ruleset, "/tmp", handled & ~LL_FS_EXECUTE, handled);

  if (unshare_all && unshare(CLONE_NEWPID) != 0) die("unshare(CLONE_NEWPID)");
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    if (unshare_all && unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWCGROUP) != 0)
      die("unshare");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS");
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) die("landlock_restrict_self");
    close(ruleset);
    for (int f = 0; f < filter_count; ++f)
      if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filters[f]) != 0) die("seccomp");
    execv(command[0], command);
    _exit(errno == ENOENT ? 127 : 126);
  }
  close(ruleset);
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) die("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
