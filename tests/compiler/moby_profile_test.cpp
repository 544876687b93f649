// moby's default seccomp profile (profiles/seccomp/default.json) against
// its aasm port, testdata/seccomp/moby-default.yaml, call by call: the real
// aasmc compiles the port, and the plan's x86_64 programs, run as the
// kernel stacks them by the userspace interpreter (plan_answers.h), must
// answer what moby's table decides for a container without capabilities:
// allow for its unconditional list and its minKernel 4.8 block, EPERM (its
// defaultErrnoRet 1) for the calls it lists only under a capability or not
// at all, ENOSYS for clone3, and its argument filters (personality, clone,
// socket) value by value. The calls where the port answers otherwise are
// one named list, each a documented stricter choice
// (docs/ported-suites.md). Deterministic: no kernel involved.
#include <doctest/doctest.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "plan_answers.h"

using namespace aasm;
using namespace aasm::ktest;

namespace {

struct Call {
  const char* name;
  long nr;
};
#define CALL(n) Call{#n, SYS_##n}

// moby's unconditional allow list, the names x86_64 has (its 32-bit-only
// names, chown32 ... waitpid, are no x86_64 calls), and its minKernel 4.8
// block.
const std::vector<Call> kMobyAllows = {
    CALL(accept), CALL(accept4), CALL(access), CALL(adjtimex), CALL(alarm), CALL(bind), CALL(brk), CALL(capget),
    CALL(capset), CALL(chdir), CALL(chmod), CALL(chown), CALL(clock_adjtime), CALL(clock_getres),
    CALL(clock_gettime), CALL(clock_nanosleep), CALL(close), CALL(close_range), CALL(connect),
    CALL(copy_file_range), CALL(creat), CALL(dup), CALL(dup2), CALL(dup3), CALL(epoll_create), CALL(epoll_create1),
    CALL(epoll_ctl), CALL(epoll_ctl_old), CALL(epoll_pwait), CALL(epoll_pwait2), CALL(epoll_wait),
    CALL(epoll_wait_old), CALL(eventfd), CALL(eventfd2), CALL(execve), CALL(execveat), CALL(exit), CALL(exit_group),
    CALL(faccessat), CALL(faccessat2), CALL(fadvise64), CALL(fallocate), CALL(fanotify_mark), CALL(fchdir),
    CALL(fchmod), CALL(fchmodat), CALL(fchown), CALL(fchownat), CALL(fcntl), CALL(fdatasync), CALL(fgetxattr),
    CALL(flistxattr), CALL(flock), CALL(fork), CALL(fremovexattr), CALL(fsetxattr), CALL(fstat), CALL(fstatfs),
    CALL(fsync), CALL(ftruncate), CALL(futex), CALL(futex_waitv), CALL(futimesat), CALL(getcpu), CALL(getcwd),
    CALL(getdents), CALL(getdents64), CALL(getegid), CALL(geteuid), CALL(getgid), CALL(getgroups), CALL(getitimer),
    CALL(getpeername), CALL(getpgid), CALL(getpgrp), CALL(getpid), CALL(getppid), CALL(getpriority),
    CALL(getrandom), CALL(getresgid), CALL(getresuid), CALL(getrlimit), CALL(get_robust_list), CALL(getrusage),
    CALL(getsid), CALL(getsockname), CALL(getsockopt), CALL(get_thread_area), CALL(gettid), CALL(gettimeofday),
    CALL(getuid), CALL(getxattr), CALL(inotify_add_watch), CALL(inotify_init), CALL(inotify_init1),
    CALL(inotify_rm_watch), CALL(io_cancel), CALL(ioctl), CALL(io_destroy), CALL(io_getevents),
    CALL(io_pgetevents), CALL(ioprio_get), CALL(ioprio_set), CALL(io_setup), CALL(io_submit),
    CALL(io_uring_enter), CALL(io_uring_register), CALL(io_uring_setup), CALL(kill), CALL(landlock_add_rule),
    CALL(landlock_create_ruleset), CALL(landlock_restrict_self), CALL(lchown), CALL(lgetxattr), CALL(link),
    CALL(linkat), CALL(listen), CALL(listxattr), CALL(llistxattr), CALL(lremovexattr), CALL(lseek),
    CALL(lsetxattr), CALL(lstat), CALL(madvise), CALL(membarrier), CALL(memfd_create), CALL(memfd_secret),
    CALL(mincore), CALL(mkdir), CALL(mkdirat), CALL(mknod), CALL(mknodat), CALL(mlock), CALL(mlock2),
    CALL(mlockall), CALL(mmap), CALL(mprotect), CALL(mq_getsetattr), CALL(mq_notify), CALL(mq_open),
    CALL(mq_timedreceive), CALL(mq_timedsend), CALL(mq_unlink), CALL(mremap), CALL(msgctl), CALL(msgget),
    CALL(msgrcv), CALL(msgsnd), CALL(msync), CALL(munlock), CALL(munlockall), CALL(munmap),
    CALL(name_to_handle_at), CALL(nanosleep), CALL(newfstatat), CALL(open), CALL(openat), CALL(openat2),
    CALL(pause), CALL(pidfd_open), CALL(pidfd_send_signal), CALL(pipe), CALL(pipe2), CALL(pkey_alloc),
    CALL(pkey_free), CALL(pkey_mprotect), CALL(poll), CALL(ppoll), CALL(prctl), CALL(pread64), CALL(preadv),
    CALL(preadv2), CALL(prlimit64), CALL(process_mrelease), CALL(pselect6), CALL(pwrite64), CALL(pwritev),
    CALL(pwritev2), CALL(read), CALL(readahead), CALL(readlink), CALL(readlinkat), CALL(readv), CALL(recvfrom),
    CALL(recvmmsg), CALL(recvmsg), CALL(remap_file_pages), CALL(removexattr), CALL(rename), CALL(renameat),
    CALL(renameat2), CALL(restart_syscall), CALL(rmdir), CALL(rseq), CALL(rt_sigaction), CALL(rt_sigpending),
    CALL(rt_sigprocmask), CALL(rt_sigqueueinfo), CALL(rt_sigreturn), CALL(rt_sigsuspend), CALL(rt_sigtimedwait),
    CALL(rt_tgsigqueueinfo), CALL(sched_getaffinity), CALL(sched_getattr), CALL(sched_getparam),
    CALL(sched_get_priority_max), CALL(sched_get_priority_min), CALL(sched_getscheduler),
    CALL(sched_rr_get_interval), CALL(sched_setaffinity), CALL(sched_setattr), CALL(sched_setparam),
    CALL(sched_setscheduler), CALL(sched_yield), CALL(seccomp), CALL(select), CALL(semctl), CALL(semget),
    CALL(semop), CALL(semtimedop), CALL(sendfile), CALL(sendmmsg), CALL(sendmsg), CALL(sendto), CALL(setfsgid),
    CALL(setfsuid), CALL(setgid), CALL(setgroups), CALL(setitimer), CALL(setpgid), CALL(setpriority),
    CALL(setregid), CALL(setresgid), CALL(setresuid), CALL(setreuid), CALL(setrlimit), CALL(set_robust_list),
    CALL(setsid), CALL(setsockopt), CALL(set_thread_area), CALL(set_tid_address), CALL(setuid), CALL(setxattr),
    CALL(shmat), CALL(shmctl), CALL(shmdt), CALL(shmget), CALL(shutdown), CALL(sigaltstack), CALL(signalfd),
    CALL(signalfd4), CALL(socketpair), CALL(splice), CALL(stat), CALL(statfs), CALL(statx), CALL(symlink),
    CALL(symlinkat), CALL(sync), CALL(sync_file_range), CALL(syncfs), CALL(sysinfo), CALL(tee), CALL(tgkill),
    CALL(time), CALL(timer_create), CALL(timer_delete), CALL(timer_getoverrun), CALL(timer_gettime),
    CALL(timer_settime), CALL(timerfd_create), CALL(timerfd_gettime), CALL(timerfd_settime), CALL(times),
    CALL(tkill), CALL(truncate), CALL(umask), CALL(uname), CALL(unlink), CALL(unlinkat), CALL(utime),
    CALL(utimensat), CALL(utimes), CALL(vfork), CALL(vmsplice), CALL(wait4), CALL(waitid), CALL(write),
    CALL(writev), CALL(arch_prctl), CALL(modify_ldt),
    // minKernel 4.8
    CALL(process_vm_readv), CALL(process_vm_writev), CALL(ptrace),
};

// Calls moby lists only under a capability, and calls it does not list.
const std::vector<Call> kMobyRefuses = {
    CALL(bpf), CALL(fanotify_init), CALL(fsconfig), CALL(fsmount), CALL(fsopen), CALL(fspick),
    CALL(lookup_dcookie), CALL(mount), CALL(mount_setattr), CALL(move_mount), CALL(open_tree),
    CALL(perf_event_open), CALL(quotactl), CALL(quotactl_fd), CALL(setdomainname), CALL(sethostname),
    CALL(setns), CALL(syslog), CALL(umount2), CALL(unshare), CALL(reboot), CALL(chroot), CALL(delete_module),
    CALL(init_module), CALL(finit_module), CALL(acct), CALL(kcmp), CALL(pidfd_getfd), CALL(process_madvise),
    CALL(iopl), CALL(ioperm), CALL(settimeofday), CALL(clock_settime), CALL(vhangup), CALL(get_mempolicy),
    CALL(mbind), CALL(set_mempolicy), CALL(set_mempolicy_home_node), CALL(open_by_handle_at),
    // not in moby's list at all
    CALL(kexec_load), CALL(kexec_file_load), CALL(add_key), CALL(keyctl), CALL(request_key), CALL(swapon),
    CALL(swapoff), CALL(pivot_root), CALL(userfaultfd), CALL(uselib), CALL(nfsservctl), CALL(_sysctl),
};

// Where the port refuses (EPERM) what moby allows: io_uring (its operations
// run outside any filter), and x86-only calls a two-target policy cannot
// name that no allow group holds (epoll_*_old, *_thread_area, modify_ldt:
// 32-bit segment and old epoll interfaces).
const std::set<std::string> kPortRefuses = {"io_uring_enter",  "io_uring_register", "io_uring_setup",
                                            "epoll_ctl_old",   "epoll_wait_old",    "get_thread_area",
                                            "set_thread_area", "modify_ldt"};

// And openat2, which every plan's safe default @hidden-modes answers ENOSYS
// (its mode is out of a filter's reach; libc falls back to openat).
const std::set<std::string> kPortHidesAsMissing = {"openat2"};

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t errno_action(int e) { return SECCOMP_RET_ERRNO | uint32_t(e); }

PlanAnswers compile_port(const TempDir& dir) {
  const char* testdata = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(testdata != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  return compile_answers(dir, {std::string(testdata) + "/seccomp/moby-default.yaml"}, plan::kAuditArchX86_64);
}

}  // namespace

TEST_CASE("moby profile: the port answers moby's table call by call on x86_64") {
  TempDir dir;
  const PlanAnswers port = compile_port(dir);
  std::set<std::string> refused_of_allowed;
  for (const Call& call : kMobyAllows) {
    const std::string name = call.name;
    CAPTURE(name);
    const uint32_t action = port.answer(call.nr);
    if (kPortHidesAsMissing.count(name)) {
      CHECK(action == errno_action(ENOSYS));
    } else if (kPortRefuses.count(name)) {
      CHECK(action == errno_action(EPERM));
      refused_of_allowed.insert(call.name);
    } else {
      CHECK(action == kAllow);
    }
  }
  CHECK(refused_of_allowed == kPortRefuses);
  for (const Call& call : kMobyRefuses) {
    const std::string name = call.name;
    CAPTURE(name);
    CHECK(port.answer(call.nr) == errno_action(EPERM));
  }
  // clone3: moby's errnoRet 38.
  CHECK(port.answer(SYS_clone3) == errno_action(ENOSYS));
}

TEST_CASE("moby profile: the argument filters decide value by value as moby's do") {
  TempDir dir;
  const PlanAnswers port = compile_port(dir);
  SUBCASE("personality: only 0, 0x8, 0x20000, 0x20008 and 0xffffffff") {
    for (uint64_t persona : {0x0ull, 0x8ull, 0x20000ull, 0x20008ull, 0xffffffffull}) {
      CAPTURE(persona);
      CHECK(port.answer(SYS_personality, {persona}) == kAllow);
    }
    for (uint64_t persona : {0x1ull, 0x40000ull, 0x400000ull, 0x20001ull, 0xfffffffeull}) {
      CAPTURE(persona);
      CHECK(port.answer(SYS_personality, {persona}) == errno_action(EPERM));
    }
  }
  SUBCASE("clone: allowed while (flags & 0x7E020000) == 0") {
    constexpr uint64_t kMobyMask = 0x7E020000;
    for (uint64_t flags : {uint64_t(SIGCHLD), uint64_t(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD),
                           uint64_t(CLONE_VFORK | CLONE_VM | SIGCHLD)}) {
      CAPTURE(flags);
      CHECK(port.answer(SYS_clone, {flags}) == kAllow);
    }
    for (int bit = 0; bit < 32; ++bit) {
      const uint64_t flag = uint64_t(1) << bit;
      if (!(kMobyMask & flag)) continue;
      CAPTURE(flag);
      CHECK(port.answer(SYS_clone, {flag | SIGCHLD}) == errno_action(EPERM));
    }
  }
  SUBCASE("socket: every family but AF_VSOCK (40)") {
    for (uint64_t family : {uint64_t(AF_UNIX), uint64_t(AF_INET), uint64_t(AF_INET6), uint64_t(AF_NETLINK), uint64_t(AF_PACKET), uint64_t(AF_ALG)}) {
      CAPTURE(family);
      CHECK(port.answer(SYS_socket, {family, SOCK_STREAM, 0}) == kAllow);
    }
    CHECK(port.answer(SYS_socket, {AF_VSOCK, SOCK_STREAM, 0}) == errno_action(EPERM));
  }
}
