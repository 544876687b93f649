// The plan file format, version 1: constants shared by the writer and the
// reader. docs/plan-format.md describes every byte; keep the two in step.
#pragma once

#include <cstddef>
#include <cstdint>

namespace aasm::plan {

inline constexpr char kMagic[8] = {'A', 'A', 'S', 'M', 'P', 'L', 'A', 'N'};
inline constexpr uint16_t kFormatVersion = 1;

inline constexpr size_t kHeaderSize = 32;
inline constexpr size_t kSectionEntrySize = 24;
inline constexpr size_t kDigestSize = 32;
inline constexpr size_t kSectionAlignment = 8;

// Fixed limits, checked before anything else is read.
inline constexpr size_t kMaxPlanSize = 16u << 20;
inline constexpr size_t kMaxSections = 64;
inline constexpr size_t kMaxBpfInstructions = 4096;  // BPF_MAXINSNS
inline constexpr size_t kMaxLandlockRules = 4096;
inline constexpr size_t kMaxLandlockNetRules = 4096;
inline constexpr size_t kMaxLandlockControls = 16;
inline constexpr size_t kMaxPathBytes = 4096;       // PATH_MAX
inline constexpr size_t kMaxStringBytes = 65535;
inline constexpr size_t kMaxListEntries = 65535;
inline constexpr size_t kMaxViewTrees = 4096;
inline constexpr size_t kMaxPinnedFiles = 4096;
inline constexpr size_t kMaxBwrapArgs = 16384;
inline constexpr size_t kMaxLowerings = 16;
inline constexpr size_t kMaxEgressPatterns = 4096;

enum class SectionType : uint32_t {
  kMeta = 1,             // key/value strings: compiler version, sources
  kLandlock = 2,         // the ruleset description
  kSeccompProgram = 3,   // one per target architecture
  kSyscallManifest = 4,  // which syscall came from where (for show/receipts)
  kProcess = 5,          // resource limits, environment, supervision
  kFilesystemView = 6,   // the command's own root: binds, /proc, /dev, private tmpfs
  kProvenance = 7,       // which policy line made each decision (for the denial report)
  kPinned = 8,           // files pinned by content: path, size, SHA-256 (filesystem.pinned)
  kCallTables = 9,       // each non-x86_64 target's call names (for the denial report)
  kBwrap = 10,           // the bubblewrap argument vector the launcher runs the command under (--backend bwrap)
  kLowerings = 11,       // several backends' lowerings, the launcher takes the first the host can run (--backend auto)
  kEgress = 12,          // the host names the launcher's broker lets the command reach (network.outbound.hosts)
};

// Section flag bits. A reader refuses an unknown section with the critical
// bit and skips an unknown one without it (the PNG chunk convention).
inline constexpr uint32_t kSectionCritical = 1u << 0;
inline constexpr uint32_t kKnownSectionFlags = kSectionCritical;

// AUDIT_ARCH_* values (linux/audit.h), the first word a seccomp program checks.
inline constexpr uint32_t kAuditArchX86_64 = 0xC000003E;
inline constexpr uint32_t kAuditArchAarch64 = 0xC00000B7;

}  // namespace aasm::plan
