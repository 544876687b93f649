#include "kernel/capabilities.h"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "kernel/raw_syscall.h"

namespace aasm::capabilities {
namespace {

constexpr const char* kNames[kCount] = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_SETGID",
    "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
    "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO",
    "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
    "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
    "CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
    "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE"};

constexpr uint64_t kSetPcap = uint64_t(1) << CAP_SETPCAP;

int set_sets(uint64_t effective, uint64_t permitted, uint64_t inheritable) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {
      {uint32_t(effective), uint32_t(permitted), uint32_t(inheritable)},
      {uint32_t(effective >> 32), uint32_t(permitted >> 32), uint32_t(inheritable >> 32)}};
  return ::syscall(SYS_capset, &header, data) == 0 ? 0 : errno;
}

}  // namespace

const char* name(int number) { return number >= 0 && number < kCount ? kNames[number] : nullptr; }

std::optional<int> number(std::string_view wanted) {
  for (int n = 0; n < kCount; ++n)
    if (wanted == kNames[n]) return n;
  return std::nullopt;
}

std::string names(uint64_t set) {
  std::string out;
  for (int n = 0; n < 64; ++n)
    if (set & (uint64_t(1) << n)) {
      out += out.empty() ? "" : ", ";
      out += name(n) ? name(n) : "capability " + std::to_string(n);
    }
  return out.empty() ? "none" : out;
}

uint64_t permitted() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return 0;
  return uint64_t(data[0].permitted) | uint64_t(data[1].permitted) << 32;
}

// In this order because each step needs what a later one removes:
// CAP_SETPCAP for the bounding set and the securebits, the kept ones in
// permitted and inheritable before they can be raised into ambient, and the
// ambient raise before SECBIT_NO_CAP_AMBIENT_RAISE forbids it.
int restrict_to(uint64_t kept) {
  // Decisions on the raw calls' results, not errno: the supervisor may be
  // running beside this child in the same memory (kernel/spawn.h).
  // EINVAL: no ambient capabilities in this kernel.
  if (const long result = raw::syscall4(SYS_prctl, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL); result != 0 && result != -EINVAL)
    return int(-result);
  // EINVAL: past the kernel's last capability. EPERM: no CAP_SETPCAP, so the
  // bounding set cannot change at all (nor matter: the sets below empty).
  for (int cap = 0; cap < 64; ++cap) {
    if (kept & (uint64_t(1) << cap)) continue;
    const long result = raw::syscall4(SYS_prctl, PR_CAPBSET_DROP, cap);
    if (result == 0) continue;
    if (result == -EINVAL || result == -EPERM) break;
    return int(-result);
  }
  if (kept) {
    // Keep CAP_SETPCAP a moment longer, for the securebits.
    if (int error = set_sets(kept | kSetPcap, kept | kSetPcap, kept)) return error;
    for (int cap = 0; cap < 64; ++cap)
      if ((kept & (uint64_t(1) << cap)) && ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) return errno;
  }
  // Needs CAP_SETPCAP; without it the thread has no capabilities to lose anyway.
  const unsigned long locked = SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                               SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
                               SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
  if (const long result = raw::syscall4(SYS_prctl, PR_SET_SECUREBITS, locked); result != 0 && result != -EPERM)
    return int(-result);
  return set_sets(kept, kept, kept);
}

}  // namespace aasm::capabilities
