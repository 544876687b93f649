#include "backend/view_lowering.h"

#include <linux/capability.h>

#include <algorithm>

#include "base/path_tree.h"
#include "backend/landlock_lowering.h"
#include "kernel/capabilities.h"
#include "kernel/mount_view.h"
#include "tables/syscall_groups.h"

namespace aasmc {

namespace {

namespace plan = aasm::plan;

// What a granted absolute path becomes in the view: a bound host tree, or
// one of the view's own filesystems (docs/filesystem-view.md).
enum class Kind { kTree, kProc, kDevNode, kDevPts, kTmpfs, kNotOffered };


std::optional<size_t> dev_node_index(const std::string& path) {
  for (size_t i = 0; i < std::size(aasm::mount_view::kDevNodes); ++i)
    if (path == "/dev/" + std::string(aasm::mount_view::kDevNodes[i])) return i;
  return std::nullopt;
}

Kind kind_of(const PathTemplate& path) {
  if (path.base != PathBase::kAbsolute) return Kind::kTree;
  const std::string& p = path.rest;
  if (aasm::at_or_beneath(p, "/proc")) return Kind::kProc;
  if (aasm::at_or_beneath(p, "/tmp") || aasm::at_or_beneath(p, "/dev/shm")) return Kind::kTmpfs;
  if (aasm::at_or_beneath(p, "/dev/pts")) return Kind::kDevPts;
  if (dev_node_index(p)) return Kind::kDevNode;
  if (p == "/" || aasm::at_or_beneath(p, "/dev")) return Kind::kNotOffered;
  return Kind::kTree;
}

std::vector<PathGrant> every_grant(const FilesystemIR& fs) {
  std::vector<PathGrant> all;
  for (const auto* verb : {&fs.read, &fs.write, &fs.execute})
    if (*verb) all.insert(all.end(), (*verb)->begin(), (*verb)->end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

bool granted(const std::optional<std::vector<PathGrant>>& verb, const PathTemplate& path) {
  return verb && std::any_of(verb->begin(), verb->end(), [&](const PathGrant& g) { return contains(g.path, path); });
}

// A protected path the policy writes to at all: inside a writable tree, or
// beside one whose variable differs (only the launch can tell).
bool maybe_writable(const FilesystemIR& fs, const PathTemplate& path) {
  return fs.write && std::any_of(fs.write->begin(), fs.write->end(), [&](const PathGrant& g) {
           return contains(g.path, path) || g.path.base != path.base;
         });
}

// A filter that refuses every call of @mount: the view's protections are
// mounts, which a process holding CAP_SYS_ADMIN over them could undo.
bool refuses_mount_calls(const PolicyIR& ir) {
  if (!ir.syscalls) return false;
  const SyscallIR& s = *ir.syscalls;
  const Action::Kind fallback = s.default_action.value.kind;
  const SyscallGroup* group = find_group("mount");
  return group && std::all_of(group->members.begin(), group->members.end(), [&](const GroupMember& m) {
           const std::string name = m.syscall.str();
           if (s.mode == SyscallIR::Mode::kDenylist) return s.denied.count(name) > 0;
           return !s.allowed.count(name) && !s.conditionally_allowed.count(name) && fallback != Action::Kind::kLog &&
                  fallback != Action::Kind::kAllow;
         });
}

class ViewChecks {
 public:
  ViewChecks(const PolicyIR& ir, Diagnostics& diags) : ir_(ir), diags_(diags) {}

  bool run() {
    const FilesystemIR& fs = ir_.filesystem;
    if (!ir_.isolation.view()) {
      for (const PathGrant& g : fs.readonly)
        refuse(g.from, "filesystem.readonly needs isolation.filesystem_view: true; Landlock cannot take a right away "
                       "beneath a tree it grants, so only the view's read-only binds keep " + g.path.text() + " read-only");
      return ok_;
    }
    const SourceRef& view = ir_.isolation.filesystem_view->from;
    if (!fs.read)
      refuse(view, "the filesystem view binds in the trees filesystem.read grants, and no document constrains "
                   "filesystem.read; list the trees the command may see");
    if (ir_.isolation.linux_capabilities)
      for (const auto& [name, from] : *ir_.isolation.linux_capabilities)
        if (aasm::capabilities::number(name) == CAP_SYS_ADMIN)
          refuse(from, "isolation.linux_capabilities keeps " + name + ", with which the command could unmount or "
                       "remount the view's protections; keep it, or the view, not both");
    if (!refuses_mount_calls(ir_))
      refuse(view, "the filesystem view needs the @mount calls refused (syscalls.deny: [\"@mount\"], or an allowlist "
                   "without them): its protections are mounts");
    for (const PathGrant& g : every_grant(fs)) check_grant(g);
    for (const PathGrant& g : fs.readonly) check_protected(g);
    return ok_;
  }

 private:
  void refuse(const SourceRef& at, const std::string& message) {
    ok_ = false;
    if (at.loc.isValid()) diags_.error(at.loc, message, diag::kFilesystemView, at.range);
    else diags_.global_error(message, diag::kFilesystemView);
  }

  void check_grant(const PathGrant& g) {
    const Kind kind = kind_of(g.path);
    if (kind == Kind::kNotOffered)
      refuse(g.from, g.path.text() == "/" ? "the filesystem view cannot bind the host's root: it would hide nothing"
                                          : "the filesystem view offers no " + g.path.text() +
                                                ": its /dev holds null, zero, full, random, urandom, tty, pts and shm only");
    if (kind == Kind::kTmpfs && !ir_.resources.tmp_size)
      refuse(g.from, "the filesystem view makes " + g.path.text() + " part of a private tmpfs, which needs a size "
                     "ceiling: set resources.tmp_size");
  }

  void check_protected(const PathGrant& g) {
    if (kind_of(g.path) != Kind::kTree)
      refuse(g.from, "filesystem.readonly: " + g.path.text() + " is not inside a bound tree (the view's own /proc, "
                     "/dev and /tmp cannot be protected)");
    else if (ir_.filesystem.write &&
             std::any_of(ir_.filesystem.write->begin(), ir_.filesystem.write->end(),
                         [&](const PathGrant& w) { return w.path == g.path; }))
      refuse(g.from, "filesystem.readonly: " + g.path.text() + " is a whole writable tree; take it out of "
                     "filesystem.write instead");
  }

  const PolicyIR& ir_;
  Diagnostics& diags_;
  bool ok_ = true;
};

uint16_t tree_flags(const FilesystemIR& fs, const PathGrant& g) {
  uint16_t flags = 0;
  if (granted(fs.write, g.path)) flags |= plan::kViewWritable;
  if (!granted(fs.execute, g.path)) flags |= plan::kViewNoExec;
  if (g.optional) flags |= plan::kViewOptional;
  return flags;
}

// A tree inside another with the same flags adds no mount. `trees` are the
// trees before it in path order, so the last that contains it is the nearest.
bool redundant(const std::vector<std::pair<PathTemplate, uint16_t>>& trees, const PathGrant& g, uint16_t flags) {
  for (auto it = trees.rbegin(); it != trees.rend(); ++it)
    if (contains(it->first, g.path)) return it->second == flags;
  return false;
}

}  // namespace

bool check_view(const PolicyIR& ir, Diagnostics& diags) { return ViewChecks(ir, diags).run(); }

std::optional<plan::FilesystemView> lower_view(const PolicyIR& ir) {
  if (!ir.isolation.view()) return std::nullopt;
  plan::FilesystemView view = granted_trees(ir);
  if (ir.degraded_allowed(Domain::kFilesystemView)) view.flags |= plan::kViewDegradable;
  if (ir.isolation.namespaces_for_the_view_alone) view.flags |= plan::kViewOwnNamespaces;
  return view;
}

plan::FilesystemView granted_trees(const PolicyIR& ir) {
  const FilesystemIR& fs = ir.filesystem;
  plan::FilesystemView view;
  std::vector<std::pair<PathTemplate, uint16_t>> trees;
  for (const PathGrant& g : every_grant(fs)) {  // in path order: a tree before what it contains
    Kind kind = kind_of(g.path);
    // Without the view (check_view has not refused these): the host's /tmp
    // where no size makes it private, the host's path where the view offers none.
    if (!ir.isolation.view() && ((kind == Kind::kTmpfs && !ir.resources.tmp_size) || kind == Kind::kNotOffered))
      kind = Kind::kTree;
    switch (kind) {
      case Kind::kProc: view.flags |= plan::kViewProc; break;
      case Kind::kDevPts: view.flags |= plan::kViewDevPts; break;
      case Kind::kDevNode: view.dev_nodes |= uint16_t(1u << *dev_node_index(g.path.rest)); break;
      case Kind::kTmpfs: {
        const std::string path = aasm::at_or_beneath(g.path.rest, "/tmp") ? "/tmp" : "/dev/shm";
        const uint16_t flags = granted(fs.execute, {PathBase::kAbsolute, path}) ? 0 : plan::kViewNoExec;
        if (std::none_of(view.tmpfs.begin(), view.tmpfs.end(), [&](const plan::ViewTmpfs& t) { return t.path == path; }))
          view.tmpfs.push_back({path, ir.resources.tmp_size->value, flags});
        break;
      }
      case Kind::kTree: {
        const uint16_t flags = tree_flags(fs, g);
        if (!redundant(trees, g, flags)) view.trees.push_back({plan_base(g.path.base), flags, g.path.rest});
        trees.emplace_back(g.path, flags);
        break;
      }
      case Kind::kNotOffered: break;  // refused by check_view
    }
  }
  for (const PathGrant& g : fs.readonly) {
    if (!maybe_writable(fs, g.path)) continue;  // read-only already, or not in the view
    uint16_t flags = plan::kViewProtected | (tree_flags(fs, g) & plan::kViewNoExec);
    if (g.optional) flags |= plan::kViewOptional;
    view.trees.push_back({plan_base(g.path.base), flags, g.path.rest});
  }
  std::sort(view.trees.begin(), view.trees.end(),
            [](const plan::ViewTree& a, const plan::ViewTree& b) { return std::pair(a.base, a.path) < std::pair(b.base, b.path); });
  std::sort(view.tmpfs.begin(), view.tmpfs.end(),
            [](const plan::ViewTmpfs& a, const plan::ViewTmpfs& b) { return a.path < b.path; });
  return view;
}

}  // namespace aasmc
