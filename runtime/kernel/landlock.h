// Landlock applier: probe the ABI, build a ruleset from a plan, restrict.
#pragma once

#include <sys/stat.h>

#include <cstdint>

#include "base/result.h"
#include "plan/plan.h"

namespace aasm::landlock {

struct AbiProbe {
  int abi = 0;        // 0 when Landlock is unavailable
  int error = 0;      // errno of the probe when abi == 0
  uint32_t errata = 0;
};

AbiProbe probe_abi();

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
