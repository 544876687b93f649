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
// kill; exit = nothing more. The seccomp ops (tests/kernel/seccomp_test.cpp)
// make one raw system call each (plus pipe2, wait4 or seccomp where named):
// the filter's answer is what they print, so no libc wrapper may substitute
// another call or check arguments itself.
//
// SAFETY: the tests also run these ops without a syscall filter, as root,
// to show the kernel's own answer. Every dangerous call (`danger NAME`,
// io_uring_setup) is therefore made with arguments the kernel refuses
// before doing anything: NULL pointers, bad descriptors, an invalid reboot
// magic, out-of-range counts and flags. Never give them valid ones.
//
// The Landlock ops (tests/kernel/landlock_test.cpp) change only what their
// arguments name: the tests give them paths in their own temp dirs, ports
// on 127.0.0.1 they listen on, abstract socket names they own and pids of
// sentinel processes they started. `ptrace-attach-parent` detaches at once
// when the attach succeeds. The network ops never address anything but
// 127.0.0.1, so no op can send traffic off the machine. The socket-family
// ops (tests/kernel/attack_network_test.cpp) only create a socket and close
// it; `unix-connect` connects to a socket file the test listens on in its
// own temp dir. The filesystem-view ops (tests/kernel/mount_view_test.cpp:
// stat, symlink, unlink, rmdir, mmap-exec) are given paths in the test's
// own temp dirs, as the view shows them.
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL 0x0008U  // Linux 6.3; glibc 2.36's headers predate it
#endif

extern char** environ;

// `aasm-probe status OP ...`: no output, the errno as the exit status (0
// for OK), for plans that do not allow write(2) (capabilities.deny: [syscall]).
static int g_status_only;

static int say(const char* line) {
  if (g_status_only) return 0;
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
  return g_status_only ? error : 1;
}

static int usage(void);

// OK for a non-negative result, else errno's name.
static int result(long rc) { return rc < 0 ? fail(errno) : ok(); }

// A bare system call number, every argument 0. For numbers no kernel table
// names (the tests use 400 and 1000) and for harmless calls only.
static int op_sys(long nr) { return result(syscall(nr, 0, 0, 0, 0, 0, 0)); }

// COUNT calls of the numbers FIRST, FIRST+1, ...: numbers no kernel table
// names yet (the tests give 1000 and up), which the kernel answers ENOSYS
// and the plan's filter too, each a denial of its own
// (tests/kernel/denials_seccomp_test.cpp). Prints the last answer.
static int op_flood(long first, long count) {
  long answer = 0;
  for (long i = 0; i < count; ++i) answer = syscall(first + i, 0, 0, 0, 0, 0, 0);
  return result(answer);
}

// getpid through the x32 ABI: the x86_64 number with bit 30 set.
static int op_x32_getpid(void) {
#ifdef __x86_64__
  return result(syscall(0x40000000L | SYS_getpid));
#else
  say("UNSUPPORTED");
  return 3;
#endif
}

// getpid (i386 number 20) through the 32-bit `int 0x80` gate from 64-bit
// code: the kernel runs it as an i386 call (AUDIT_ARCH_I386).
static int op_int80_getpid(void) {
#ifdef __x86_64__
  long rc = 20;
  __asm__ volatile("int $0x80" : "+a"(rc) : : "memory", "r8", "r9", "r10", "r11");
  if (rc < 0 && rc > -4096) return fail((int)-rc);
  return rc > 0 ? ok() : fail(ESRCH);
#else
  say("UNSUPPORTED");
  return 3;
#endif
}

// ioctl on the read end of a fresh pipe: no terminal, so a request that
// gets past the filter fails with the kernel's own ENOTTY and changes
// nothing, while the filter's answer (EPERM) stays visible.
static int op_ioctl_pipe(const char* which) {
  unsigned long request;
  if (strcmp(which, "tiocsti") == 0) request = TIOCSTI;
  else if (strcmp(which, "tiocsti-high") == 0) request = (unsigned long)TIOCSTI | (1UL << 32);
  else if (strcmp(which, "tioclinux") == 0) request = TIOCLINUX;
  else if (strcmp(which, "tcgets") == 0) request = TCGETS;
  else return usage();
  int fds[2];
  if (syscall(SYS_pipe2, fds, O_CLOEXEC) != 0) {
    say("PIPE-FAILED");
    return 3;
  }
  char c = 'x';
  char buffer[64];
  return result(syscall(SYS_ioctl, fds[0], request, strcmp(which, "tcgets") == 0 ? (void*)buffer : (void*)&c));
}

// clone_args as of Linux 5.3 (CLONE_ARGS_SIZE_VER0, 64 bytes).
struct clone_args_v0 {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

// A child through clone or clone3 (fork-like: no new stack, no CLONE_VM)
// that exits at once; the parent reaps it. OK when a child was made.
static int op_clone(const char* which, int version3) {
  unsigned long flags;
  if (strcmp(which, "plain") == 0) flags = 0;
  else if (strcmp(which, "newuser") == 0) flags = CLONE_NEWUSER;
  else if (strcmp(which, "newuser-newnet") == 0) flags = CLONE_NEWUSER | CLONE_NEWNET;
  else return usage();
  long pid;
  if (version3) {
    struct clone_args_v0 args;
    memset(&args, 0, sizeof args);
    args.flags = flags;
    args.exit_signal = SIGCHLD;
    pid = syscall(SYS_clone3, &args, sizeof args);
  } else {
    // x86_64 and aarch64 order: flags, stack, parent_tid, child_tid, tls.
    pid = syscall(SYS_clone, flags | SIGCHLD, 0, NULL, NULL, 0);
  }
  if (pid < 0) return fail(errno);
  if (pid == 0) syscall(SYS_exit_group, 0);
  int status = 0;
  if (syscall(SYS_wait4, pid, &status, 0, NULL) != pid) {
    say("WAIT-FAILED");
    return 3;
  }
  return ok();
}

// The rest of the calls moby's default profile refuses (and the deny groups
// @privileged, @debug, @kernel, @mount name), each with arguments the
// kernel refuses or that change nothing: a query, a comparison of the
// probe with itself, a bad descriptor, an out-of-range level or flag.
// PTRACE_TRACEME only makes the probe's parent its tracer until it exits.
static int op_danger_more(const char* name) {
  long rc;
  if (strcmp(name, "personality") == 0) {
    rc = syscall(SYS_personality, 0xffffffffUL);  // query only
  } else if (strcmp(name, "kcmp") == 0) {
    const long self = syscall(SYS_getpid);
    rc = syscall(SYS_kcmp, self, self, 0 /* KCMP_FILE */, 0, 0);
  } else if (strcmp(name, "lookup_dcookie") == 0) {
    rc = syscall(SYS_lookup_dcookie, 0, NULL, 0);
  } else if (strcmp(name, "pidfd_getfd") == 0) {
    rc = syscall(SYS_pidfd_getfd, -1, 0, 0);  // bad pidfd
  } else if (strcmp(name, "process_vm_writev") == 0) {
    rc = syscall(SYS_process_vm_writev, INT_MAX, NULL, 1, NULL, 1, 0);  // NULL iovecs, no such pid
  } else if (strcmp(name, "ptrace_traceme") == 0) {
    rc = syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, NULL, NULL);
  } else if (strcmp(name, "userfaultfd") == 0) {
    rc = syscall(SYS_userfaultfd, 0xffffffffU);  // unknown flags
  } else if (strcmp(name, "syslog") == 0) {
    rc = syscall(SYS_syslog, 1000 /* no such action */, NULL, 0);
  } else if (strcmp(name, "delete_module") == 0) {
    rc = syscall(SYS_delete_module, NULL, 0);  // NULL name
  } else if (strcmp(name, "request_key") == 0) {
    rc = syscall(SYS_request_key, NULL, NULL, NULL, 0);  // NULL type
  } else if (strcmp(name, "kexec_file_load") == 0) {
    // Never KEXEC_FILE_UNLOAD (1): unknown flags only.
    rc = syscall(SYS_kexec_file_load, -1, -1, 0, NULL, 0xdead0000UL);
  } else if (strcmp(name, "swapoff") == 0) {
    rc = syscall(SYS_swapoff, NULL);  // NULL path
  } else if (strcmp(name, "acct") == 0) {
    rc = syscall(SYS_acct, (void*)1);  // never NULL: that switches accounting off
  } else if (strcmp(name, "settimeofday") == 0) {
    rc = syscall(SYS_settimeofday, (void*)1, NULL);  // unreadable timeval
  } else if (strcmp(name, "clock_settime") == 0) {
    rc = syscall(SYS_clock_settime, INT_MAX /* no such clock */, NULL);
  } else if (strcmp(name, "clock_adjtime") == 0) {
    rc = syscall(SYS_clock_adjtime, INT_MAX /* no such clock */, NULL);
#ifdef __x86_64__
  } else if (strcmp(name, "iopl") == 0) {
    rc = syscall(SYS_iopl, 4);  // levels end at 3
  } else if (strcmp(name, "ioperm") == 0) {
    rc = syscall(SYS_ioperm, 0x10000UL, 1UL, 1);  // past the last port
#endif
  } else if (strcmp(name, "quotactl") == 0) {
    rc = syscall(SYS_quotactl, 0, NULL, 0, NULL);  // no device: never Q_SYNC
  } else if (strcmp(name, "vhangup") == 0) {
    rc = syscall(SYS_vhangup);  // the probe leads a session without a terminal
  } else if (strcmp(name, "chroot") == 0) {
    rc = syscall(SYS_chroot, NULL);  // NULL path
  } else if (strcmp(name, "open_by_handle_at") == 0) {
    rc = syscall(SYS_open_by_handle_at, -1, NULL, 0);  // bad descriptor, NULL handle
  } else if (strcmp(name, "name_to_handle_at") == 0) {
    rc = syscall(SYS_name_to_handle_at, AT_FDCWD, NULL, NULL, NULL, 0);  // NULL path
  } else if (strcmp(name, "sethostname") == 0) {
    rc = syscall(SYS_sethostname, NULL, -1);  // negative length
  } else if (strcmp(name, "fanotify_init") == 0) {
    rc = syscall(SYS_fanotify_init, 0xffffffffU, 0);  // unknown flags
  } else if (strcmp(name, "open_tree") == 0) {
    rc = syscall(SYS_open_tree, -1, NULL, 0);  // bad descriptor, NULL path
  } else if (strcmp(name, "fsopen") == 0) {
    rc = syscall(SYS_fsopen, NULL, 0);  // NULL file-system name
  } else {
    return usage();
  }
  return result(rc);
}

// One call of the deny groups @debug, @kernel and @mount, always with
// arguments the kernel refuses before acting (see SAFETY above).
static int op_danger(const char* name) {
  long rc;
  if (strcmp(name, "ptrace") == 0) {
    rc = syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, INT_MAX /* no such pid */, NULL, NULL);
  } else if (strcmp(name, "process_vm_readv") == 0) {
    rc = syscall(SYS_process_vm_readv, INT_MAX, NULL, 1, NULL, 1, 0);  // NULL iovecs, no such pid
  } else if (strcmp(name, "bpf") == 0) {
    rc = syscall(SYS_bpf, INT_MAX /* no such command */, NULL, 0);
  } else if (strcmp(name, "perf_event_open") == 0) {
    rc = syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);  // NULL attr
  } else if (strcmp(name, "init_module") == 0) {
    rc = syscall(SYS_init_module, NULL, 0, NULL);  // NULL image, NULL args
  } else if (strcmp(name, "finit_module") == 0) {
    rc = syscall(SYS_finit_module, -1, NULL, 0);  // bad fd
  } else if (strcmp(name, "kexec_load") == 0) {
    // Never nr_segments 0 with valid flags: that unloads a loaded kernel.
    rc = syscall(SYS_kexec_load, 0, 1000 /* > KEXEC_SEGMENT_MAX */, NULL, 0xdead0000UL /* no such arch */);
  } else if (strcmp(name, "reboot") == 0) {
    rc = syscall(SYS_reboot, 0, 0, 0, NULL);  // wrong magic numbers
  } else if (strcmp(name, "swapon") == 0) {
    rc = syscall(SYS_swapon, NULL, 0);  // NULL path
  } else if (strcmp(name, "add_key") == 0) {
    rc = syscall(SYS_add_key, NULL, NULL, NULL, 0, 0);  // NULL type
  } else if (strcmp(name, "keyctl") == 0) {
    rc = syscall(SYS_keyctl, INT_MAX /* no such operation */, 0, 0, 0, 0);
  } else if (strcmp(name, "mount") == 0) {
    rc = syscall(SYS_mount, NULL, NULL, NULL, 0, NULL);  // NULL target
  } else if (strcmp(name, "umount2") == 0) {
    rc = syscall(SYS_umount2, NULL, 0x80000000);  // NULL target, unknown flag
  } else if (strcmp(name, "pivot_root") == 0) {
    rc = syscall(SYS_pivot_root, NULL, NULL);  // NULL paths
  } else {
    return op_danger_more(name);
  }
  return result(rc);
}

// Installs an allow-everything filter of its own (no_new_privs is already
// set by aasm-launch), then calls getppid: the launcher's filters still
// answer, since the kernel runs every filter and keeps the strictest.
static int op_own_filter_then_getppid(void) {
  struct sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {1, allow_all};
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    const char* name = strerrorname_np(errno);
    (void)!write(STDOUT_FILENO, "SECCOMP-", 8);
    say(name ? name : "EUNKNOWN");
    return 3;
  }
  return result(syscall(SYS_getppid));
}

// --- Namespace and execution ops (tests/kernel/attack_exec_test.cpp) ---

// unshare moves only the probe itself into namespaces that die with it:
// harmless even unfiltered, as root. setns gets a descriptor that does not
// exist, so the kernel's own answer is EBADF and the filter's stays visible.
static int op_unshare(const char* which) {
  unsigned long flags;
  if (strcmp(which, "user") == 0) flags = CLONE_NEWUSER;
  // With CLONE_NEWUSER: the new user namespace gives the probe, whose
  // capabilities aasm-launch dropped, the CAP_SYS_ADMIN a mount namespace
  // needs, so only the filter can refuse it.
  else if (strcmp(which, "user-mount") == 0) flags = CLONE_NEWUSER | CLONE_NEWNS;
  else return usage();
  return result(syscall(SYS_unshare, flags));
}

// Copies the probe's own image into `fd` (read through /proc/self/exe).
static int copy_self(int fd) {
  int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (self < 0) return -1;
  char buffer[65536];
  ssize_t n;
  while ((n = read(self, buffer, sizeof buffer)) > 0)
    if (write(fd, buffer, (size_t)n) != n) return -1;
  close(self);
  return n < 0 ? -1 : 0;
}

// Runs the copy behind `fd` as `aasm-probe ok` (which prints OK): by
// execveat(fd, "", AT_EMPTY_PATH) or by execve of /proc/self/fd/N.
static int exec_descriptor(int fd, const char* how) {
  char* const argv[] = {"aasm-probe", "ok", NULL};
  if (strcmp(how, "execveat") == 0) {
    syscall(SYS_execveat, fd, "", argv, environ, AT_EMPTY_PATH);
  } else {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    execve(path, argv, environ);
  }
  return fail(errno);
}

// memfd_create (sealed non-executable or not), a copy of the probe in it,
// then exec of the descriptor. Prints the first refusal.
static int op_memfd_exec(const char* seal, const char* how) {
  const unsigned flags = strcmp(seal, "sealed") == 0 ? MFD_NOEXEC_SEAL : 0;
  int fd = (int)syscall(SYS_memfd_create, "aasm-probe", flags);
  if (fd < 0 || copy_self(fd) != 0) return fail(errno);
  return exec_descriptor(fd, how);
}

// The same through a file on disk that no path leads to any more: an
// O_TMPFILE in DIR, or DIR/name written, reopened and unlinked.
static int op_unnamed_exec(const char* kind, const char* dir, const char* how) {
  int fd;
  if (strcmp(kind, "tmpfile") == 0) {
    fd = open(dir, O_TMPFILE | O_RDWR, 0700);
  } else {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/aasm-probe-deleted", dir);
    int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
    if (out < 0 || copy_self(out) != 0) return fail(errno);
    close(out);
    fd = open(path, O_RDONLY);
    if (fd >= 0 && unlink(path) != 0) return fail(errno);
    return fd < 0 ? fail(errno) : exec_descriptor(fd, how);
  }
  if (fd < 0 || copy_self(fd) != 0) return fail(errno);
  // A descriptor open for writing makes exec fail with ETXTBSY: reopen it
  // read-only through /proc and close the writer.
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  int reader = open(path, O_RDONLY);
  if (reader < 0) return fail(errno);
  close(fd);
  return exec_descriptor(reader, how);
}

// fexecve of a file opened by PATH (an executable one in an executable tree).
static int op_fexec(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  return exec_descriptor(fd, "execveat");
}

// --- Landlock ops (tests/kernel/landlock_test.cpp) ---

// The parent's first child other than the probe, from
// /proc/PARENT/task/PARENT/children: under aasm-launch, the janitor. 0 when
// there is none.
static long janitor_pid(void) {
  const long self = syscall(SYS_getpid), parent = syscall(SYS_getppid);
  char path[64], children[4096];
  snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", parent, parent);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, children, sizeof children - 1);
  close(fd);
  if (n <= 0) return 0;
  children[n] = '\0';
  for (char* next = children; *next;) {
    const long pid = strtol(next, &next, 10);
    if (pid <= 1) break;
    if (pid != self) return pid;
  }
  return 0;
}

// A pid argument: a number, "self", "parent" for getppid() (under
// aasm-launch, the supervisor) or "janitor".
static long pid_arg(const char* text) {
  if (strcmp(text, "parent") == 0) return syscall(SYS_getppid);
  if (strcmp(text, "janitor") == 0) return janitor_pid();
  if (strcmp(text, "self") == 0) return syscall(SYS_getpid);
  return strtol(text, NULL, 10);
}

// Opens the file read-only, then re-opens it through /proc/self/fd/N for
// reading and writing (nothing is written).
static int op_reopen_rw(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    say("OPEN-FAILED");
    return 3;
  }
  char magic[64];
  snprintf(magic, sizeof magic, "/proc/self/fd/%d", fd);
  return result(open(magic, O_RDWR | O_CLOEXEC));
}

// The first readable address of PID's memory map, from /proc/PID/maps; 0
// when the map cannot be read.
static unsigned long first_readable_address(long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/maps", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0) return 0;
  buffer[n] = 0;
  for (char* line = buffer; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    unsigned long start, end;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && perms[0] == 'r') return start;
  }
  return 0;
}

// Opens /proc/PID/FILE read-only and reads one byte: for `mem`, at the
// first readable address of the process's map (read-only: nothing is
// changed). OK when a byte was read.
static int op_read_proc(const char* pid_text, const char* file) {
  long pid = pid_arg(pid_text);
  if (pid <= 0) return fail(ESRCH);
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/%s", pid, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  char byte;
  ssize_t n;
  if (strcmp(file, "mem") == 0) {
    unsigned long address = first_readable_address(pid);
    if (address == 0) {
      say("NO-MAPS");
      return 3;
    }
    n = pread(fd, &byte, 1, (off_t)address);
  } else {
    n = read(fd, &byte, 1);
  }
  if (n < 0) return fail(errno);
  return n == 1 ? ok() : fail(ENODATA);
}

// readlink of /proc/PID/FILE (root, cwd, exe, fd/0): OK when it answered.
static int op_readlink_proc(const char* pid_text, const char* file) {
  const long pid = pid_arg(pid_text);
  if (pid <= 0) return fail(ESRCH);
  char path[64], target[PATH_MAX];
  snprintf(path, sizeof path, "/proc/%ld/%s", pid, file);
  return result(readlink(path, target, sizeof target));
}

// PTRACE_ATTACH to the parent (the supervisor). When it succeeds, waits for
// the attach stop and detaches at once, so the supervisor runs on.
// PTRACE_ATTACH, wait for the attach stop, detach at once.
static int op_ptrace_attach(long pid) {
  if (syscall(SYS_ptrace, PTRACE_ATTACH, pid, NULL, NULL) != 0) return fail(errno);
  int status = 0;
  long waited = syscall(SYS_wait4, pid, &status, __WALL, NULL);
  long detached = syscall(SYS_ptrace, PTRACE_DETACH, pid, NULL, NULL);
  if (waited != pid || detached != 0) {
    say("DETACH-FAILED");
    return 3;
  }
  return ok();
}

static int op_ptrace_attach_parent(void) { return op_ptrace_attach(syscall(SYS_getppid)); }

static struct sockaddr_in loopback(const char* port) {
  struct sockaddr_in address;
  memset(&address, 0, sizeof address);
  address.sin_family = AF_INET;
  address.sin_port = htons((uint16_t)atoi(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// TCP to 127.0.0.1:PORT: connect, or bind (and listen).
static int op_tcp(const char* what, const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  if (strcmp(what, "connect") == 0) return result(connect(fd, (struct sockaddr*)&address, sizeof address));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr*)&address, sizeof address) != 0) return fail(errno);
  return result(listen(fd, 1));
}

// connect() to 127.0.0.1:PORT through a seccomp listener of the probe's
// own that answers CONTINUE: were it allowed beside the launcher's, it would
// take connect() from it (the newest filter's notification wins). The
// connect runs in a forked child; the parent answers its one notification
// and prints the child's result (or why its listener was refused).
static int op_tcp_connect_own_listener(const char* port) {
  struct sock_filter notify_connect[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_connect, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {4, notify_connect};
  int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
  if (listener < 0) return fail(errno);
  pid_t child = fork();
  if (child < 0) return fail(errno);
  if (child == 0) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = loopback(port);
    _exit(fd >= 0 && connect(fd, (struct sockaddr*)&address, sizeof address) == 0 ? 0 : errno);
  }
  struct seccomp_notif call;
  memset(&call, 0, sizeof call);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &call) != 0) return fail(errno);
  struct seccomp_notif_resp answer;
  memset(&answer, 0, sizeof answer);
  answer.id = call.id;
  answer.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &answer) != 0) return fail(errno);
  int status = 0;
  if (waitpid(child, &status, 0) < 0) return fail(errno);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ok() : fail(WIFEXITED(status) ? WEXITSTATUS(status) : EINTR);
}

// The address races the launcher's answer: a thread flips the port between
// ALLOWED and REFUSED while the probe connects COUNT times, so the launcher
// may read ALLOWED and the kernel connect to REFUSED. Stops at the first
// connect that succeeds (`OK`), else prints the last errno.
static volatile struct sockaddr_in g_racing_address;
static volatile int g_race_over;
static uint16_t g_race_ports[2];

static void* flip_port(void* unused) {
  (void)unused;
  for (unsigned i = 0; !g_race_over; ++i) g_racing_address.sin_port = g_race_ports[i & 1];
  return NULL;
}

static int op_tcp_connect_race(const char* allowed, const char* refused, long count) {
  struct sockaddr_in start = loopback(allowed);
  memcpy((void*)&g_racing_address, &start, sizeof start);
  g_race_ports[0] = htons((uint16_t)atoi(allowed));
  g_race_ports[1] = htons((uint16_t)atoi(refused));
  pthread_t flipper;
  if (pthread_create(&flipper, NULL, flip_port, NULL) != 0) return fail(EAGAIN);
  long connected = 0;
  int last = 0;
  for (long i = 0; i < count; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last = errno;
      break;
    }
    if (connect(fd, (struct sockaddr*)&g_racing_address, sizeof start) == 0) {
      connected = 1;
      break;
    }
    last = errno;
    close(fd);
  }
  g_race_over = 1;
  pthread_join(flipper, NULL);
  return connected > 0 ? ok() : fail(last);
}

// One datagram "x" to 127.0.0.1:PORT.
static int op_udp_send(const char* port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  return result(sendto(fd, "x", 1, 0, (struct sockaddr*)&address, sizeof address));
}

// A NETLINK_ROUTE socket, created and closed: nothing is sent.
static int op_netlink_socket(void) {
  return result(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
}

// `OK` when the peer's reply arrives on FD within 5 s (a peer that never
// answers gives EAGAIN rather than a hung test), else the errno name.
static int read_reply(int fd) {
  struct timeval timeout = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char reply[16];
  ssize_t n = recv(fd, reply, sizeof reply, 0);
  return n > 0 ? ok() : fail(n < 0 ? errno : ECONNRESET);
}

// TCP Fast Open to 127.0.0.1:PORT: "ping" through sendto(MSG_FASTOPEN) on a
// fresh socket (no connect()), then the peer's reply. `OK` when the reply
// arrived.
static int op_tcp_fastopen(const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  if (sendto(fd, "ping", 4, MSG_FASTOPEN, (struct sockaddr*)&address, sizeof address) < 0) return fail(errno);
  return read_reply(fd);
}

// setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1) on a fresh TCP socket.
static int op_tcp_fastopen_connect(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  int one = 1;
  return result(setsockopt(fd, IPPROTO_TCP, 30 /* TCP_FASTOPEN_CONNECT */, &one, sizeof one));
}

// A socket of a family, created and closed: nothing is bound, connected or
// sent. `packet` has protocol 0, so it receives nothing either.
static int op_socket(const char* family) {
  int domain, type, protocol = 0;
  if (strcmp(family, "vsock") == 0) domain = AF_VSOCK, type = SOCK_STREAM;
  else if (strcmp(family, "netlink") == 0) domain = AF_NETLINK, type = SOCK_RAW, protocol = NETLINK_ROUTE;
  else if (strcmp(family, "packet") == 0) domain = AF_PACKET, type = SOCK_DGRAM;
  else if (strcmp(family, "alg") == 0) domain = AF_ALG, type = SOCK_SEQPACKET;
  else if (strcmp(family, "inet") == 0) domain = AF_INET, type = SOCK_STREAM;
  else if (strcmp(family, "inet6") == 0) domain = AF_INET6, type = SOCK_STREAM;
  else if (strcmp(family, "unix") == 0) domain = AF_UNIX, type = SOCK_STREAM;
  else return usage();
  return result(socket(domain, type | SOCK_CLOEXEC, protocol));
}

// socketpair(AF_UNIX, TYPE): stream, seqpacket or dgram.
static int op_socketpair(const char* which) {
  int type;
  if (strcmp(which, "stream") == 0) type = SOCK_STREAM;
  else if (strcmp(which, "seqpacket") == 0) type = SOCK_SEQPACKET;
  else if (strcmp(which, "dgram") == 0) type = SOCK_DGRAM;
  else return usage();
  int fds[2];
  return result(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds));
}

// A unix stream socket connected to NAME: a path, or with `abstract` the
// abstract name "\0NAME". The descriptor, or -1 with errno set (EINVAL
// for a name too long).
static int unix_stream_connect(const char* name, int abstract) {
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  size_t length = strlen(name);
  if (length + 1 > sizeof address.sun_path) {
    errno = EINVAL;
    return -1;
  }
  memcpy(address.sun_path + (abstract ? 1 : 0), name, length);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (abstract ? 1 : 0) + length);
  return connect(fd, (struct sockaddr*)&address, size) == 0 ? fd : -1;
}

// connect to the pathname unix stream socket PATH and read its greeting:
// `OK` when a byte arrived.
static int op_unix_connect(const char* path) {
  int fd = unix_stream_connect(path, 0);
  if (fd < 0) return fail(errno);
  return read_reply(fd);
}

// connect to the abstract unix stream socket "\0NAME".
static int op_abstract_connect(const char* name) { return result(unix_stream_connect(name, 1)); }

// --- Supervision ops (tests/kernel/supervision_test.cpp) ---
//
// These exercise what the supervisor does around the command: its
// environment and descriptors, rlimits, the wall-clock deadline, output
// limits, signal forwarding and the parent-death signal. Each one is
// bounded in time by itself (a safety net should the launcher fail to end
// it), writes only paths its arguments name (the tests' temp dirs) and
// signals nothing but itself.

// Seconds since an arbitrary point (CLOCK_MONOTONIC).
static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_seconds(double seconds) {
  double end = now_seconds() + seconds;
  for (double left; (left = end - now_seconds()) > 0;) {
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&ts, NULL);
  }
}

// Writes "PID\n" to PATH through PATH.tmp and a rename, so a reader never
// sees a partial file. 0 on success.
static int write_pid_file(const char* path, long pid) {
  char tmp[PATH_MAX];
  char text[32];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) return -1;
  int n = snprintf(text, sizeof text, "%ld\n", pid);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  int written = write(fd, text, (size_t)n) == n;
  close(fd);
  if (!written) return -1;
  return rename(tmp, path);
}

// Every variable of its environment, one a line, as received.
static int op_env(void) {
  for (char** e = environ; e && *e; ++e) say(*e);
  return 0;
}

// Its open descriptors, one number a line, from /proc/self/fd (the
// directory's own descriptor left out).
static int op_fds(void) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return fail(errno);
  int own = dirfd(dir);
  struct dirent* entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    if (atoi(entry->d_name) == own) continue;
    say(entry->d_name);
  }
  closedir(dir);
  return 0;
}

// Writes N bytes of 'x' to PATH (created, truncated) in 4 KiB pieces; `OK`
// when every byte went, else the errno name (EFBIG when SIGXFSZ is ignored;
// by default the signal ends the process first).
static int op_write_bytes(const char* path, long long total) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail(errno);
  char block[4096];
  memset(block, 'x', sizeof block);
  long long done = 0;
  while (done < total) {
    size_t chunk = total - done < (long long)sizeof block ? (size_t)(total - done) : sizeof block;
    ssize_t n = write(fd, block, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(n < 0 ? errno : EIO);
    done += n;
  }
  return ok();
}

// Opens PATH read-only N times and keeps every descriptor: `OK N` when all
// opened, else `ERRNO after K` (K opened before the failure).
static int op_open_many(const char* path, long count) {
  char line[64];
  for (long i = 0; i < count; ++i) {
    if (open(path, O_RDONLY | O_CLOEXEC) < 0) {
      const char* name = strerrorname_np(errno);
      snprintf(line, sizeof line, "%s after %ld", name ? name : "EUNKNOWN", i);
      say(line);
      return 1;
    }
  }
  snprintf(line, sizeof line, "OK %ld", count);
  say(line);
  return 0;
}

// Blocks every signal it can and spins on the CPU for at most SECONDS, then
// prints `SPUN`: only SIGKILL ends it sooner.
static int op_spin(double seconds) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  double end = now_seconds() + seconds;
  volatile unsigned long spins = 0;
  while (now_seconds() < end) ++spins;
  say("SPUN");
  return 0;
}

// Stops itself with SIGSTOP; prints `CONTINUED` if anything resumes it.
static int op_stop_self(void) {
  if (syscall(SYS_kill, syscall(SYS_getpid), SIGSTOP) != 0) return fail(errno);
  say("CONTINUED");
  return 0;
}

// "y\n" over and over to stdout or stderr: COUNT bytes exactly, or, with
// `forever`, until killed (at most 60 s, a safety net). Exits 0 after a
// bounded count, 4 if writing failed.
static int op_yes(const char* stream, const char* count_text) {
  int fd = strcmp(stream, "err") == 0 ? STDERR_FILENO : STDOUT_FILENO;
  int forever = strcmp(count_text, "forever") == 0;
  long long left = forever ? 0 : atoll(count_text);
  static char block[8192];
  for (size_t i = 0; i < sizeof block; i += 2) block[i] = 'y', block[i + 1] = '\n';
  double end = now_seconds() + 60;
  while (forever ? now_seconds() < end : left > 0) {
    size_t chunk = !forever && left < (long long)sizeof block ? (size_t)left : sizeof block;
    ssize_t n = write(fd, block, chunk);  // pieces of an even size keep the pattern
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 4;
    if (n % 2) return 4;
    left -= n;
  }
  return 0;
}

// Forks a child that sleeps SECONDS holding stdout and stderr (inherited),
// in a session of its own with `setsid`, writes the child's pid to PIDFILE,
// prints `PARENT` and exits 7 at once: once the child is ready (in its own
// session if asked), so the parent's exit never races the child's setsid.
static int op_grandchild(const char* pidfile, double seconds, int own_session) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return fail(errno);
  pid_t child = fork();
  if (child < 0) return fail(errno);
  if (child == 0) {
    close(ready[0]);
    if (own_session && setsid() < 0) _exit(1);
    (void)!write(ready[1], "r", 1);
    close(ready[1]);
    sleep_seconds(seconds);
    _exit(0);
  }
  close(ready[1]);
  char byte;
  if (read(ready[0], &byte, 1) != 1) {
    say("CHILD-NOT-READY");
    return 3;
  }
  if (write_pid_file(pidfile, child) != 0) return fail(errno);
  say("PARENT");
  return 7;
}

static void on_forwarded(int sig) {
  const char* name = sig == SIGTERM ? "TERM\n" : sig == SIGINT ? "INT\n" : sig == SIGHUP ? "HUP\n" : "OTHER\n";
  (void)!write(STDOUT_FILENO, name, strlen(name));
  _exit(0);
}

// Catches SIGTERM, SIGINT and SIGHUP (printing TERM, INT or HUP and exiting
// 0), writes its pid to PIDFILE once they are caught, then sleeps SECONDS
// and prints `TIMEOUT` (exit 3).
static int op_wait_signal(const char* pidfile, double seconds) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_forwarded;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGHUP);
  if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0 ||
      sigaction(SIGHUP, &action, NULL) != 0)
    return fail(errno);
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGTERM);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGHUP);
  sigprocmask(SIG_UNBLOCK, &wanted, NULL);
  if (write_pid_file(pidfile, syscall(SYS_getpid)) != 0) return fail(errno);
  sleep_seconds(seconds);
  say("TIMEOUT");
  return 3;
}

// Writes its pid to PIDFILE; with `stop`, stops the output of the terminal
// on its stdin (ioctl(0, TCXONC, TCOOFF): no need for it to be its
// controlling terminal), as a command may to stall its supervisor's writes;
// then prints `AFTER` (on a terminal stopped so, the write blocks), sleeps
// SECONDS and prints `TIMEOUT` (exit 3). `go`: the same without the stop.
static int op_tty_stall(const char* pidfile, const char* how, double seconds) {
  if (write_pid_file(pidfile, syscall(SYS_getpid)) != 0) return fail(errno);
  if (strcmp(how, "stop") == 0 && ioctl(STDIN_FILENO, TCXONC, TCOOFF) != 0) return fail(errno);
  say("AFTER");
  sleep_seconds(seconds);
  say("TIMEOUT");
  return 3;
}

// Maps N MiB of anonymous memory without touching it: address space, which
// RLIMIT_AS limits and a memory cgroup does not (it counts touched pages).
static int op_map_mib(long mib) {
  void* region = mmap(NULL, (size_t)mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return region == MAP_FAILED ? fail(errno) : ok();
}

// The command's attack on what supervises it: SIGNAL to its parent (the
// supervisor) and to the parent's other children (the janitor), listed in
// /proc/PARENT/task/PARENT/children. One line per target, `parent OK` or
// `child EPERM`; exit 0 only if every signal was delivered. The tests send
// 0 where the signal could be delivered.
static int op_kill_supervisor(int sig) {
  const pid_t self = getpid(), parent = getppid();
  if (parent <= 1) return fail(ESRCH);  // PID 1 of a new namespace: no parent to name
  char line[64];
  int refused = 0;
  long rc = syscall(SYS_kill, parent, sig);
  const char* name = rc == 0 ? "OK" : strerrorname_np(errno);
  snprintf(line, sizeof line, "parent %s", name ? name : "EUNKNOWN");
  say(line);
  refused |= rc != 0;
  char path[64], children[4096];
  snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)parent, (int)parent);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  ssize_t n = read(fd, children, sizeof children - 1);
  close(fd);
  if (n < 0) return fail(errno);
  children[n] = '\0';
  for (char* next = children; *next;) {
    const long pid = strtol(next, &next, 10);
    if (pid <= 1) break;
    if (pid == self) continue;
    rc = syscall(SYS_kill, pid, sig);
    name = rc == 0 ? "OK" : strerrorname_np(errno);
    snprintf(line, sizeof line, "child %s", name ? name : "EUNKNOWN");
    say(line);
    refused |= rc != 0;
  }
  return refused;
}

// --- More attacks (tests/kernel/attack_more_test.cpp) ---
//
// Each changes only what its arguments name: files and directories in the
// tests' temp dirs, the probe's own /proc/self files, a cgroup the test
// made, or a sentinel process the test started (its RLIMIT_NOFILE, a
// signal). open-write opens without O_CREAT or O_TRUNC and writes nothing,
// so the tests may point it at /proc/sys and /sys files.

// A metadata change Landlock does not mediate (chmod, utimensat, setxattr,
// FS_IOC_SETFLAGS through a read-only descriptor): mode 0640, times 0, the
// attribute user.aasm, the no-dump flag.
static int op_meta(const char* what, const char* path) {
  if (strcmp(what, "chmod") == 0) return result(chmod(path, 0640));
  if (strcmp(what, "utime") == 0) {
    const struct timespec epoch[2] = {{0, 0}, {0, 0}};
    return result(utimensat(AT_FDCWD, path, epoch, 0));
  }
  if (strcmp(what, "setxattr") == 0) return result(setxattr(path, "user.aasm", "1", 1, 0));
  // The set-user-ID bit, on an existing file (chmod) or a new one (create).
  if (strcmp(what, "chmod-setuid") == 0) return result(fchmodat(AT_FDCWD, path, 04755, 0));
  // fchmodat2 (Linux 6.6; the same number on x86_64 and aarch64), which
  // this C library does not wrap yet.
  if (strcmp(what, "chmod2-setuid") == 0) return result((int)syscall(452, AT_FDCWD, path, 04755, 0));
  if (strcmp(what, "create-setuid") == 0) {
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 04755);
    if (fd >= 0) close(fd);
    return result(fd);
  }
  // openat2 creating PATH (mode 0600): its mode is out of a filter's reach.
  if (strcmp(what, "openat2-create") == 0) {
    struct {
      uint64_t flags, mode, resolve;
    } how = {O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600, 0};
    const long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0) close((int)fd);
    return result(fd);
  }
  if (strcmp(what, "setflags") == 0) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      say("OPEN-FAILED");
      return 3;
    }
    long flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return fail(errno);
    flags |= FS_NODUMP_FL;
    return result(ioctl(fd, FS_IOC_SETFLAGS, &flags));
  }
  return usage();
}

// prlimit64 on another process: its RLIMIT_NOFILE set to N (soft and hard).
static int op_prlimit(const char* pid_text, long n) {
  const long pid = pid_arg(pid_text);
  if (pid <= 1) return fail(ESRCH);
  const struct rlimit limit = {(rlim_t)n, (rlim_t)n};
  return result(syscall(SYS_prlimit64, pid, RLIMIT_NOFILE, &limit, NULL));
}

// Opens PATH for writing (no O_CREAT, no O_TRUNC) and closes it: nothing
// is written.
static int op_open_write(const char* path) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  close(fd);
  return ok();
}

// Writes TEXT to the existing file PATH (no O_CREAT, no O_TRUNC); `self`
// in TEXT stands for the probe's pid (a cgroup.procs write moves it).
static int op_write_text(const char* path, const char* text) {
  char own[32];
  if (strcmp(text, "self") == 0) {
    snprintf(own, sizeof own, "%ld", syscall(SYS_getpid));
    text = own;
  }
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  const size_t n = strlen(text);
  return result(write(fd, text, n) == (ssize_t)n ? 0 : -1);
}

// Asks for SIGNAL to be sent to PID when a pipe becomes readable (F_SETOWN,
// F_SETSIG, O_ASYNC), then makes it readable. OK when the kernel took
// every step (whether the signal was delivered is the target's to show).
static int op_sigio(const char* pid_text, int sig) {
  const long pid = pid_arg(pid_text);
  int fds[2];
  if (pid <= 1 || pipe2(fds, O_CLOEXEC) != 0) return fail(ESRCH);
  if (fcntl(fds[0], F_SETOWN, (int)pid) != 0 || fcntl(fds[0], F_SETSIG, sig) != 0 ||
      fcntl(fds[0], F_SETFL, O_ASYNC | O_NONBLOCK) != 0)
    return fail(errno);
  if (write(fds[1], "x", 1) != 1) return fail(errno);
  sleep_seconds(0.2);  // the signal is sent from the write: give it time to land
  return ok();
}

// O_PATH needs no right on the file; reading through it must. `proc`
// re-opens /proc/self/fd/N, `at` opens NAME beneath the O_PATH directory.
static int op_opath(const char* how, const char* path, const char* name) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    say("OPATH-FAILED");
    return 3;
  }
  if (strcmp(how, "at") == 0) return result(openat(fd, name, O_RDONLY | O_CLOEXEC));
  char magic[64];
  snprintf(magic, sizeof magic, "/proc/self/fd/%d", fd);
  return result(open(magic, O_RDONLY | O_CLOEXEC));
}

// bind(2) of an AF_UNIX socket at PATH: creates the socket file.
static int op_unix_bind(const char* path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_un address;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof address.sun_path) return usage();
  strcpy(address.sun_path, path);
  return result(bind(fd, (struct sockaddr*)&address, sizeof address));
}

// A receiving endpoint obtained one way (HOW), its port written to
// PORTFILE, then up to 10 s for a peer outside the run: `RECEIVED` when a
// TCP connection was accepted (its first byte read) or a datagram arrived,
// else the errno of the step that failed. HOW:
//   listen-unbound   TCP listen() without bind(): the kernel binds 0.0.0.0:ephemeral
//   listen6-unbound  the same over AF_INET6 ([::]:ephemeral)
//   tcp-bind         TCP bind() of 0.0.0.0:0, then listen()
//   udp-bind         UDP bind() of 0.0.0.0:0
//   udp-sent         UDP sendto() 127.0.0.1:9 first: the kernel binds 0.0.0.0:ephemeral
static int write_port(int fd, const char* portfile) {
  struct sockaddr_in6 local;
  socklen_t length = sizeof local;
  if (getsockname(fd, (struct sockaddr*)&local, &length) != 0) return -1;
  char text[16];
  int n = snprintf(text, sizeof text, "%u\n", ntohs(local.sin6_port));  // same offset in sockaddr_in
  int out = open(portfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return -1;
  ssize_t written = write(out, text, (size_t)n);
  close(out);
  return written == n ? 0 : -1;
}

static int op_serve(const char* how, const char* portfile) {
  const int udp = strncmp(how, "udp", 3) == 0;
  const int domain = strcmp(how, "listen6-unbound") == 0 ? AF_INET6 : AF_INET;
  int fd = socket(domain, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  if (strcmp(how, "tcp-bind") == 0 || strcmp(how, "udp-bind") == 0) {
    struct sockaddr_in any;
    memset(&any, 0, sizeof any);
    any.sin_family = AF_INET;
    if (bind(fd, (struct sockaddr*)&any, sizeof any) != 0) return fail(errno);
  } else if (strcmp(how, "udp-sent") == 0) {
    struct sockaddr_in discard = loopback("9");
    if (sendto(fd, "x", 1, 0, (struct sockaddr*)&discard, sizeof discard) != 1) return fail(errno);
  } else if (strcmp(how, "listen-unbound") != 0 && strcmp(how, "listen6-unbound") != 0) {
    return usage();
  }
  if (!udp && listen(fd, 4) != 0) return fail(errno);
  if (write_port(fd, portfile) != 0) return fail(errno);
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return fail(ETIMEDOUT);
  char byte;
  if (udp) return recv(fd, &byte, 1, 0) == 1 ? (say("RECEIVED"), 0) : fail(errno);
  int peer = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
  if (peer < 0) return fail(errno);
  p.fd = peer;
  if (poll(&p, 1, 5000) != 1 || read(peer, &byte, 1) != 1) return fail(EIO);
  say("RECEIVED");
  return 0;
}

// accept4() on standard input, which the test made a listening socket the
// command inherits: `OK` when a connection (queued by the test) came out.
static int op_accept_stdin(void) { return result(accept4(STDIN_FILENO, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)); }

// A socket of FAMILY (number), TYPE (number, flags allowed) and PROTOCOL
// (number), created and closed: nothing is bound, connected or sent.
static int op_socket_raw(const char* family, const char* type, const char* protocol) {
  return result(socket(atoi(family), atoi(type) | SOCK_CLOEXEC, atoi(protocol)));
}

// mmap(PROT_READ|PROT_EXEC) of PATH's first page: what the dynamic loader
// does to every library and to a program it is asked to run. A file on a
// noexec mount refuses it (EPERM); Landlock does not mediate it.
static int op_mmap_exec(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno);
  void* region = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (region == MAP_FAILED) return fail(errno);
  return ok();
}

// --- Ported upstream scenarios (tests/kernel/ported_*_test.cpp) ---
//
// The Landlock selftests' and moby's profile's operations, each one call
// (or two where the scenario needs a first step) on what the test names:
// paths in its temp dirs, ports on loopback it owns, abstract names it
// chose, the probe's own children and threads. `personality` changes only
// the probe's own execution domain.

// open(2) of PATH with MODE only, nothing read or written: rdonly, wronly,
// rdwr, path (O_PATH), dir (O_RDONLY|O_DIRECTORY).
static int op_open(const char* path, const char* mode) {
  int flags;
  if (strcmp(mode, "rdonly") == 0) flags = O_RDONLY;
  else if (strcmp(mode, "wronly") == 0) flags = O_WRONLY;
  else if (strcmp(mode, "rdwr") == 0) flags = O_RDWR;
  else if (strcmp(mode, "path") == 0) flags = O_PATH;
  else if (strcmp(mode, "dir") == 0) flags = O_RDONLY | O_DIRECTORY;
  else return usage();
  return result(open(path, flags | O_CLOEXEC));
}

// A pipe's write end re-opened through /proc/self/fd/N: pipes live on an
// internal mount no rule names, so Landlock lets this through.
static int op_proc_pipe(void) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fail(errno);
  char magic[64];
  snprintf(magic, sizeof magic, "/proc/self/fd/%d", fds[1]);
  return result(open(magic, O_WRONLY | O_CLOEXEC));
}

// ioctl on PATH opened read-only: FIOCLEX (one Landlock always allows) or
// TCGETS (a device request: /dev/null answers ENOTTY when it gets it).
static int op_ioctl_dev(const char* path, const char* which) {
  unsigned long request;
  if (strcmp(which, "fioclex") == 0) request = FIOCLEX;
  else if (strcmp(which, "tcgets") == 0) request = TCGETS;
  else return usage();
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    say("OPEN-FAILED");
    return 3;
  }
  struct termios t;
  return result(ioctl(fd, request, &t));
}

// TCP over IPv6 to [::1]:PORT: connect, or bind (and listen).
static int op_tcp6(const char* what, const char* port) {
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in6 address;
  memset(&address, 0, sizeof address);
  address.sin6_family = AF_INET6;
  address.sin6_port = htons((uint16_t)atoi(port));
  address.sin6_addr = in6addr_loopback;
  if (strcmp(what, "connect") == 0) return result(connect(fd, (struct sockaddr*)&address, sizeof address));
  if (bind(fd, (struct sockaddr*)&address, sizeof address) != 0) return fail(errno);
  return result(listen(fd, 1));
}

// A UDP socket bound to 127.0.0.1:PORT (Landlock checks TCP binds only).
static int op_udp_bind(const char* port) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  return result(bind(fd, (struct sockaddr*)&address, sizeof address));
}

// bind() of a TCP/IPv4 socket to an address whose family is AF_UNSPEC: with
// INADDR_ANY (`any`) the kernel takes it as AF_INET, with 127.0.0.1
// (`loopback`) it refuses the family.
static int op_bind_unspec(const char* port, const char* which) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  address.sin_family = AF_UNSPEC;
  if (strcmp(which, "any") == 0) address.sin_addr.s_addr = htonl(INADDR_ANY);
  else if (strcmp(which, "loopback") != 0) return usage();
  return result(bind(fd, (struct sockaddr*)&address, sizeof address));
}

// connect() to 127.0.0.1:PORT, then connect() to an AF_UNSPEC address,
// which disconnects: the answer printed is the disconnect's.
static int op_tcp_disconnect(const char* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  struct sockaddr_in address = loopback(port);
  if (connect(fd, (struct sockaddr*)&address, sizeof address) != 0) {
    const char* name = strerrorname_np(errno);
    (void)!write(STDOUT_FILENO, "CONNECT-", 8);
    say(name ? name : "EUNKNOWN");
    return 3;
  }
  struct sockaddr unspec;
  memset(&unspec, 0, sizeof unspec);
  unspec.sa_family = AF_UNSPEC;
  return result(connect(fd, &unspec, sizeof unspec));
}

// kill(child, SIG) of a child of the probe's own (inside its domain) that
// waits in pause(); the child is then killed and reaped.
static int op_signal_child(int sig) {
  pid_t child = fork();
  if (child < 0) return fail(errno);
  if (child == 0) {
    for (;;) pause();
  }
  const long rc = syscall(SYS_kill, child, sig);
  const int error = errno;
  syscall(SYS_kill, child, SIGKILL);
  waitpid(child, NULL, 0);
  return rc == 0 ? ok() : fail(error);
}

static void* wait_on_pipe(void* fd) {
  char byte;
  (void)!read(*(int*)fd, &byte, 1);
  return NULL;
}

// pthread_kill(thread, 0) of a thread of the probe's own.
static int op_signal_thread(void) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return fail(errno);
  pthread_t thread;
  if (pthread_create(&thread, NULL, wait_on_pipe, &fds[0]) != 0) return fail(EAGAIN);
  const int rc = pthread_kill(thread, 0);
  (void)!write(fds[1], "x", 1);
  pthread_join(thread, NULL);
  return rc == 0 ? ok() : fail(rc);
}

// An abstract unix address "\0NAME" and its length.
static socklen_t abstract_address(struct sockaddr_un* address, const char* name) {
  memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  size_t length = strlen(name);
  if (length + 1 > sizeof address->sun_path) length = sizeof address->sun_path - 1;
  memcpy(address->sun_path + 1, name, length);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + length);
}

// One datagram to the abstract datagram socket "\0NAME", by sendto()
// (`send`) or by connect() (`connect`).
static int op_abstract_dgram(const char* how, const char* name) {
  struct sockaddr_un address;
  const socklen_t length = abstract_address(&address, name);
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(errno);
  if (strcmp(how, "send") == 0) return result(sendto(fd, "x", 1, 0, (struct sockaddr*)&address, length));
  if (strcmp(how, "connect") == 0) return result(connect(fd, (struct sockaddr*)&address, length));
  return usage();
}

// The probe listens on an abstract name of its own and a child it forks
// (in the same domain) connects to it: `OK` when the connection came.
static int op_abstract_self_connect(void) {
  char name[64];
  snprintf(name, sizeof name, "aasm-probe-self-%ld", (long)getpid());
  struct sockaddr_un address;
  const socklen_t length = abstract_address(&address, name);
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0 || bind(server, (struct sockaddr*)&address, length) != 0 || listen(server, 1) != 0)
    return fail(errno);
  pid_t child = fork();
  if (child < 0) return fail(errno);
  if (child == 0) _exit(unix_stream_connect(name, 1) >= 0 ? 0 : errno);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return fail(ECHILD);
  return WEXITSTATUS(status) == 0 ? ok() : fail(WEXITSTATUS(status));
}

// The probe listens on the abstract name "\0NAME" for up to 10 s for a peer
// outside the run: `RECEIVED` when one connected.
static int op_abstract_serve(const char* name) {
  struct sockaddr_un address;
  const socklen_t length = abstract_address(&address, name);
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0 || bind(server, (struct sockaddr*)&address, length) != 0 || listen(server, 1) != 0)
    return fail(errno);
  struct pollfd p = {server, POLLIN, 0};
  if (poll(&p, 1, 10000) != 1) return fail(ETIMEDOUT);
  if (accept4(server, NULL, NULL, SOCK_CLOEXEC) < 0) return fail(errno);
  say("RECEIVED");
  return 0;
}

// personality(PERSONA) of the probe itself (a number, 0x... allowed).
static int op_personality(const char* persona) {
  return result(syscall(SYS_personality, strtoul(persona, NULL, 0)));
}

static int usage(void) {
  static const char text[] =
      "usage: aasm-probe read PATH | write PATH | exec PATH [ARG...] | getppid\n"
      "                | exit N | raise SIGNAL | sys NUMBER | x32-getpid | int80-getpid\n"
      "                | ioctl-pipe tiocsti|tiocsti-high|tioclinux|tcgets\n"
      "                | clone plain|newuser|newuser-newnet | clone3 plain|newuser | io_uring_setup\n"
      "                | ok | unshare user|user-mount | setns-bad | memfd-exec sealed|plain execveat|proc\n"
      "                | unnamed-exec tmpfile|deleted DIR execveat|proc | fexec PATH\n"
      "                | flood FIRST COUNT | mkdir PATH\n"
      "                | danger NAME | own-filter-then-getppid | status OP ARGS... (the errno as exit status)\n"
      "                | truncate PATH | open-trunc PATH | create PATH | rename FROM TO | link FROM TO\n"
      "                | reopen-rw PATH | read-proc PID|parent|janitor FILE | ptrace-attach-parent | ptrace-attach PID\n"
      "                | tcp-connect PORT | tcp-bind PORT | udp-send PORT | netlink-socket\n"
      "                | tcp-connect-own-listener PORT | tcp-connect-race ALLOWED REFUSED COUNT\n"
      "                | abstract-connect NAME | kill PID SIGNAL | kill-supervisor SIGNAL\n"
      "                | tcp-fastopen PORT | tcp-fastopen-connect\n"
      "                | socket vsock|netlink|packet|alg|inet|inet6|unix\n"
      "                | socketpair stream|seqpacket|dgram | unix-connect PATH\n"
      "                | env | fds | write-bytes PATH N | open-many PATH N | spin SECONDS | stop-self\n"
      "                | yes out|err N|forever | grandchild PIDFILE SECONDS [setsid] | wait-signal PIDFILE SECONDS\n"
      "                | tty-stall PIDFILE stop|go SECONDS\n"
      "                | map-mib N | meta chmod|utime|setxattr|setflags|chmod-setuid|chmod2-setuid|create-setuid|openat2-create PATH | prlimit PID|parent|janitor N\n"
      "                | open-write PATH | write-text PATH TEXT|self | sigio PID SIGNAL\n"
      "                | opath proc PATH | opath at DIR NAME | rename-exchange A B | unix-bind PATH\n"
      "                | serve HOW PORTFILE | accept-stdin | socket-raw FAMILY TYPE PROTOCOL\n"
      "                | mknod-char PATH | mkfifo PATH | readlink-proc PID|parent|janitor FILE\n"
      "                | stat PATH | symlink TARGET LINK | unlink PATH | rmdir PATH | mmap-exec PATH\n"
      "                | open PATH rdonly|wronly|rdwr|path|dir | proc-pipe | ioctl-dev PATH fioclex|tcgets\n"
      "                | tcp6-connect PORT | tcp6-bind PORT | udp-bind PORT | bind-unspec PORT any|loopback\n"
      "                | tcp-disconnect PORT | signal-child SIGNAL | signal-thread | personality PERSONA\n"
      "                | abstract-dgram send|connect NAME | abstract-self-connect | abstract-serve NAME\n";
  (void)!write(STDERR_FILENO, text, sizeof text - 1);
  return 2;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "status") == 0) {
    g_status_only = 1;
    ++argv;
    --argc;
  }
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
  // What glibc's posix_spawn with POSIX_SPAWN_RESETIDS does (GNU make):
  // every id kept as it is, so harmless with or without a filter.
  if (strcmp(op, "setresuid-keep") == 0 && argc == 2) return result(syscall(SYS_setresuid, -1, geteuid(), -1));
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
  if (strcmp(op, "sys") == 0 && argc == 3) return op_sys(strtol(argv[2], NULL, 0));
  if (strcmp(op, "flood") == 0 && argc == 4) {
    long first = strtol(argv[2], NULL, 0);
    if (first < 1000) return usage();  // numbers a kernel table names may do something
    return op_flood(first, strtol(argv[3], NULL, 0));
  }
  if (strcmp(op, "mkdir") == 0 && argc == 3) return result(syscall(SYS_mkdirat, AT_FDCWD, argv[2], 0755));
  if (strcmp(op, "x32-getpid") == 0 && argc == 2) return op_x32_getpid();
  if (strcmp(op, "int80-getpid") == 0 && argc == 2) return op_int80_getpid();
  if (strcmp(op, "ioctl-pipe") == 0 && argc == 3) return op_ioctl_pipe(argv[2]);
  if (strcmp(op, "clone") == 0 && argc == 3) return op_clone(argv[2], 0);
  if (strcmp(op, "clone3") == 0 && argc == 3) return op_clone(argv[2], 1);
  if (strcmp(op, "ok") == 0 && argc == 2) return ok();
  if (strcmp(op, "unshare") == 0 && argc == 3) return op_unshare(argv[2]);
  if (strcmp(op, "setns-bad") == 0 && argc == 2) return result(syscall(SYS_setns, -1, 0));
  if (strcmp(op, "memfd-exec") == 0 && argc == 4) return op_memfd_exec(argv[2], argv[3]);
  if (strcmp(op, "unnamed-exec") == 0 && argc == 5) return op_unnamed_exec(argv[2], argv[3], argv[4]);
  if (strcmp(op, "fexec") == 0 && argc == 3) return op_fexec(argv[2]);
  if (strcmp(op, "io_uring_setup") == 0 && argc == 2) return result(syscall(SYS_io_uring_setup, 0, NULL));
  if (strcmp(op, "danger") == 0 && argc == 3) return op_danger(argv[2]);
  if (strcmp(op, "own-filter-then-getppid") == 0 && argc == 2) return op_own_filter_then_getppid();
  if (strcmp(op, "truncate") == 0 && argc == 3) return result(truncate(argv[2], 0));
  if (strcmp(op, "open-trunc") == 0 && argc == 3) return result(open(argv[2], O_RDONLY | O_TRUNC | O_CLOEXEC));
  // A new regular file, nothing else asked: make_reg where Landlock handles it.
  if (strcmp(op, "create") == 0 && argc == 3) return result(open(argv[2], O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (strcmp(op, "rename") == 0 && argc == 4) return result(rename(argv[2], argv[3]));
  if (strcmp(op, "link") == 0 && argc == 4) return result(link(argv[2], argv[3]));
  if (strcmp(op, "reopen-rw") == 0 && argc == 3) return op_reopen_rw(argv[2]);
  if (strcmp(op, "read-proc") == 0 && argc == 4) return op_read_proc(argv[2], argv[3]);
  if (strcmp(op, "ptrace-attach-parent") == 0 && argc == 2) return op_ptrace_attach_parent();
  if (strcmp(op, "ptrace-attach") == 0 && argc == 3) return op_ptrace_attach(atol(argv[2]));
  if (strcmp(op, "tcp-connect") == 0 && argc == 3) return op_tcp("connect", argv[2]);
  if (strcmp(op, "tcp-connect-own-listener") == 0 && argc == 3) return op_tcp_connect_own_listener(argv[2]);
  if (strcmp(op, "tcp-connect-race") == 0 && argc == 5) return op_tcp_connect_race(argv[2], argv[3], atol(argv[4]));
  if (strcmp(op, "tcp-bind") == 0 && argc == 3) return op_tcp("bind", argv[2]);
  if (strcmp(op, "udp-send") == 0 && argc == 3) return op_udp_send(argv[2]);
  if (strcmp(op, "netlink-socket") == 0 && argc == 2) return op_netlink_socket();
  if (strcmp(op, "abstract-connect") == 0 && argc == 3) return op_abstract_connect(argv[2]);
  if (strcmp(op, "tcp-fastopen") == 0 && argc == 3) return op_tcp_fastopen(argv[2]);
  if (strcmp(op, "tcp-fastopen-connect") == 0 && argc == 2) return op_tcp_fastopen_connect();
  if (strcmp(op, "socket") == 0 && argc == 3) return op_socket(argv[2]);
  if (strcmp(op, "socketpair") == 0 && argc == 3) return op_socketpair(argv[2]);
  if (strcmp(op, "unix-connect") == 0 && argc == 3) return op_unix_connect(argv[2]);
  if (strcmp(op, "kill") == 0 && argc == 4) {
    // Raw kill: the pid is a sentinel the test started, never 0 or negative.
    long pid = strtol(argv[2], NULL, 10);
    if (pid <= 1) return usage();
    return result(syscall(SYS_kill, pid, atoi(argv[3])));
  }
  if (strcmp(op, "kill-supervisor") == 0 && argc == 3) return op_kill_supervisor(atoi(argv[2]));
  if (strcmp(op, "env") == 0 && argc == 2) return op_env();
  if (strcmp(op, "fds") == 0 && argc == 2) return op_fds();
  if (strcmp(op, "write-bytes") == 0 && argc == 4) return op_write_bytes(argv[2], atoll(argv[3]));
  if (strcmp(op, "open-many") == 0 && argc == 4) return op_open_many(argv[2], atol(argv[3]));
  if (strcmp(op, "spin") == 0 && argc == 3) return op_spin(atof(argv[2]));
  if (strcmp(op, "map-mib") == 0 && argc == 3) return op_map_mib(atol(argv[2]));
  if (strcmp(op, "stop-self") == 0 && argc == 2) return op_stop_self();
  if (strcmp(op, "yes") == 0 && argc == 4) return op_yes(argv[2], argv[3]);
  if (strcmp(op, "grandchild") == 0 && argc == 4) return op_grandchild(argv[2], atof(argv[3]), 0);
  if (strcmp(op, "grandchild") == 0 && argc == 5 && strcmp(argv[4], "setsid") == 0)
    return op_grandchild(argv[2], atof(argv[3]), 1);
  if (strcmp(op, "wait-signal") == 0 && argc == 4) return op_wait_signal(argv[2], atof(argv[3]));
  if (strcmp(op, "tty-stall") == 0 && argc == 5) return op_tty_stall(argv[2], argv[3], atof(argv[4]));
  if (strcmp(op, "meta") == 0 && argc == 4) return op_meta(argv[2], argv[3]);
  if (strcmp(op, "prlimit") == 0 && argc == 4) return op_prlimit(argv[2], atol(argv[3]));
  if (strcmp(op, "open-write") == 0 && argc == 3) return op_open_write(argv[2]);
  if (strcmp(op, "write-text") == 0 && argc == 4) return op_write_text(argv[2], argv[3]);
  if (strcmp(op, "sigio") == 0 && argc == 4) return op_sigio(argv[2], atoi(argv[3]));
  if (strcmp(op, "opath") == 0 && argc == 4 && strcmp(argv[2], "proc") == 0) return op_opath("proc", argv[3], NULL);
  if (strcmp(op, "opath") == 0 && argc == 5 && strcmp(argv[2], "at") == 0) return op_opath("at", argv[3], argv[4]);
  if (strcmp(op, "rename-exchange") == 0 && argc == 4)
    return result(syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE));
  if (strcmp(op, "unix-bind") == 0 && argc == 3) return op_unix_bind(argv[2]);
  if (strcmp(op, "serve") == 0 && argc == 4) return op_serve(argv[2], argv[3]);
  if (strcmp(op, "accept-stdin") == 0 && argc == 2) return op_accept_stdin();
  if (strcmp(op, "socket-raw") == 0 && argc == 5) return op_socket_raw(argv[2], argv[3], argv[4]);
  // A character device with /dev/null's numbers: nothing to read if made.
  if (strcmp(op, "mknod-char") == 0 && argc == 3) return result(mknod(argv[2], S_IFCHR | 0600, makedev(1, 3)));
  if (strcmp(op, "mkfifo") == 0 && argc == 3) return result(mkfifo(argv[2], 0600));
  if (strcmp(op, "readlink-proc") == 0 && argc == 4) return op_readlink_proc(argv[2], argv[3]);
  if (strcmp(op, "stat") == 0 && argc == 3) {
    struct stat st;
    return result(stat(argv[2], &st));
  }
  if (strcmp(op, "symlink") == 0 && argc == 4) return result(symlink(argv[2], argv[3]));
  if (strcmp(op, "unlink") == 0 && argc == 3) return result(unlink(argv[2]));
  if (strcmp(op, "rmdir") == 0 && argc == 3) return result(rmdir(argv[2]));
  if (strcmp(op, "mmap-exec") == 0 && argc == 3) return op_mmap_exec(argv[2]);
  if (strcmp(op, "open") == 0 && argc == 4) return op_open(argv[2], argv[3]);
  if (strcmp(op, "proc-pipe") == 0 && argc == 2) return op_proc_pipe();
  if (strcmp(op, "ioctl-dev") == 0 && argc == 4) return op_ioctl_dev(argv[2], argv[3]);
  if (strcmp(op, "tcp6-connect") == 0 && argc == 3) return op_tcp6("connect", argv[2]);
  if (strcmp(op, "tcp6-bind") == 0 && argc == 3) return op_tcp6("bind", argv[2]);
  if (strcmp(op, "udp-bind") == 0 && argc == 3) return op_udp_bind(argv[2]);
  if (strcmp(op, "bind-unspec") == 0 && argc == 4) return op_bind_unspec(argv[2], argv[3]);
  if (strcmp(op, "tcp-disconnect") == 0 && argc == 3) return op_tcp_disconnect(argv[2]);
  if (strcmp(op, "signal-child") == 0 && argc == 3) return op_signal_child(atoi(argv[2]));
  if (strcmp(op, "signal-thread") == 0 && argc == 2) return op_signal_thread();
  if (strcmp(op, "abstract-dgram") == 0 && argc == 4) return op_abstract_dgram(argv[2], argv[3]);
  if (strcmp(op, "abstract-self-connect") == 0 && argc == 2) return op_abstract_self_connect();
  if (strcmp(op, "abstract-serve") == 0 && argc == 3) return op_abstract_serve(argv[2]);
  if (strcmp(op, "personality") == 0 && argc == 3) return op_personality(argv[2]);
  return usage();
}
