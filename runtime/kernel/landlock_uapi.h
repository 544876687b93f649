// Landlock UAPI, ABI 1 through 9. Debian 12's <linux/landlock.h> stops at
// ABI 2 while the kernels we run on speak 7 and newer; the kernel ABI is stable, so the
// structs and bits are defined here instead of taken from the host headers.
#pragma once

#include <cstdint>

namespace aasm::landlock {

inline constexpr long kSysCreateRuleset = 444;  // same number on every architecture
inline constexpr long kSysAddRule = 445;
inline constexpr long kSysRestrictSelf = 446;

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct NetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

inline constexpr int kRulePathBeneath = 1;
inline constexpr int kRuleNetPort = 2;

inline constexpr uint32_t kCreateRulesetVersion = 1u << 0;
inline constexpr uint32_t kCreateRulesetErrata = 1u << 1;  // ABI 7

namespace fs {
inline constexpr uint64_t kExecute = 1ull << 0;
inline constexpr uint64_t kWriteFile = 1ull << 1;
inline constexpr uint64_t kReadFile = 1ull << 2;
inline constexpr uint64_t kReadDir = 1ull << 3;
inline constexpr uint64_t kRemoveDir = 1ull << 4;
inline constexpr uint64_t kRemoveFile = 1ull << 5;
inline constexpr uint64_t kMakeChar = 1ull << 6;
inline constexpr uint64_t kMakeDir = 1ull << 7;
inline constexpr uint64_t kMakeReg = 1ull << 8;
inline constexpr uint64_t kMakeSock = 1ull << 9;
inline constexpr uint64_t kMakeFifo = 1ull << 10;
inline constexpr uint64_t kMakeBlock = 1ull << 11;
inline constexpr uint64_t kMakeSym = 1ull << 12;
inline constexpr uint64_t kRefer = 1ull << 13;     // ABI 2
inline constexpr uint64_t kTruncate = 1ull << 14;  // ABI 3
inline constexpr uint64_t kIoctlDev = 1ull << 15;  // ABI 5
// connect()/sendmsg() to a pathname unix socket: ABI 9 (Linux 7.1), upstream
// "landlock: Control pathname UNIX domain socket resolution by path"
// (Günther Noack, merged 2026-04-07). ABI 8 (Linux 7.0) added only
// LANDLOCK_RESTRICT_SELF_TSYNC.
inline constexpr uint64_t kResolveUnix = 1ull << 16;

// Rights that apply to a file itself; the kernel rejects directory-only
// rights on a rule whose path is not a directory (EINVAL).
inline constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev | kResolveUnix;
}  // namespace fs

namespace net {
inline constexpr uint64_t kBindTcp = 1ull << 0;     // ABI 4
inline constexpr uint64_t kConnectTcp = 1ull << 1;  // ABI 4
}  // namespace net

namespace scope {
inline constexpr uint64_t kAbstractUnixSocket = 1ull << 0;  // ABI 6
inline constexpr uint64_t kSignal = 1ull << 1;              // ABI 6
}  // namespace scope

// The newest ABI this table describes.
inline constexpr int kLatestAbi = 9;

// Every filesystem right a kernel of the given ABI understands.
constexpr uint64_t fs_rights_for_abi(int abi) {
  if (abi < 1) return 0;
  uint64_t rights = (fs::kMakeSym << 1) - 1;  // ABI 1: bits 0..12
  if (abi >= 2) rights |= fs::kRefer;
  if (abi >= 3) rights |= fs::kTruncate;
  if (abi >= 5) rights |= fs::kIoctlDev;
  if (abi >= 9) rights |= fs::kResolveUnix;
  return rights;
}

// Every network right, and every scope, a kernel of the given ABI understands.
constexpr uint64_t net_rights_for_abi(int abi) { return abi >= 4 ? net::kBindTcp | net::kConnectTcp : 0; }
constexpr uint64_t scopes_for_abi(int abi) { return abi >= 6 ? scope::kAbstractUnixSocket | scope::kSignal : 0; }

// The lowest ABI that understands all of the given rights and scopes.
constexpr uint32_t abi_floor(uint64_t fs, uint64_t net, uint64_t scoped) {
  for (int abi = 1; abi < kLatestAbi; ++abi)
    if (!(fs & ~fs_rights_for_abi(abi)) && !(net & ~net_rights_for_abi(abi)) && !(scoped & ~scopes_for_abi(abi)))
      return uint32_t(abi);
  return kLatestAbi;
}

}  // namespace aasm::landlock
