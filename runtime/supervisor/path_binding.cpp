#include "supervisor/path_binding.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "base/path_tree.h"
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

uint64_t rights_on(const BoundRuleset& bound, const FileIdentity& identity) {
  uint64_t rights = 0;
  for (const BoundPath& path : bound.granted)
    if (path.identity == identity) rights |= path.access;
  return rights;
}

}  // namespace

const char* variable_name(plan::PathBase base) {
  switch (base) {
    case plan::PathBase::kCwd: return "${CWD}";
    case plan::PathBase::kHome: return "${HOME}";
    case plan::PathBase::kAbsolute: break;
  }
  return "";
}

std::string rule_template(const plan::LandlockRule& rule) { return variable_name(rule.base) + rule.path; }

// Inodes, not names, are compared, which also catches a rule bound through
// another name or a bind mount.
uint64_t rights_on(const BoundRuleset& bound, int fd) {
  const std::optional<FileIdentity> identity = identity_of(fd);
  return identity ? rights_on(bound, *identity) : 0;
}

// Landlock grants a rule's rights on its inode and everything beneath, so a
// directory is readable when a READ_DIR rule sits on it or on an ancestor.
// The root has no ancestor: it is denied unless a rule sits on it, and then
// every directory is readable and none can serve.
int open_denied_directory(const BoundRuleset& bound) {
  const int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return -1;
  const std::optional<FileIdentity> identity = identity_of(root);
  if (identity && !(rights_on(bound, *identity) & landlock::fs::kReadDir)) return root;
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

namespace {

// HOME as the rules use it: trailing and repeated '/' dropped. '.' and '..'
// are refused rather than folded: which tree a rule lies in is decided on
// the text, and '..' would let the text and the kernel's walk disagree.
Result<std::string> normalized_home(const std::string& home) {
  if (home.empty() || home[0] != '/')
    return make_error("the plan uses ${HOME} but HOME is unset or not absolute; set HOME to an absolute path");
  std::string out;
  for (size_t at = 0; at < home.size();) {
    const size_t next = std::min(home.find('/', at + 1), home.size());
    const std::string segment = home.substr(at + 1, next - at - 1);
    if (segment == "." || segment == "..")
      return make_error("the plan uses ${HOME} but HOME '" + home +
                        "' has a '.' or '..' segment; set HOME to the directory's real path");
    if (!segment.empty()) out += "/" + segment;
    at = next;
  }
  return out.empty() ? "/" : out;
}

// ${CWD} or ${HOME} on this host.
Result<std::string> variable_value(plan::PathBase base, const LaunchContext& context) {
  if (base == plan::PathBase::kCwd) return context.cwd;
  return normalized_home(context.home);
}

// `rest` ("" or "/x") after a directory.
std::string joined(const std::string& directory, const std::string& rest) {
  return directory == "/" && !rest.empty() ? rest : directory + rest;
}

}  // namespace

Result<std::string> expand_rule_path(const plan::LandlockRule& rule, const LaunchContext& context) {
  if (rule.base == plan::PathBase::kAbsolute) return rule.path;
  auto value = variable_value(rule.base, context);
  if (!value) return value.error();
  return joined(*value, rule.path);
}

namespace {

// Where ${CWD} and ${HOME} must not resolve unless the policy opts in: a
// `write: ${CWD}` started from / would grant the whole system. Compared with
// the variable's real path (so a HOME that is a link to / counts); with a
// merged /usr, /bin is /usr/bin, hence both spellings.
constexpr const char* kSystemRoots[] = {"/",         "/bin",     "/boot",       "/dev",       "/etc",
                                        "/lib",      "/lib32",   "/lib64",      "/libx32",    "/proc",
                                        "/run",      "/sbin",    "/sys",        "/usr",       "/usr/bin",
                                        "/usr/lib",  "/usr/lib32", "/usr/lib64", "/usr/libx32", "/usr/sbin",
                                        "/var"};

}  // namespace

bool is_system_root(const std::string& real_path) {
  for (const char* root : kSystemRoots)
    if (real_path == root) return true;
  return false;
}

namespace {

// A rule granting more than reading and executing lets the command create,
// remove and rename entries beneath its path: plant a link where the next
// launch will look a rule path up.
bool makes_writable(uint64_t access) {
  return access & ~(landlock::fs::kExecute | landlock::fs::kReadFile | landlock::fs::kReadDir);
}

// How the launcher reaches a rule path: from an anchor it opens following
// links (a path the operator wrote or chose), then `rest` beneath it
// without following any. A link the command could have planted cannot
// re-point the rule then.
struct Lookup {
  std::string anchor;
  std::string rest;  // relative; empty: the anchor itself
  std::string why;   // where the anchor is, for the refusal; empty: the path is opened whole, links followed
};

struct WritableTree {
  std::string path;           // expanded
  std::string rule_template;  // as the plan writes it
};

// The outermost writable tree holding the path is the anchor: a nested
// writable tree can itself be a link planted in the outer one. Otherwise a
// ${CWD}/${HOME} rule is walked from its variable.
Lookup lookup_for(const plan::LandlockRule& rule, const std::string& path, const std::vector<WritableTree>& writable,
                  const LaunchContext& context) {
  const WritableTree* outermost = nullptr;
  for (const WritableTree& tree : writable)
    if (at_or_beneath(path, tree.path) && (!outermost || tree.path.size() < outermost->path.size())) outermost = &tree;
  if (outermost && outermost->path != path)
    return {outermost->path, path.substr(outermost->path == "/" ? 1 : outermost->path.size() + 1),
            "inside '" + outermost->path + "', which rule '" + outermost->rule_template + "' makes writable"};
  if (outermost || rule.base == plan::PathBase::kAbsolute) return {path, "", ""};
  // expand_rule_path succeeded for this rule, so the variable has a value.
  const std::string variable = *variable_value(rule.base, context);
  return {variable, rule.path.empty() ? "" : rule.path.substr(1),
          std::string("under ") + variable_name(rule.base) + " ('" + variable + "')"};
}

// Anchors opened once each (O_PATH, links followed), closed at scope exit.
class Anchors {
 public:
  Anchors() = default;
  Anchors(const Anchors&) = delete;
  Anchors& operator=(const Anchors&) = delete;
  ~Anchors() {
    for (const auto& [path, opened] : opened_)
      if (opened.fd >= 0) ::close(opened.fd);
  }
  // The anchor's descriptor, or -1 with errno set as the open left it.
  int open(const std::string& path) {
    auto [at, inserted] = opened_.try_emplace(path);
    if (inserted) {
      at->second.fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
      at->second.error = at->second.fd < 0 ? errno : 0;
    }
    errno = at->second.error;
    return at->second.fd;
  }

 private:
  struct Opened {
    int fd = -1, error = 0;
  };
  std::map<std::string, Opened> opened_;
};

// openat2 (Linux 5.6): `rest` beneath the anchor, no symbolic link followed
// (magic links of /proc neither), nothing above the anchor reached.
int open_beneath(int anchor_fd, const std::string& rest) {
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH;
  return int(::syscall(SYS_openat2, anchor_fd, rest.c_str(), &how, sizeof how));
}

// The first symbolic link on `rest` beneath the anchor, for the refusal:
// its path relative to the anchor and what it points to.
std::pair<std::string, std::string> first_link(int anchor_fd, const std::string& rest) {
  for (size_t end = rest.find('/');; end = rest.find('/', end + 1)) {
    const std::string prefix = rest.substr(0, end);
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat(anchor_fd, prefix.c_str(), target, sizeof target - 1);
    if (n >= 0) return {prefix, std::string(target, size_t(n))};
    if (end == std::string::npos) return {rest, "?"};
  }
}

std::string planted_link_refusal(const plan::LandlockRule& rule, const Lookup& lookup, int anchor_fd) {
  const auto [link, target] = first_link(anchor_fd, lookup.rest);
  return "landlock: rule '" + rule_template(rule) + "': '" + joined(lookup.anchor, "/" + link) +
         "' is a symbolic link (to '" + target + "') " + lookup.why +
         ", where a confined command could have planted it, so the launcher does not follow it; write the real "
         "path into the policy instead of the link, or move the path out of the writable tree";
}

// ${CWD} or ${HOME} resolving to a system root refuses the launch, unless
// every rule using the variable carries kRuleSystemRootTemplate.
Status check_system_roots(const plan::LandlockRuleset& ruleset, const LaunchContext& context, Anchors& anchors) {
  for (plan::PathBase base : {plan::PathBase::kCwd, plan::PathBase::kHome}) {
    const plan::LandlockRule* refused = nullptr;
    for (const plan::LandlockRule& rule : ruleset.rules)
      if (rule.base == base && !(rule.flags & plan::kRuleSystemRootTemplate) && !refused) refused = &rule;
    if (!refused) continue;
    auto value = variable_value(base, context);
    if (!value) return make_error("landlock: " + value.error().message);
    // getcwd() already gives the working directory's real path; HOME is
    // text, and may be a link.
    std::string real = *value;
    if (base == plan::PathBase::kHome) {
      const int fd = anchors.open(*value);
      if (fd < 0) continue;  // nothing there to grant; the rule reports it
      real = resolved_path(fd, *value);
    }
    if (is_system_root(real))
      return make_error(std::string("landlock: ") + variable_name(base) + " resolves to '" + real +
                        "', a system root, so rule '" + rule_template(*refused) + "' would grant it; start aasm-launch " +
                        (base == plan::PathBase::kCwd ? "from the project's directory" : "with HOME set to a user's home") +
                        ", or, if the policy means it, set filesystem.templates_may_resolve_to_system_roots: true");
  }
  return Ok{};
}

// A rule path opened O_PATH: a descriptor (the caller closes it when
// `owned`; an anchor's stays with the anchors), or the errno of the open, or
// a refusal to give as it is.
struct OpenedRulePath {
  int fd = -1;
  bool owned = true;
  int error = 0;
  std::string refusal;
};

// `anchored`: paths that are anchors of other rules, opened once for both.
OpenedRulePath open_rule_path(const plan::LandlockRule& rule, const std::string& path, const Lookup& lookup,
                              Anchors& anchors, const std::set<std::string>& anchored) {
  if (lookup.why.empty() && anchored.count(path)) {
    const int fd = anchors.open(path);
    return {fd, false, fd < 0 ? errno : 0, ""};
  }
  if (lookup.why.empty()) {
    // O_PATH follows symlinks: a link in an allow-list outside every tree
    // the command can change grants its target, as resolved now, at launch.
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    return {fd, true, fd < 0 ? errno : 0, ""};
  }
  const int anchor_fd = anchors.open(lookup.anchor);
  if (anchor_fd < 0 || lookup.rest.empty()) return {anchor_fd, false, anchor_fd < 0 ? errno : 0, ""};
  const int fd = open_beneath(anchor_fd, lookup.rest);
  if (fd >= 0) return {fd, true, 0, ""};
  const int error = errno;
  if (error == ELOOP) return {-1, true, error, planted_link_refusal(rule, lookup, anchor_fd)};
  if (error == ENOSYS || error == EPERM)
    return {-1, true, error,
            "landlock: rule '" + rule_template(rule) + "' lies " + lookup.why +
                " and must be resolved without following links the command could have planted, which needs "
                "openat2 (Linux 5.6); this kernel, or a seccomp filter around aasm-launch, refuses it: " +
                std::strerror(error) + " (run on a newer kernel, or allow openat2)"};
  return {-1, true, error, ""};
}

}  // namespace

Result<BoundRuleset> bind_landlock_ruleset(const plan::LandlockRuleset& ruleset, const LaunchContext& context,
                                           ResolvedPaths resolved) {
  std::vector<std::string> paths;
  std::vector<WritableTree> writable;
  for (const plan::LandlockRule& rule : ruleset.rules) {
    auto path = expand_rule_path(rule, context);
    if (!path) return make_error("landlock: " + path.error().message);
    paths.push_back(*path);
    if (makes_writable(rule.access)) writable.push_back({*path, rule_template(rule)});
  }
  std::vector<Lookup> lookups;
  std::set<std::string> anchored;
  for (size_t i = 0; i < ruleset.rules.size(); ++i) {
    lookups.push_back(lookup_for(ruleset.rules[i], paths[i], writable, context));
    if (!lookups.back().rest.empty()) anchored.insert(lookups.back().anchor);
  }
  Anchors anchors;
  if (Status roots = check_system_roots(ruleset, context, anchors); !roots) return roots.error();

  auto fd = landlock::create_ruleset(ruleset);
  if (!fd) return make_error("landlock: " + fd.error().message);
  BoundRuleset bound{*fd, {}, {}};
  auto fail = [&](std::string message) -> Result<BoundRuleset> {
    ::close(bound.ruleset_fd);
    return make_error(std::move(message));
  };
  for (size_t i = 0; i < ruleset.rules.size(); ++i) {
    const plan::LandlockRule& rule = ruleset.rules[i];
    const std::string& path = paths[i];
    const OpenedRulePath opened = open_rule_path(rule, path, lookups[i], anchors, anchored);
    if (!opened.refusal.empty()) return fail(opened.refusal);
    if (opened.fd < 0) {
      if (path_absent(opened.error) && (rule.flags & plan::kRuleOptional)) {
        bound.skipped_optional.push_back(path);
        bound.granted.push_back({rule_template(rule), "", 0, std::nullopt});
        continue;
      }
      return fail("landlock: required path '" + path + "' cannot be opened: " + std::strerror(opened.error) +
                  " (create it, or list it under filesystem.optional)");
    }
    const int path_fd = opened.fd;
    struct stat st {};
    if (::fstat(path_fd, &st) != 0) {
      const int error = errno;
      if (opened.owned) ::close(path_fd);
      return fail("landlock: fstat of '" + path + "': " + std::strerror(error));
    }
    Status added = landlock::add_path_rule(bound.ruleset_fd, path_fd, st, rule.access);
    bound.granted.push_back({rule_template(rule), resolved == ResolvedPaths::kRecord ? resolved_path(path_fd, path) : "",
                             rule.access, FileIdentity{uint64_t(st.st_dev), uint64_t(st.st_ino)}});
    if (opened.owned) ::close(path_fd);
    if (!added) return fail("landlock: rule for '" + path + "': " + added.error().message);
  }
  for (const plan::LandlockNetRule& rule : ruleset.net_rules)
    if (Status added = landlock::add_net_rule(bound.ruleset_fd, rule.port, rule.access); !added)
      return fail("landlock: " + added.error().message);
  return bound;
}

}  // namespace aasm
