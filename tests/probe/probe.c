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
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

static int usage(void);

// OK for a non-negative result, else errno's name.
static int result(long rc) { return rc < 0 ? fail(errno) : ok(); }

// A bare system call number, every argument 0. For numbers no kernel table
// names (the tests use 400 and 1000) and for harmless calls only.
static int op_sys(long nr) { return result(syscall(nr, 0, 0, 0, 0, 0, 0)); }

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
    return usage();
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

static int usage(void) {
  static const char text[] =
      "usage: aasm-probe read PATH | write PATH | exec PATH [ARG...] | getppid\n"
      "                | exit N | raise SIGNAL | sys NUMBER | x32-getpid | int80-getpid\n"
      "                | ioctl-pipe tiocsti|tiocsti-high|tioclinux|tcgets\n"
      "                | clone plain|newuser | clone3 plain|newuser | io_uring_setup\n"
      "                | danger NAME | own-filter-then-getppid\n";
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
  if (strcmp(op, "sys") == 0 && argc == 3) return op_sys(strtol(argv[2], NULL, 0));
  if (strcmp(op, "x32-getpid") == 0 && argc == 2) return op_x32_getpid();
  if (strcmp(op, "int80-getpid") == 0 && argc == 2) return op_int80_getpid();
  if (strcmp(op, "ioctl-pipe") == 0 && argc == 3) return op_ioctl_pipe(argv[2]);
  if (strcmp(op, "clone") == 0 && argc == 3) return op_clone(argv[2], 0);
  if (strcmp(op, "clone3") == 0 && argc == 3) return op_clone(argv[2], 1);
  if (strcmp(op, "io_uring_setup") == 0 && argc == 2) return result(syscall(SYS_io_uring_setup, 0, NULL));
  if (strcmp(op, "danger") == 0 && argc == 3) return op_danger(argv[2]);
  if (strcmp(op, "own-filter-then-getppid") == 0 && argc == 2) return op_own_filter_then_getppid();
  return usage();
}
