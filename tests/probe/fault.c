// aasm-fault: fault injection for the launcher. Usage:
//
//   aasm-fault CALL=ERRNO[,CALL=ERRNO...] PROGRAM [ARG...]
//
// CALL is landlock_create_ruleset, mkdir, mkdirat, mount_setattr, socket or
// clone_newuser; ERRNO is ENOSYS, EOPNOTSUPP, EACCES, EPERM, ENOSPC or
// EPROTONOSUPPORT. Sets no_new_privs, installs a seccomp filter of its own
// that answers each CALL with its errno and allows every other call, then
// execs PROGRAM (aasm-launch in tests/kernel/fault_injection_test.cpp). To
// PROGRAM and everything it runs the kernel then looks like one without
// Landlock (landlock_create_ruleset=ENOSYS: not built in; EOPNOTSUPP:
// disabled at boot), one where no cgroup can be created (mkdir=EACCES), one
// older than Linux 5.12, which the filesystem view needs (mount_setattr=ENOSYS),
// one built without audit (socket=EPROTONOSUPPORT: the launcher's only
// socket(2) is its audit socket, supervisor/landlock_audit.h; the command
// given must open none), or one that refuses a user namespace
// (clone_newuser=EPERM, as Debian's kernel.unprivileged_userns_clone = 0 or a
// container's seccomp profile answers; ENOSPC, as user.max_user_namespaces = 0
// does).
//
// clone_newuser is not a system call: it is clone and unshare with
// CLONE_NEWUSER in their flags (the first argument, which a filter can
// read). clone3 passes its flags in memory, which no filter can read, so it
// is left alone: the launcher tries its user namespace with clone
// (kernel/namespaces.h), and clone3 only starts a command in a cgroup v2.
// The filter only takes a system call away: it cannot give PROGRAM anything
// it would not have.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442  // the same number on x86_64 and aarch64; Linux 5.12
#endif
#define CLONE_NEWUSER_FLAG 0x10000000  // linux/sched.h's CLONE_NEWUSER
#define CLONE_NEWUSER_FAULT (-2)       // kCalls' value for clone_newuser

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "unsupported architecture"
#endif

struct named {
  const char* name;
  long value;
};

static const struct named kCalls[] = {
    {"landlock_create_ruleset", __NR_landlock_create_ruleset},
#ifdef __NR_mkdir
    {"mkdir", __NR_mkdir},
#endif
    {"mkdirat", __NR_mkdirat},
    {"mount_setattr", __NR_mount_setattr},
    {"socket", __NR_socket},
    {"clone_newuser", CLONE_NEWUSER_FAULT},
};

static const struct named kErrnos[] = {
    {"ENOSYS", ENOSYS}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EACCES", EACCES}, {"EPERM", EPERM}, {"ENOSPC", ENOSPC},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT}};

static long lookup(const struct named* table, size_t count, const char* name, size_t length) {
  for (size_t i = 0; i < count; ++i)
    if (strlen(table[i].name) == length && strncmp(table[i].name, name, length) == 0) return table[i].value;
  return -1;
}

enum { kMaxFaults = 8 };

// The filter's instructions that answer `nr` with `ret` where its first
// argument has CLONE_NEWUSER set; the accumulator holds nr before and after.
static size_t answer_newuser(struct sock_filter* out, long nr, unsigned ret) {
  size_t n = 0;
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 4);
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
  out[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER_FLAG, 0, 1);
  out[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
  out[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  return n;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: aasm-fault CALL=ERRNO[,CALL=ERRNO...] PROGRAM [ARG...]\n");
    return 2;
  }
  // Other architectures (x32, i386 through int 0x80) pass untouched: the
  // launcher makes its calls natively.
  struct sock_filter filter[3 + 10 * kMaxFaults + 1];
  size_t n = 0;
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
  const size_t arch_check = n++;
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  int faults = 0;
  for (const char* spec = argv[1]; *spec; ++faults) {
    const char* equals = strchr(spec, '=');
    const char* end = strchr(spec, ',');
    if (!end) end = spec + strlen(spec);
    if (!equals || equals > end || faults == kMaxFaults) {
      fprintf(stderr, "aasm-fault: bad fault list '%s'\n", argv[1]);
      return 2;
    }
    const long call = lookup(kCalls, sizeof kCalls / sizeof kCalls[0], spec, (size_t)(equals - spec));
    const long error = lookup(kErrnos, sizeof kErrnos / sizeof kErrnos[0], equals + 1, (size_t)(end - equals - 1));
    if (call == -1 || error < 0) {
      fprintf(stderr, "aasm-fault: unknown call or errno in '%.*s'\n", (int)(end - spec), spec);
      return 2;
    }
    const unsigned ret = SECCOMP_RET_ERRNO | ((unsigned)error & SECCOMP_RET_DATA);
    if (call == CLONE_NEWUSER_FAULT) {
      n += answer_newuser(filter + n, __NR_clone, ret);
      n += answer_newuser(filter + n, __NR_unshare, ret);
    } else {
      filter[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)call, 0, 1);
      filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
    }
    spec = *end ? end + 1 : end;
  }
  filter[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  // Not this architecture: straight to the final allow.
  filter[arch_check] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, (unsigned char)(n - arch_check - 2));
  struct sock_fprog program = {(unsigned short)n, filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("aasm-fault: no_new_privs");
    return 125;
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    perror("aasm-fault: seccomp");
    return 125;
  }
  execv(argv[2], argv + 2);
  perror("aasm-fault: execv");
  return 127;
}
