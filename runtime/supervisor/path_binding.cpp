#include "supervisor/path_binding.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "kernel/landlock.h"
#include "kernel/landlock_uapi.h"

namespace aasm {

std::string resolved_path(int fd, const std::string& fallback) {
  char link[64], target[PATH_MAX];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  return n > 0 ? std::string(target, size_t(n)) : fallback;
}

namespace {

std::optional<FileIdentity> identity_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return FileIdentity{uint64_t(st.st_dev), uint64_t(st.st_ino)};
}

}  // namespace

std::string rule_template(const plan::LandlockRule& rule) {
  switch (rule.base) {
    case plan::PathBase::kCwd: return "${CWD}" + rule.path;
    case plan::PathBase::kHome: return "${HOME}" + rule.path;
    case plan::PathBase::kAbsolute: break;
  }
  return rule.path;
}

// Landlock grants a rule's rights on its inode and everything beneath, so a
// directory is readable when a READ_DIR rule sits on it or on an ancestor.
// The root has no ancestor: it is denied unless a rule sits on it, and then
// every directory is readable and none can serve. Inodes, not names, are
// compared, which also catches a rule bound through another name or a bind
// mount.
uint64_t rights_on(const BoundRuleset& bound, int fd) {
  const std::optional<FileIdentity> identity = identity_of(fd);
  uint64_t rights = 0;
  for (const BoundPath& path : bound.granted)
    if (identity && path.identity == identity) rights |= path.access;
  return rights;
}

int open_denied_directory(const BoundRuleset& bound) {
  const int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  if (identity_of(root) && !(rights_on(bound, root) & landlock::fs::kReadDir)) return root;
  ::close(root);
  return -1;
}

Result<LaunchContext> current_launch_context() {
  LaunchContext context;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr)
    return make_error(std::string("cannot determine the working directory for ${CWD}: ") + std::strerror(errno));
  context.cwd = cwd;
  if (const char* home = std::getenv("HOME")) context.home = home;
  return context;
}

Result<std::string> expand_rule_path(const plan::LandlockRule& rule, const LaunchContext& context) {
  switch (rule.base) {
    case plan::PathBase::kAbsolute: return rule.path;
    case plan::PathBase::kCwd: return context.cwd + rule.path;
    case plan::PathBase::kHome:
      if (context.home.empty() || context.home[0] != '/')
        return make_error("the plan uses ${HOME} but HOME is unset or not absolute; set HOME to an absolute path");
      return context.home + rule.path;
  }
  return make_error("unknown path variable");
}

Result<BoundRuleset> bind_landlock_ruleset(const plan::LandlockRuleset& ruleset, const LaunchContext& context,
                                           ResolvedPaths resolved) {
  auto fd = landlock::create_ruleset(ruleset);
  if (!fd) return make_error("landlock: " + fd.error().message);
  BoundRuleset bound{*fd, {}, {}};
  auto fail = [&](std::string message) -> Result<BoundRuleset> {
    ::close(bound.ruleset_fd);
    return make_error(std::move(message));
  };
  for (const plan::LandlockRule& rule : ruleset.rules) {
    auto path = expand_rule_path(rule, context);
    if (!path) return fail("landlock: " + path.error().message);
    // O_PATH follows symlinks: a link in an allow-list grants its target, as
    // resolved now, at launch.
    const int path_fd = ::open(path->c_str(), O_PATH | O_CLOEXEC);
    if (path_fd < 0) {
      if (errno == ENOENT && (rule.flags & plan::kRuleOptional)) {
        bound.skipped_optional.push_back(*path);
        bound.granted.push_back({rule_template(rule), "", 0, std::nullopt});
        continue;
      }
      return fail("landlock: required path '" + *path + "' cannot be opened: " + std::strerror(errno) +
                  " (create it, or list it under filesystem.optional)");
    }
    struct stat st {};
    if (::fstat(path_fd, &st) != 0) {
      const int error = errno;
      ::close(path_fd);
      return fail("landlock: fstat of '" + *path + "': " + std::strerror(error));
    }
    Status added = landlock::add_path_rule(bound.ruleset_fd, path_fd, st, rule.access);
    bound.granted.push_back({rule_template(rule), resolved == ResolvedPaths::kRecord ? resolved_path(path_fd, *path) : "",
                             rule.access, FileIdentity{uint64_t(st.st_dev), uint64_t(st.st_ino)}});
    ::close(path_fd);
    if (!added) return fail("landlock: rule for '" + *path + "': " + added.error().message);
  }
  for (const plan::LandlockNetRule& rule : ruleset.net_rules)
    if (Status added = landlock::add_net_rule(bound.ruleset_fd, rule.port, rule.access); !added)
      return fail("landlock: " + added.error().message);
  return bound;
}

}  // namespace aasm
