// Launch-time path binding: turn the plan's path templates into O_PATH
// descriptors on this host, and build the Landlock ruleset from them.
#pragma once

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "plan/plan.h"

namespace aasm {

// Where ${CWD} and ${HOME} come from: the launcher's own context.
struct LaunchContext {
  std::string cwd;
  std::string home;  // empty when HOME is unset
};

Result<LaunchContext> current_launch_context();

// The rule's path on this host, or an error naming the unset variable (or
// a HOME with '.' or '..' segments; trailing and repeated '/' are dropped).
Result<std::string> expand_rule_path(const plan::LandlockRule& rule, const LaunchContext& context);

// Which file a rule landed on: Landlock ties rules to inodes, not names.
struct FileIdentity {
  uint64_t device = 0, inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

struct BoundPath {
  std::string rule_template;  // as the plan writes it: "${CWD}/build"
  std::string resolved;       // the path the kernel resolved (links followed only outside writable trees and variables); empty when skipped or not recorded
  uint64_t access = 0;
  std::optional<FileIdentity> identity;  // none when skipped
};

const char* variable_name(plan::PathBase base);

// Whether a real path is one of the system roots a ${CWD}/${HOME} template
// may not resolve to unless the policy opts in ("/", "/usr", "/etc", ...).
bool is_system_root(const std::string& real_path);  // "${CWD}", "${HOME}", "" for absolute
std::string rule_template(const plan::LandlockRule& rule);

// The path the kernel resolved for an open descriptor (/proc/self/fd), or
// `fallback` when it cannot be read.
std::string resolved_path(int fd, const std::string& fallback);

// Whether a lookup's errno says the path is not there, so that an optional
// path is skipped: ENOENT, or ENOTDIR where a component on the way is a file
// (`.git` is one in a git worktree or submodule: no `.git/config` beneath it).
inline bool path_absent(int error) { return error == ENOENT || error == ENOTDIR; }

struct BoundRuleset {
  int ruleset_fd = -1;                       // close-on-exec
  std::vector<std::string> skipped_optional;  // optional paths missing here
  std::vector<BoundPath> granted;             // every rule path as bound (skipped ones with no resolved path)
};

// A directory the bound ruleset denies reading (none of its rules grants
// READ_DIR on it or above it), opened O_PATH, for the self-check after
// restrict_self: the root, unless a rule grants reading it (then -1).
int open_denied_directory(const BoundRuleset& bound);

// The rights of the rules that sit on the file `fd` refers to (not those
// inherited from rules above it).
uint64_t rights_on(const BoundRuleset& bound, int fd);

// Whether binding also records each path as the kernel resolved it (a
// readlink of /proc/self/fd per rule): for receipts and --dry-run only, as
// it costs a few microseconds per rule on every launch.
enum class ResolvedPaths { kSkip, kRecord };

// Creates the ruleset and adds one rule per path. A missing required path is
// an error; a missing optional one is skipped and listed. Refused, before
// any rule is added: ${CWD} or ${HOME} resolving to a system root (unless
// the rules using it carry kRuleSystemRootTemplate). Refused when met: a
// symbolic link on a rule path inside a tree the ruleset makes writable (the
// outermost one) or, outside every such tree, beneath a rule's ${CWD} or
// ${HOME}: the command could have planted it. Paths elsewhere are opened
// following links, as the operator wrote them.
Result<BoundRuleset> bind_landlock_ruleset(const plan::LandlockRuleset& ruleset, const LaunchContext& context,
                                           ResolvedPaths resolved = ResolvedPaths::kRecord);

}  // namespace aasm
