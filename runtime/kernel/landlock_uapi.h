// Landlock UAPI, ABI 1 through kLatestAbi. Debian 12's <linux/landlock.h> stops at
// ABI 2 while the kernels we run on speak 7 and newer; the kernel ABI is stable, so the
// structs and bits are defined here instead of taken from the host headers.
#pragma once

#include <algorithm>
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
inline constexpr uint32_t kCreateRulesetErrata = 1u << 1;
inline constexpr int kErrataAbi = 7;  // the first ABI that understands kCreateRulesetErrata

// landlock_restrict_self flags (ABI 7): the domain's denials are audited
// after an exec too (by default only until the next one).
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1u << 1;
inline constexpr int kLogAbi = 7;  // the first ABI that writes audit records

// The rights, named as the kernel names them, from their one table
// (kernel/landlock_rights.def).
namespace fs {
#define AASM_LANDLOCK_FS(id, name, bit, abi) inline constexpr uint64_t id = 1ull << (bit);
#include "kernel/landlock_rights.def"

// Rights that apply to a file itself; the kernel rejects directory-only
// rights on a rule whose path is not a directory (EINVAL).
inline constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev | kResolveUnix;
}  // namespace fs

namespace net {
#define AASM_LANDLOCK_NET(id, name, bit, abi) inline constexpr uint64_t id = 1ull << (bit);
#include "kernel/landlock_rights.def"
}  // namespace net

namespace scope {
#define AASM_LANDLOCK_SCOPE(id, name, bit, abi) inline constexpr uint64_t id = 1ull << (bit);
#include "kernel/landlock_rights.def"
}  // namespace scope

// The newest ABI the table describes.
inline constexpr int kLatestAbi = std::max({
#define AASM_LANDLOCK_ABI(abi, kernel_release) abi,
#include "kernel/landlock_rights.def"
});

enum class RightKind : uint8_t { kFs, kNet, kScope };

struct Right {
  RightKind kind;
  uint64_t bit;
  const char* name;  // "read_file", "connect_tcp", "signal"
  int abi;           // the ABI that brought it
};

inline constexpr Right kRights[] = {
#define AASM_LANDLOCK_FS(id, name, bit, abi) {RightKind::kFs, fs::id, name, abi},
#define AASM_LANDLOCK_NET(id, name, bit, abi) {RightKind::kNet, net::id, name, abi},
#define AASM_LANDLOCK_SCOPE(id, name, bit, abi) {RightKind::kScope, scope::id, name, abi},
#include "kernel/landlock_rights.def"
};

// Every right of a kind that a kernel of the given ABI understands, as
// rust-landlock's from_all(abi).
constexpr uint64_t rights_for_abi(RightKind kind, int abi) {
  uint64_t rights = 0;
  for (const Right& right : kRights)
    if (right.kind == kind && right.abi <= abi) rights |= right.bit;
  return rights;
}
constexpr uint64_t fs_rights_for_abi(int abi) { return rights_for_abi(RightKind::kFs, abi); }
constexpr uint64_t net_rights_for_abi(int abi) { return rights_for_abi(RightKind::kNet, abi); }
constexpr uint64_t scopes_for_abi(int abi) { return rights_for_abi(RightKind::kScope, abi); }

// The lowest ABI that understands all of the given rights and scopes.
constexpr uint32_t abi_floor(uint64_t fs, uint64_t net, uint64_t scoped) {
  for (int abi = 1; abi < kLatestAbi; ++abi)
    if (!(fs & ~fs_rights_for_abi(abi)) && !(net & ~net_rights_for_abi(abi)) && !(scoped & ~scopes_for_abi(abi)))
      return uint32_t(abi);
  return kLatestAbi;
}

// A right's name, or nullptr for a bit the table does not describe.
constexpr const char* right_name(RightKind kind, uint64_t bit) {
  for (const Right& right : kRights)
    if (right.kind == kind && right.bit == bit) return right.name;
  return nullptr;
}

}  // namespace aasm::landlock
