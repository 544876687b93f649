// The probe's `danger NAME` calls (tests/probe/probe.c, SAFETY: always with
// arguments the kernel refuses before acting) and the kernel's own answer
// to each, as root without a filter and without capabilities (the launcher
// drops them all; measured on 6.18). seccomp_test.cpp, attack_more_test.cpp
// and ported_moby_test.cpp compare a filter's answers with these.
#pragma once

namespace aasm::ktest {

struct RefusedCall {
  const char* op;
  const char* kernel_answer;
};

// One call of each deny group @debug, @kernel, @mount (ENOSYS where the
// kernel lacks the feature: no CONFIG_MODULES, no CONFIG_KEXEC; EPERM where
// the missing capability is checked before the arguments).
inline constexpr RefusedCall kDangerous[] = {
    {"ptrace", "ESRCH\n"},            // PTRACE_ATTACH to pid INT_MAX
    {"process_vm_readv", "EFAULT\n"}, // NULL iovecs
    {"bpf", "EINVAL\n"},              // command INT_MAX
    {"perf_event_open", "EFAULT\n"},  // NULL attr
    {"init_module", "ENOSYS\n"},      // no CONFIG_MODULES
    {"finit_module", "ENOSYS\n"},
    {"kexec_load", "ENOSYS\n"},       // no CONFIG_KEXEC
    {"reboot", "EPERM\n"},            // CAP_SYS_BOOT checked before the wrong magic
    {"swapon", "EPERM\n"},            // CAP_SYS_ADMIN checked before the NULL path
    {"add_key", "EFAULT\n"},          // NULL type
    {"keyctl", "EOPNOTSUPP\n"},       // operation INT_MAX
    {"mount", "EFAULT\n"},            // NULL target
    {"umount2", "EINVAL\n"},          // unknown flag
    {"pivot_root", "EPERM\n"},        // CAP_SYS_ADMIN checked before the NULL paths
};

// The rest of the calls the deny groups @privileged, @debug, @kernel and
// @mount name (moby's default profile refuses most of them too:
// ported_moby_test.cpp says which).
inline constexpr RefusedCall kMobyRefused[] = {
    {"personality", "OK\n"},         // a query
    {"kcmp", "OK\n"},                // the probe's fd 0 with itself
    {"lookup_dcookie", "ENOSYS\n"},  // removed in 6.8
    {"pidfd_getfd", "EBADF\n"},
    {"process_vm_writev", "EFAULT\n"},
    {"ptrace_traceme", "OK\n"},  // would make the supervisor its tracer
    {"userfaultfd", "EINVAL\n"},
    {"syslog", "EPERM\n"},
    {"delete_module", "ENOSYS\n"},  // no CONFIG_MODULES
    {"request_key", "EFAULT\n"},
    {"kexec_file_load", "ENOSYS\n"},  // no CONFIG_KEXEC_FILE
    {"swapoff", "EPERM\n"},
    {"acct", "EPERM\n"},
    {"settimeofday", "EFAULT\n"},
    {"clock_settime", "EINVAL\n"},
    {"clock_adjtime", "EFAULT\n"},
#ifdef __x86_64__
    {"iopl", "ENOSYS\n"},  // no CONFIG_X86_IOPL_IOPERM
    {"ioperm", "ENOSYS\n"},
#endif
    {"quotactl", "ENODEV\n"},
    {"vhangup", "EPERM\n"},
    {"chroot", "EFAULT\n"},
    {"open_by_handle_at", "EFAULT\n"},
    {"name_to_handle_at", "EFAULT\n"},
    {"sethostname", "EPERM\n"},
    {"fanotify_init", "EPERM\n"},
    {"open_tree", "EFAULT\n"},
    {"fsopen", "EPERM\n"},
};

}  // namespace aasm::ktest
