// aasm-no-landlock: fault injection for the launcher. Usage:
//
//   aasm-no-landlock ENOSYS|EOPNOTSUPP PROGRAM [ARG...]
//
// Sets no_new_privs, installs a seccomp filter of its own that answers
// landlock_create_ruleset (444 on every architecture) with the given errno
// and allows every other call, then execs PROGRAM (aasm-launch in
// tests/kernel/fault_injection_test.cpp). To PROGRAM and everything it runs
// the kernel then looks like one without Landlock (ENOSYS: not built in) or
// with Landlock disabled at boot (EOPNOTSUPP). The filter only takes a
// system call away: it cannot give PROGRAM anything it would not have.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif

#if defined(__x86_64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#else
#error "unsupported architecture"
#endif

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: aasm-no-landlock ENOSYS|EOPNOTSUPP PROGRAM [ARG...]\n");
    return 2;
  }
  unsigned error;
  if (strcmp(argv[1], "ENOSYS") == 0) error = ENOSYS;
  else if (strcmp(argv[1], "EOPNOTSUPP") == 0) error = EOPNOTSUPP;
  else {
    fprintf(stderr, "aasm-no-landlock: unknown errno '%s'\n", argv[1]);
    return 2;
  }
  // Other architectures (x32, i386 through int 0x80) pass untouched: the
  // launcher makes its Landlock calls natively.
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_AUDIT_ARCH, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_landlock_create_ruleset, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (error & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("aasm-no-landlock: no_new_privs");
    return 125;
  }
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) {
    perror("aasm-no-landlock: seccomp");
    return 125;
  }
  execv(argv[2], argv + 2);
  perror("aasm-no-landlock: execv");
  return 127;
}
