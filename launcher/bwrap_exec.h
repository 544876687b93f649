// The bubblewrap backend's launch (docs/backends.md, "bwrap"): a plan with a
// bwrap section runs under the same supervisor, cgroup, rlimits,
// environment, descriptor scrub and receipts as any other, but its child
// execs the host's bwrap with the plan's argument vector instead of
// confining itself: bwrap builds the root of the granted trees, makes the
// namespaces, drops the capabilities and installs the plan's seccomp
// programs (each from a descriptor, as written: no listener), then execs
// the command.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "kernel/seccomp.h"
#include "plan/plan.h"

namespace aasm::bwrap {

// Where the host's bwrap is, unless `aasm-launch --bwrap PATH` says.
inline constexpr char kDefaultPath[] = "/usr/bin/bwrap";

// Whether the bwrap at `path` can run the plan, found by trying: it exists
// and is executable; it is not setuid (a setuid bwrap runs its setup with
// the owner's privileges, outside what the plan confines, and is refused
// rather than trusted); this launcher can make a user namespace (bwrap's
// --unshare-user, tried for real with a throwaway child). "" when it can;
// otherwise the missing feature and the remedy, the launch's refusal.
std::string probe(const std::string& path, uid_t uid, gid_t gid);

// The argument vector, resolved on this host, and the descriptors it names.
struct Exec {
  std::string path;               // the bwrap executed
  std::vector<std::string> args;  // argv: path, the plan's arguments, "--", the command
  std::vector<char*> argv;        // pointers into args, null-terminated
  std::vector<int> seccomp_fds;   // memfds holding one program each, in install order; inherited by bwrap
};

// Resolves the plan's templates (${CWD}, ${HOME}; a writable one that is a
// system root refused, as the Landlock rules' are), reads the host root's
// links into the bound trees, writes each filter into a memfd (kept open
// across exec, so bwrap reads it), and appends "--" and `command`.
Result<Exec> prepare(const plan::Plan& plan, const std::vector<seccomp::PreparedFilter>& filters,
                     const std::vector<std::string>& command, const std::string& bwrap_path);

}  // namespace aasm::bwrap
