// Landlock applier: probe the ABI, build a ruleset from a plan, restrict.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "plan/plan.h"

namespace aasm::landlock {

struct AbiProbe {
  int abi = 0;        // 0 when Landlock is unavailable
  int error = 0;      // errno of the probe when abi == 0
  uint32_t errata = 0;
};

AbiProbe probe_abi();

// The kernel's Landlock errata (security/landlock/errata/abi-N.h): bit
// number-1 of LANDLOCK_CREATE_RULESET_ERRATA is set when the fix is in.
struct Erratum {
  int number;
  int abi;           // the ABI whose behaviour the fix corrects
  const char* name;  // the kernel's own title
};
inline constexpr Erratum kErrata[] = {
    {1, 4, "TCP socket identification (TCP rights no longer restrict SMC, MPTCP or SCTP)"},
    {2, 6, "scoped signal handling (threads of one process may signal each other)"},
    {3, 1, "disconnected directory handling (no widening through rename or link)"},
};
// The fixes `errata` has, by number, ABI and title (none for 0); a bit the table
// does not know is named "erratum N".
std::vector<std::string> errata_names(uint32_t errata);

// Creates the ruleset (close-on-exec fd) with the plan's handled rights.
Result<int> create_ruleset(const plan::LandlockRuleset& ruleset);

// Grants `access` beneath the object `path_fd` (an O_PATH descriptor), whose
// fstat the caller already has. Directory-only rights are dropped for
// non-directories, as the kernel requires.
Status add_path_rule(int ruleset_fd, int path_fd, const struct stat& path_stat, uint64_t access);

// Grants `access` beneath the directory at `path`, opened here: in the child,
// for the filesystem view's own /proc, /tmp, /dev/shm and /dev/pts, which
// exist only once it is built and which no rule on a host path covers
// (docs/filesystem-view.md). Returns errno; raw system calls only,
// async-signal-safe.
int add_directory_rule(int ruleset_fd, const char* path, uint64_t access);

// Grants `access` (LANDLOCK_ACCESS_NET_*) for TCP `port`.
Status add_net_rule(int ruleset_fd, uint16_t port, uint64_t access);

// Enforces the ruleset on the calling thread. Needs no_new_privs (or
// CAP_SYS_ADMIN). `flags`: landlock_restrict_self's (landlock_uapi.h).
// Returns errno on failure; async-signal-safe.
int restrict_self(int ruleset_fd, uint32_t flags = 0);

}  // namespace aasm::landlock
