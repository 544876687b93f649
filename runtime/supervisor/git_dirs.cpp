#include "supervisor/git_dirs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aasm::git_dirs {
namespace {

// A descriptor closed at scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

bool holds_head(int dir_fd) {
  struct stat st {};
  return ::fstatat(dir_fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

// Keeps errno, for the message of a failure it is asked about.
bool is_link(int dir_fd, const char* name) {
  const int saved = errno;
  struct stat st {};
  const bool link = ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  errno = saved;
  return link;
}

std::string joined(const std::string& relative, std::string_view name) {
  return relative.empty() ? std::string(name) : relative + "/" + std::string(name);
}

class Walk {
 public:
  explicit Walk(std::string root) : root_(std::move(root)) {}

  Status git_dir(int fd, const std::string& relative) {
    for (const char* nested : {"modules", "worktrees"})
      if (Status s = nested_dir(fd, relative, nested); !s) return s;
    return Ok{};
  }

  Found take() {
    std::sort(found_.git_dirs.begin(), found_.git_dirs.end());
    std::sort(found_.links.begin(), found_.links.end());
    return std::move(found_);
  }

 private:
  // modules/ or worktrees/ of a git directory: absent is the usual case; a
  // link is reported and not followed.
  Status nested_dir(int parent, const std::string& relative, const char* name) {
    const std::string here = joined(relative, name);
    Fd fd(::openat(parent, name, kDirFlags));
    if (fd.get() < 0) {
      // O_DIRECTORY with O_NOFOLLOW answers a link ENOTDIR (or ELOOP): lstat tells it from a file.
      if (is_link(parent, name)) return link(here);
      if (errno == ENOENT || errno == ENOTDIR) return Ok{};  // none, or a file git would not use either
      return unreadable(here);
    }
    return entries(fd.get(), here, std::string_view(name) == "modules");
  }

  // Each directory in `fd`: a git directory where it holds HEAD; beneath
  // modules/ one that does not is a component of a submodule's name
  // ("libs/foo"), walked into; beneath worktrees/ it is not git's.
  Status entries(int fd, const std::string& relative, bool modules) {
    if (depth(relative) > kMaxDepth)
      return bound("is more than " + std::to_string(kMaxDepth) + " components deep", relative);
    auto names = list(fd, relative);
    if (!names) return names.error();
    for (const std::string& name : *names) {
      const std::string here = joined(relative, name);
      struct stat st {};
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return unreadable(here);
      if (S_ISLNK(st.st_mode)) {
        if (Status s = link(here); !s) return s;
        continue;
      }
      if (!S_ISDIR(st.st_mode)) continue;
      Fd child(::openat(fd, name.c_str(), kDirFlags));
      if (child.get() < 0) return is_link(fd, name.c_str()) ? link(here) : unreadable(here);  // swapped meanwhile
      Status s = Ok{};
      if (holds_head(child.get())) s = found(child.get(), here);
      else if (modules) s = entries(child.get(), here, true);
      if (!s) return s;
    }
    return Ok{};
  }

  Status found(int fd, const std::string& relative) {
    if (found_.git_dirs.size() >= kMaxGitDirs)
      return bound("holds more than " + std::to_string(kMaxGitDirs) + " git directories", relative);
    found_.git_dirs.push_back(relative);
    return git_dir(fd, relative);
  }

  // The names in a directory, sorted (the plan's mounts and the report
  // come out the same for the same tree).
  Result<std::vector<std::string>> list(int fd, const std::string& relative) {
    const int copy = ::dup(fd);  // closedir closes the descriptor it was given
    DIR* dir = copy < 0 ? nullptr : ::fdopendir(copy);
    if (!dir) {
      if (copy >= 0) ::close(copy);
      return unreadable(relative).error();
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++entries_read_ > kMaxEntries) {
        ::closedir(dir);
        return bound("has more than " + std::to_string(kMaxEntries) + " entries in its modules and worktrees",
                     relative).error();
      }
      names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  Status link(const std::string& relative) {
    found_.links.push_back(relative);
    return Ok{};
  }

  Status unreadable(const std::string& relative) const {
    return make_error(root_ + "/" + relative + ": " + std::strerror(errno) +
                      "; the git directories beneath it cannot be found, so neither protected");
  }

  Status bound(const std::string& what, const std::string& relative) const {
    return make_error(root_ + " " + what + " (at " + relative + "), more than the launcher walks to protect each " +
                      "one's hooks and config; remove the submodules' or worktrees' git directories no longer in use");
  }

  static size_t depth(const std::string& relative) { return size_t(std::count(relative.begin(), relative.end(), '/')) + 1; }

  std::string root_;
  Found found_;
  size_t entries_read_ = 0;
};

}  // namespace

bool is_protected_name(std::string_view name) {
  return std::any_of(std::begin(kProtectedNames), std::end(kProtectedNames),
                     [&](const ProtectedName& p) { return p.name == name; });
}

bool is_git_directory(const std::string& path) {
  Fd fd(::open(path.c_str(), kDirFlags));
  return fd.get() >= 0 && holds_head(fd.get());
}

Result<Found> find_nested(const std::string& git_dir) {
  Fd fd(::open(git_dir.c_str(), kDirFlags));
  if (fd.get() < 0)
    return make_error(git_dir + ": " + std::strerror(errno) + "; the git directories beneath it cannot be found");
  Walk walk(git_dir);
  if (Status s = walk.git_dir(fd.get(), ""); !s) return s.error();
  return walk.take();
}

std::vector<std::string_view> names_for(std::string_view relative) {
  const size_t last = relative.rfind('/');
  const std::string_view parent = last == std::string_view::npos ? "" : relative.substr(0, last);
  const bool linked_worktree = parent == "worktrees" || parent.ends_with("/worktrees");
  std::vector<std::string_view> names;
  for (const ProtectedName& p : kProtectedNames)
    if (linked_worktree || !p.linked_worktree_only) names.push_back(p.name);
  return names;
}

}  // namespace aasm::git_dirs
