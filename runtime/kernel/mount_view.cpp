#include "kernel/mount_view.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "base/path_tree.h"
#include "kernel/raw_syscall.h"

namespace aasm::mount_view {
namespace {

// The tmpfs that becomes the root is mounted here first, in the new mount
// namespace only. Any directory would do: pivot_root moves the tmpfs away,
// and the host's /tmp is whole again under the old root, where the binds
// are taken from.
constexpr const char* kBase = "/tmp";
// Where pivot_root puts the host's root while the view is built; detached
// and removed before the command runs.
constexpr const char* kOldRoot = "/.aasm-host-root";
constexpr const char* kOldRootBeforePivot = "/tmp/.aasm-host-root";

// Old /proc files that reach the whole machine (sysctls, magic SysRq, IRQ
// affinity, bus settings) are bound read-only onto themselves, as bwrap does:
// a root command in the host's user namespace could otherwise write them.
constexpr const char* kProcCovered[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

// devpts as bwrap mounts it: its own instance (never the host's ptys), the
// ptmx node usable by anyone, new ptys group-writable only.
constexpr const char* kDevptsOptions = "newinstance,ptmxmode=0666,mode=620";

enum class Kind { kHostBind, kProtected, kPin, kProc, kProcCover, kDevTmpfs, kDevNode, kDevPts, kTmpfs };

struct Entry {
  std::string view;
  Kind kind;
  std::string source;     // a host path (under kOldRoot once pivoted) for kHostBind and kDevNode
  uint64_t attr = 0;      // MOUNT_ATTR_* set on it after mounting
  bool directory = true;
  uint64_t bytes = 0;     // kTmpfs
  std::string what;       // MountSummary::what
};

// Mounts whose inside the build may create mount points in: they are the
// view's own (a tmpfs), not the host's.
bool creatable_inside(Kind kind) { return kind == Kind::kDevTmpfs || kind == Kind::kTmpfs; }

bool normalized(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  for (size_t start = 1; start <= path.size();) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

// Parents before children: '/' sorts before every other byte, so "/a/b"
// comes right after "/a" and before "/a-b".
bool path_less(const std::string& a, const std::string& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return (x == '/' ? 0 : static_cast<unsigned char>(x)) < (y == '/' ? 0 : static_cast<unsigned char>(y));
  });
}

Result<std::string> resolve(const std::string& path, const char* role) {
  char resolved[PATH_MAX];
  if (!::realpath(path.c_str(), resolved))
    return make_error(std::string(role) + " " + path + ": " + std::strerror(errno), errno);
  return std::string(resolved);
}

std::string options_of(uint64_t attr) {
  std::string out = (attr & MOUNT_ATTR_RDONLY) ? "ro" : "rw";
  if (attr & MOUNT_ATTR_NOSUID) out += ",nosuid";
  if (attr & MOUNT_ATTR_NODEV) out += ",nodev";
  if (attr & MOUNT_ATTR_NOEXEC) out += ",noexec";
  return out;
}

std::string mebibytes(uint64_t bytes) {
  if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

uint64_t tree_attr(uint32_t flags) {
  uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  if (!(flags & kWritable) || (flags & kProtected)) attr |= MOUNT_ATTR_RDONLY;
  if (flags & kNoExec) attr |= MOUNT_ATTR_NOEXEC;
  return attr;
}

const std::string& view_of(const Tree& tree) { return tree.view_path.empty() ? tree.host_path : tree.view_path; }

// The innermost entry `path` lies beneath, if any; `entries` sorted.
const Entry* enclosing(const std::vector<Entry>& entries, const std::string& path) {
  const Entry* found = nullptr;
  for (const Entry& entry : entries)
    if (strictly_beneath(path, entry.view) && (!found || entry.view.size() > found->view.size())) found = &entry;
  return found;
}

// A protected path: it must stay the same object in the view as on the
// host, so no link anywhere between its tree and itself, and no other name
// for it (a hard link elsewhere in the writable tree writes the same inode).
Status check_protected(const Tree& tree, const std::string& resolved_tree, const std::string& relative) {
  struct stat st {};
  if (::lstat(tree.host_path.c_str(), &st) != 0)
    return make_error("protected path " + tree.host_path + ": " + std::strerror(errno) +
                          " (a missing path cannot be protected: the command could create it)",
                      errno);
  if (S_ISLNK(st.st_mode))
    return make_error("protected path " + tree.host_path +
                      " is a symbolic link: a mount pins the link's target, not its name; protect the target instead");
  auto resolved = resolve(tree.host_path, "protected path");
  if (!resolved) return resolved.error();
  if (*resolved != resolved_tree + relative)
    return make_error("protected path " + tree.host_path + " leads through a symbolic link (to " + *resolved +
                      "); protect the path without links");
  if (S_ISREG(st.st_mode) && st.st_nlink > 1)
    return make_error("protected path " + tree.host_path + " has " + std::to_string(st.st_nlink) +
                      " hard links: the others would stay writable; remove them first");
  return Ok{};
}

bool parents_first(const Entry& a, const Entry& b) { return path_less(a.view, b.view); }

std::string offered_nodes() {
  std::string out;
  for (std::string_view node : kDevNodes) out += (out.empty() ? "" : ", ") + std::string(node);
  return out;
}

Status add_host_trees(const Spec& spec, std::vector<Entry>& entries) {
  for (const Tree& tree : spec.trees) {
    if (tree.flags & kProtected) continue;
    auto source = resolve(tree.host_path, "tree");
    if (!source) return source.error();
    entries.push_back({view_of(tree), Kind::kHostBind, *source, tree_attr(tree.flags), tree.is_directory, 0,
                       "bind " + tree.host_path});
  }
  return Ok{};
}

void add_proc(const Spec& spec, std::vector<Entry>& entries) {
  if (!spec.proc) return;
  entries.push_back({"/proc", Kind::kProc, "", 0, true, 0, "proc (the command's PID namespace)"});
  for (const char* covered : kProcCovered)
    entries.push_back({covered, Kind::kProcCover, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                       true, 0, "bind (itself, read-only)"});
}

Status add_dev(const Spec& spec, std::vector<Entry>& entries) {
  if (spec.dev_nodes.empty() && !spec.dev_pts) return Ok{};
  entries.push_back({"/dev", Kind::kDevTmpfs, "", 0, true, 0, "tmpfs (device nodes only)"});
  for (const std::string& node : spec.dev_nodes) {
    if (std::find(std::begin(kDevNodes), std::end(kDevNodes), node) == std::end(kDevNodes))
      return make_error("device node " + node + " is not one the view offers (" + offered_nodes() + ")");
    auto source = resolve("/dev/" + node, "device node");
    if (!source) return source.error();
    // A host whose /dev/null was replaced by a file (a tool that wrote
    // "atomically" to it) would otherwise hand that file to every command.
    struct stat st {};
    if (::stat(source->c_str(), &st) != 0 || !S_ISCHR(st.st_mode))
      return make_error("device node /dev/" + node + " is not a character device on this host (" + *source + ")");
    // No nodev here, or the node would not open; read-only still lets it be
    // written (the mount's read-only flag binds regular files only).
    entries.push_back({"/dev/" + node, Kind::kDevNode, *source, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
                       false, 0, "bind /dev/" + node});
  }
  if (spec.dev_pts) entries.push_back({"/dev/pts", Kind::kDevPts, "", 0, true, 0, "devpts (a new instance)"});
  return Ok{};
}

Status add_tmpfs(const Spec& spec, std::vector<Entry>& entries) {
  for (const Tmpfs& tmpfs : spec.tmpfs) {
    if (tmpfs.max_bytes == 0) return make_error("private tmpfs " + tmpfs.view_path + ": a size of 0 bytes means no limit to tmpfs");
    const uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (tmpfs.executable ? 0 : MOUNT_ATTR_NOEXEC);
    entries.push_back({tmpfs.view_path, Kind::kTmpfs, "", attr, true, tmpfs.max_bytes,
                       "tmpfs (private), " + mebibytes(tmpfs.max_bytes)});
  }
  return Ok{};
}

// Protected paths and the pins between each and its tree, into `entries`
// (sorted, holding every other mount). A protected path keeps its tree's
// flags, read-only; the pins keep them as they are.
Status add_protected(const Spec& spec, std::vector<Entry>& entries) {
  std::vector<Entry> added;
  for (const Tree& tree : spec.trees) {
    if (!(tree.flags & kProtected)) continue;
    const std::string& view = view_of(tree);
    const Entry* outer = enclosing(entries, view);
    if (!outer || outer->kind != Kind::kHostBind)
      return make_error("protected path " + view + " is inside no tree of the view: nothing to protect it from");
    if (Status checked = check_protected(tree, outer->source, view.substr(outer->view.size())); !checked)
      return checked.error();
    for (std::string pin(parent_of(view)); strictly_beneath(pin, outer->view); pin = parent_of(pin))
      added.push_back({pin, Kind::kPin, "", 0, true, 0, "bind (itself: pinned, it cannot be renamed or removed)"});
    struct stat st {};
    ::lstat(tree.host_path.c_str(), &st);
    const uint64_t attr = outer->attr | MOUNT_ATTR_RDONLY | ((tree.flags & kNoExec) ? MOUNT_ATTR_NOEXEC : 0);
    added.push_back({view, Kind::kProtected, "", attr, S_ISDIR(st.st_mode), 0, "bind (itself, protected)"});
  }
  // Protected paths first, so that a pin never takes the place of one
  // (protecting `.git` and `.git/hooks` pins nothing), and each pin once.
  for (const Entry& entry : added)
    if (entry.kind == Kind::kProtected) entries.push_back(entry);
  for (const Entry& entry : added) {
    const bool taken = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.view == entry.view; });
    if (entry.kind == Kind::kPin && !taken) entries.push_back(entry);
  }
  std::stable_sort(entries.begin(), entries.end(), parents_first);
  return Ok{};
}

// The Spec's mounts as entries, sorted parents first.
Result<std::vector<Entry>> entries_of(const Spec& spec) {
  std::vector<Entry> entries;
  if (Status added = add_host_trees(spec, entries); !added) return added.error();
  add_proc(spec, entries);
  if (Status added = add_dev(spec, entries); !added) return added.error();
  if (Status added = add_tmpfs(spec, entries); !added) return added.error();
  std::sort(entries.begin(), entries.end(), parents_first);
  if (Status added = add_protected(spec, entries); !added) return added.error();
  return entries;
}

Status check_paths(const Spec& spec, const std::vector<Entry>& entries) {
  std::set<std::string> seen;
  auto claim = [&](const std::string& path, const char* role) -> Status {
    if (!normalized(path)) return make_error(std::string(role) + " " + path + " is not an absolute path without ., .. or //");
    if (path == "/") return make_error(std::string(role) + " at /: the view would hide nothing (Landlock alone does that)");
    if (at_or_beneath(path, kOldRoot)) return make_error(std::string(role) + " " + path + " is where the view keeps the host's root while it is built");
    if (!seen.insert(path).second) return make_error(std::string(role) + " " + path + ": something else of the view is there already");
    return Ok{};
  };
  for (const Tree& tree : spec.trees)
    if (!normalized(tree.host_path)) return make_error("tree " + tree.host_path + " is not an absolute path without ., .. or //");
  for (const Entry& entry : entries)
    if (Status claimed = claim(entry.view, "mount"); !claimed) return claimed.error();
  for (const Symlink& link : spec.symlinks) {
    if (Status claimed = claim(link.view_path, "symlink"); !claimed) return claimed.error();
    const Entry* outer = enclosing(entries, link.view_path);
    if (outer && !creatable_inside(outer->kind))
      return make_error("symlink " + link.view_path + " lies inside " + outer->view + ", which is the host's: creating it would write there");
  }
  if (!spec.working_directory.empty() && !normalized(spec.working_directory))
    return make_error("working directory " + spec.working_directory + " is not an absolute path without ., .. or //");
  return Ok{};
}

// Lays out the steps into `out`.
class Writer {
 public:
  explicit Writer(Prepared& out) : out_(out) {}

  uint32_t text(std::string_view s) {
    const uint32_t offset = uint32_t(out_.text.size());
    out_.text.append(s);
    out_.text.push_back('\0');
    return offset;
  }

  void step(Op op, std::string_view target, uint64_t flags = 0, std::string_view source = {}, std::string_view fstype = {},
            std::string_view data = {}) {
    Step s{op};
    s.target = text(target);
    s.source = source.empty() ? Prepared::kNone : text(source);
    s.fstype = fstype.empty() ? Prepared::kNone : text(fstype);
    s.data = data.empty() ? Prepared::kNone : text(data);
    s.flags = flags;
    out_.steps.push_back(s);
  }

  void set_attr(const std::string& target, uint64_t attr, bool recursive, bool skip_if_missing = false) {
    step(Op::kSetAttr, target, attr);
    out_.steps.back().recursive = recursive;
    out_.steps.back().skip_if_missing = skip_if_missing;
  }

  void skip_last_if_missing() { out_.steps.back().skip_if_missing = true; }

  // Directories from `from` (exclusive, already there) down to `to`
  // (inclusive), each once.
  void make_dirs(const std::string& from, const std::string& to) {
    std::vector<std::string> missing;
    for (std::string dir = to; dir != from && dir != "/"; dir = parent_of(dir)) missing.push_back(dir);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it)
      if (made_.insert(*it).second) step(Op::kMkdir, *it, 0755);
  }

  // The empty directory or file an entry is mounted on, where the view's
  // own tmpfs holds it. Beneath a host tree it must exist there already:
  // creating it would write to the host.
  void mount_point(const std::vector<Entry>& entries, const std::string& view, bool directory) {
    const Entry* outer = enclosing(entries, view);
    if (outer && !creatable_inside(outer->kind)) return;
    make_dirs(outer ? outer->view : "/", std::string(parent_of(view)));
    if (!made_.insert(view).second) return;
    if (directory) step(Op::kMkdir, view, 0755);
    else step(Op::kMakeFile, view);
  }

 private:
  Prepared& out_;
  std::set<std::string> made_;
};

std::string tmpfs_options(uint64_t bytes) { return "mode=1777,size=" + std::to_string(bytes); }

void lay_out_entry(Writer& w, const std::vector<Entry>& entries, const Entry& e) {
  const std::string old_root = kOldRoot;
  switch (e.kind) {
    case Kind::kHostBind:
    case Kind::kDevNode:
      w.mount_point(entries, e.view, e.directory);
      w.step(Op::kMount, e.view, MS_BIND | MS_REC, old_root + e.source);
      w.set_attr(e.view, e.attr, true);
      return;
    case Kind::kProtected:
    case Kind::kPin:
      w.step(Op::kMount, e.view, MS_BIND | MS_REC, e.view);
      if (e.kind == Kind::kProtected) w.set_attr(e.view, e.attr, true);
      return;
    case Kind::kProc:
      w.mount_point(entries, e.view, true);
      w.step(Op::kMount, e.view, MS_NOSUID | MS_NODEV | MS_NOEXEC, "proc", "proc");
      return;
    case Kind::kProcCover:
      // Missing on some kernels (no /proc/irq without IRQ support).
      w.step(Op::kMount, e.view, MS_BIND | MS_REC, e.view);
      w.skip_last_if_missing();
      w.set_attr(e.view, e.attr, true, true);
      return;
    case Kind::kDevTmpfs:
      w.mount_point(entries, e.view, true);
      w.step(Op::kMount, e.view, MS_NOSUID | MS_NODEV | MS_NOEXEC, "tmpfs", "tmpfs", "mode=0755,size=65536");
      return;
    case Kind::kDevPts:
      w.mount_point(entries, e.view, true);
      w.step(Op::kMount, e.view, MS_NOSUID | MS_NOEXEC, "devpts", "devpts", kDevptsOptions);
      return;
    case Kind::kTmpfs:
      w.mount_point(entries, e.view, true);
      w.step(Op::kMount, e.view, MS_NOSUID | MS_NODEV | ((e.attr & MOUNT_ATTR_NOEXEC) ? MS_NOEXEC : 0), "tmpfs", "tmpfs",
             tmpfs_options(e.bytes));
      return;
  }
}

}  // namespace

void add_root_symlinks(Spec& spec) {
  DIR* root = ::opendir("/");
  if (!root) return;
  while (const dirent* entry = ::readdir(root)) {
    if (entry->d_type != DT_LNK) continue;
    const std::string view = std::string("/") + entry->d_name;
    char target[PATH_MAX];
    const ssize_t length = ::readlink(view.c_str(), target, sizeof target - 1);
    char resolved[PATH_MAX];
    if (length <= 0 || !::realpath(view.c_str(), resolved)) continue;
    const std::string where = resolved;
    const auto taken = [&](const std::string& path) {
      return std::any_of(spec.trees.begin(), spec.trees.end(), [&](const Tree& t) { return view_of(t) == path; }) ||
             std::any_of(spec.symlinks.begin(), spec.symlinks.end(), [&](const Symlink& l) { return l.view_path == path; });
    };
    const bool into_tree = std::any_of(spec.trees.begin(), spec.trees.end(), [&](const Tree& t) {
      return !(t.flags & kProtected) && at_or_beneath(where, view_of(t));
    });
    if (into_tree && !taken(view)) spec.symlinks.push_back({view, std::string(target, size_t(length))});
  }
  ::closedir(root);
}

Result<Prepared> prepare(const Spec& spec) {
  auto entries = entries_of(spec);
  if (!entries) return entries.error();
  if (Status checked = check_paths(spec, *entries); !checked) return checked.error();
  struct stat base {};
  if (::stat(kBase, &base) != 0 || !S_ISDIR(base.st_mode))
    return make_error(std::string("the view's root is first mounted on ") + kBase + ", which is not a directory here");

  Prepared out;
  Writer w(out);
  // Propagation first: every mount private, so nothing of the view reaches
  // the host's namespace (and no host mount event reaches the view).
  w.step(Op::kMount, "/", MS_REC | MS_PRIVATE);
  w.step(Op::kMount, kBase, MS_NOSUID | MS_NODEV, "tmpfs", "tmpfs", "mode=0755");
  w.step(Op::kMkdir, kOldRootBeforePivot, 0700);
  w.step(Op::kPivotRoot, kBase, 0, kOldRootBeforePivot);
  w.step(Op::kChdir, "/");
  out.mounts.push_back({"/", "tmpfs (empty, the view's root)", "ro,nosuid,nodev,noexec"});

  for (const Entry& e : *entries) {
    lay_out_entry(w, *entries, e);
    if (e.kind == Kind::kProtected) out.protected_paths.push_back(w.text(e.view));
    if (e.kind == Kind::kProcCover) continue;  // no summary line per covered /proc file
    std::string options = options_of(e.attr);
    if (e.kind == Kind::kPin) options = "as its tree";
    else if (e.kind == Kind::kProc) options = "rw,nosuid,nodev,noexec";
    else if (e.kind == Kind::kDevTmpfs) options = "ro,nosuid,nodev,noexec";
    else if (e.kind == Kind::kDevPts) options = "rw,nosuid,noexec";
    out.mounts.push_back({e.view, e.what, options});
  }

  std::vector<Symlink> links = spec.symlinks;
  if (spec.dev_pts) links.push_back({"/dev/ptmx", "pts/ptmx"});
  if (spec.proc && (!spec.dev_nodes.empty() || spec.dev_pts)) {
    links.push_back({"/dev/fd", "/proc/self/fd"});
    links.push_back({"/dev/stdin", "/proc/self/fd/0"});
    links.push_back({"/dev/stdout", "/proc/self/fd/1"});
    links.push_back({"/dev/stderr", "/proc/self/fd/2"});
  }
  for (const Symlink& link : links) {
    const Entry* outer = enclosing(*entries, link.view_path);
    w.make_dirs(outer ? outer->view : "/", std::string(parent_of(link.view_path)));
    w.step(Op::kSymlink, link.view_path, 0, link.target);
  }

  // Last: nothing more is created in the view's own /dev or root; the host's
  // root goes; the command starts in its working directory.
  if (!spec.dev_nodes.empty() || spec.dev_pts)
    w.set_attr("/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false);
  w.step(Op::kDetach, kOldRoot);
  w.step(Op::kRemoveDir, kOldRoot);
  w.set_attr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false);
  w.step(Op::kChdir, spec.working_directory.empty() ? "/" : spec.working_directory);
  return out;
}

namespace {

long run_step(const Prepared& p, const Step& s) {
  switch (s.op) {
    case Op::kMount:
      return raw::syscall6(SYS_mount, long(p.at(s.source)), long(p.at(s.target)), long(p.at(s.fstype)), long(s.flags),
                           long(p.at(s.data)));
    case Op::kSetAttr: {
      mount_attr attr{};
      attr.attr_set = s.flags;
      return raw::syscall6(SYS_mount_setattr, AT_FDCWD, long(p.at(s.target)), s.recursive ? AT_RECURSIVE : 0, long(&attr),
                           sizeof attr);
    }
    case Op::kMkdir: return raw::syscall6(SYS_mkdirat, AT_FDCWD, long(p.at(s.target)), long(s.flags));
    case Op::kMakeFile: return raw::syscall6(SYS_mknodat, AT_FDCWD, long(p.at(s.target)), S_IFREG | 0444, 0);
    case Op::kSymlink: return raw::syscall6(SYS_symlinkat, long(p.at(s.source)), AT_FDCWD, long(p.at(s.target)));
    case Op::kPivotRoot: return raw::syscall6(SYS_pivot_root, long(p.at(s.target)), long(p.at(s.source)));
    case Op::kChdir: return raw::syscall6(SYS_chdir, long(p.at(s.target)));
    case Op::kDetach: return raw::syscall6(SYS_umount2, long(p.at(s.target)), MNT_DETACH);
    case Op::kRemoveDir: return raw::syscall6(SYS_unlinkat, AT_FDCWD, long(p.at(s.target)), AT_REMOVEDIR);
  }
  return -EINVAL;
}

}  // namespace

Failure build(const Prepared& prepared) {
  const uint32_t count = uint32_t(prepared.steps.size());
  for (uint32_t i = 0; i < count; ++i) {
    const Step& step = prepared.steps[i];
    const long result = run_step(prepared, step);
    if (result < 0 && !(result == -ENOENT && step.skip_if_missing)) return {int(-result), i};
  }
  return {};
}

ProtectionCheck check_protected(const Prepared& prepared) {
  for (const uint32_t path : prepared.protected_paths) {
    const long answer = raw::syscall6(SYS_faccessat, AT_FDCWD, long(prepared.at(path)), W_OK);
    if (answer != -EROFS) return {false, path, int(-answer)};
  }
  return {};
}

std::string describe(const Prepared& p, uint32_t index) {
  if (index >= p.steps.size()) return "?";
  const Step& s = p.steps[index];
  const std::string target = p.at(s.target);
  const auto source = [&] { return std::string(p.at(s.source)); };
  switch (s.op) {
    case Op::kMount:
      if (s.flags & MS_PRIVATE) return "make every mount private (MS_REC|MS_PRIVATE on /)";
      if (s.flags & MS_BIND) return "bind " + source() + " on " + target;
      return "mount " + std::string(p.at(s.fstype)) + " on " + target + (s.data == Prepared::kNone ? "" : " (" + std::string(p.at(s.data)) + ")");
    case Op::kSetAttr: return "mount_setattr " + target + " " + options_of(s.flags) + (s.recursive ? " (recursive)" : "");
    case Op::kMkdir: return "mkdir " + target;
    case Op::kMakeFile: return "create the mount point file " + target;
    case Op::kSymlink: return "symlink " + target + " -> " + source();
    case Op::kPivotRoot: return "pivot_root to " + target + ", the host's root at " + source();
    case Op::kChdir: return "chdir " + target;
    case Op::kDetach: return "detach the host's root (umount2 " + target + ", MNT_DETACH)";
    case Op::kRemoveDir: return "rmdir " + target;
  }
  return "?";
}

}  // namespace aasm::mount_view
