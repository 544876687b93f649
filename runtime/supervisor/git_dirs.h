// The git directories of a repository that the filesystem view protects
// (docs/filesystem-view.md#git-directories-found-at-launch): the files in a
// git directory that run code or hold configuration, one table, and the
// git directories nested in one (submodules' under modules/, linked
// worktrees' under worktrees/), found at launch by a walk that follows no
// symbolic link.
//
// Why at launch: a policy names ${CWD}/.git/hooks and ${CWD}/.git/config,
// but which submodules and worktrees a checkout has is known only when the
// launcher runs, and git runs each one's hooks and reads each one's config
// later, outside any sandbox.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace aasm::git_dirs {

// A name in a git directory that git runs code from or reads configuration
// from. `linked_worktree_only`: git reads it only in a linked worktree's git
// directory (.git/worktrees/NAME), so it is protected there only.
struct ProtectedName {
  std::string_view name;
  bool linked_worktree_only;
  std::string_view why;
};

// The one table: the shipped profiles' filesystem.readonly lists a
// repository's own ${CWD}/.git/NAME for each row that is not
// linked_worktree_only (tests/kernel/git_dirs_test.cpp checks it), and the
// launcher protects every row in each git directory it finds.
inline constexpr ProtectedName kProtectedNames[] = {
    {"hooks", false, "git runs the hooks in it"},
    {"config", false, "core.hooksPath, core.fsmonitor, aliases and filters run programs"},
    {"config.worktree", false, "read as configuration too where extensions.worktreeConfig is set"},
    {"commondir", false, "names the directory git takes config and hooks from"},
    {"gitdir", true, "names the worktree's checkout, which git worktree prune and repair act on"},
};

// Whether `name`, the last component of a protected path, is one of the
// table's: its directory may then be a git directory whose nested ones the
// launcher finds.
bool is_protected_name(std::string_view name);

// Bounds of the walk, past which the launch is refused rather than leave a
// git directory unprotected.
inline constexpr size_t kMaxGitDirs = 256;   // nested git directories found
inline constexpr size_t kMaxEntries = 4096;  // directory entries read in all
inline constexpr size_t kMaxDepth = 16;      // components below the root git directory

struct Found {
  // Nested git directories, relative to the root one ("modules/sub",
  // "modules/a/modules/b", "worktrees/w"), sorted.
  std::vector<std::string> git_dirs;
  // Symbolic links where the walk would descend ("modules/evil", or
  // "modules" itself), relative to the root: not followed, nothing beyond
  // them found or protected.
  std::vector<std::string> links;
};

// Whether `path` is a git directory as git decides it: a directory holding
// HEAD (lstat: a link named HEAD counts, as git accepts one).
bool is_git_directory(const std::string& path);

// The git directories nested in `git_dir` (a host path, itself a git
// directory): each directory beneath its modules/ holding HEAD (one that
// does not is a namespace component of a submodule named "a/b", walked
// into), each directory of its worktrees/ holding HEAD, and, in each found,
// its own modules/ and worktrees/. Every component is opened with openat
// and O_NOFOLLOW from its parent's descriptor, so a link anywhere in
// modules/ or worktrees/ is reported in `links`, never followed. Errors: a
// directory that cannot be read, or a bound exceeded.
Result<Found> find_nested(const std::string& git_dir);

// The names of the table that apply to the git directory at `relative`
// (a linked worktree's: its last-but-one component is "worktrees").
std::vector<std::string_view> names_for(std::string_view relative);

}  // namespace aasm::git_dirs
