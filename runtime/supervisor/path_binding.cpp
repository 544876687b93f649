#include "supervisor/path_binding.h"

#include <fcntl.h>
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

bool is_within(const std::string& path, const std::string& tree) {
  if (tree == "/") return true;
  return path == tree || (path.size() > tree.size() && path.compare(0, tree.size(), tree) == 0 && path[tree.size()] == '/');
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

int open_denied_directory(const BoundRuleset& bound) {
  static const char* const kCandidates[] = {"/", "/boot", "/root", "/sys", "/proc", "/dev", "/var", "/etc", "/usr", "/tmp"};
  for (const char* candidate : kCandidates) {
    bool granted = false;
    for (const BoundPath& path : bound.granted)
      if ((path.access & landlock::fs::kReadDir) && !path.resolved.empty() && is_within(candidate, path.resolved))
        granted = true;
    if (granted) continue;
    const int fd = ::open(candidate, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return fd;
  }
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

Result<BoundRuleset> bind_landlock_ruleset(const plan::LandlockRuleset& ruleset, const LaunchContext& context) {
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
        bound.granted.push_back({rule_template(rule), "", 0});
        continue;
      }
      return fail("landlock: required path '" + *path + "' cannot be opened: " + std::strerror(errno) +
                  " (create it, or list it under filesystem.optional)");
    }
    Status added = landlock::add_path_rule(bound.ruleset_fd, path_fd, rule.access);
    bound.granted.push_back({rule_template(rule), resolved_path(path_fd, *path), rule.access});
    ::close(path_fd);
    if (!added) return fail("landlock: rule for '" + *path + "': " + added.error().message);
  }
  for (const plan::LandlockNetRule& rule : ruleset.net_rules)
    if (Status added = landlock::add_net_rule(bound.ruleset_fd, rule.port, rule.access); !added)
      return fail("landlock: " + added.error().message);
  return bound;
}

}  // namespace aasm
