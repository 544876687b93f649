#include "backend/bwrap_lowering.h"

#include "base/path_tree.h"
#include "backend/view_lowering.h"
#include "kernel/capabilities.h"
#include "kernel/mount_view.h"

namespace aasmc {
namespace {

namespace plan = aasm::plan;
using plan::BwrapArg;
using plan::BwrapArgKind;

class Args {
 public:
  void literal(std::string text) { args_.push_back({BwrapArgKind::kLiteral, std::move(text)}); }
  // A template path: bwrap's source and destination are the same path.
  void path(plan::PathBase base, const std::string& rest) {
    const BwrapArgKind kind = base == plan::PathBase::kCwd    ? BwrapArgKind::kCwd
                              : base == plan::PathBase::kHome ? BwrapArgKind::kHome
                                                              : BwrapArgKind::kLiteral;
    args_.push_back({kind, rest});
  }
  void bind(const char* option, plan::PathBase base, const std::string& rest) {
    literal(option);
    path(base, rest);
    path(base, rest);
  }
  void marker(BwrapArgKind kind) { args_.push_back({kind, ""}); }
  std::vector<BwrapArg> take() { return std::move(args_); }

 private:
  std::vector<BwrapArg> args_;
};

// The namespaces bwrap makes: a user namespace always (bwrap without setuid
// needs one, and it owns the others), a PID and a cgroup namespace always
// (the tree sees only itself, and /proc shows only it), the others as the
// policy asks; the network namespace too where the policy allows no network
// at all (bwrap's only network control: none, or all). The mount namespace
// is bwrap's own, always.
void add_namespaces(const PolicyIR& ir, uint32_t asked, Args& args) {
  uint32_t fresh = asked | plan::kNamespaceUser | plan::kNamespacePid;
  const auto none = [](const std::optional<NetworkRuleIR>& rule) { return rule && rule->none; };
  if (none(ir.network.outbound) && none(ir.network.bind)) fresh |= plan::kNamespaceNet;
  for (const plan::NamespaceName& n : plan::kNamespaceNames)
    if ((fresh & n.bit) && n.bit != plan::kNamespaceMount) args.literal("--unshare-" + std::string(n.name));
  args.literal("--unshare-cgroup");
}

void add_capabilities(uint64_t kept, Args& args) {
  args.literal("--cap-drop");
  args.literal("ALL");
  for (int number = 0; number < plan::kKnownCapabilities; ++number)
    if (kept & (uint64_t(1) << number))
      if (const char* name = aasm::capabilities::name(number)) {
        args.literal("--cap-add");
        args.literal(name);
      }
}

bool inside(const plan::ViewTree& outer, const plan::ViewTree& inner) {
  if (outer.base != inner.base) return false;
  return outer.path.empty() || aasm::at_or_beneath(inner.path, outer.path);
}

// The nearest bound tree holding `tree` is bound the same way (trees come
// in path order, so the last that holds it is the nearest).
bool redundant_for_bwrap(const std::vector<std::pair<const plan::ViewTree*, bool>>& bound, const plan::ViewTree& tree,
                         bool writable) {
  if (tree.flags & plan::kViewProtected) return false;
  for (auto it = bound.rbegin(); it != bound.rend(); ++it)
    if (inside(*it->first, tree)) return it->second == writable;
  return false;
}

// Each granted tree bound in: read-only unless writable, a protected path
// read-only over its writable tree (after it: trees are in path order),
// an optional one with the -try form; then the view's own filesystems.
void add_trees(const PolicyIR& ir, const plan::FilesystemView& view, Args& args) {
  // A verb no document constrains is the whole host's, as without bwrap.
  if (!ir.filesystem.write) args.bind("--bind", plan::PathBase::kAbsolute, "/");
  else if (!ir.filesystem.read) args.bind("--ro-bind", plan::PathBase::kAbsolute, "/");
  // bwrap's own /dev before the trees, so a granted tree beneath it (/dev/shm) is not hidden.
  if (view.flags & plan::kViewDevPts) {
    args.literal("--dev");  // mount_view::kDevNodes, a new devpts, /dev/shm
    args.literal("/dev");
  }
  std::vector<std::pair<const plan::ViewTree*, bool>> bound;  // the trees bound so far, writable or not
  for (const plan::ViewTree& tree : view.trees) {
    if (!ir.filesystem.write && !(tree.flags & plan::kViewProtected)) continue;  // beneath the writable root already
    const bool optional = tree.flags & plan::kViewOptional;
    const bool writable = (tree.flags & plan::kViewWritable) && !(tree.flags & plan::kViewProtected);
    // A tree inside one bound alike adds nothing here: bwrap has no noexec,
    // so the view's execute-only distinctions fall away (and binding a file
    // again at a path that is a link inside the tree would follow the link).
    if (redundant_for_bwrap(bound, tree, writable)) continue;
    bound.emplace_back(&tree, writable);
    args.bind(writable ? (optional ? "--bind-try" : "--bind") : (optional ? "--ro-bind-try" : "--ro-bind"), tree.base,
              tree.path);
  }
  if (!(view.flags & plan::kViewDevPts))
    for (size_t i = 0; i < std::size(aasm::mount_view::kDevNodes); ++i)
      if (view.dev_nodes & (1u << i))
        args.bind("--dev-bind", plan::PathBase::kAbsolute, "/dev/" + std::string(aasm::mount_view::kDevNodes[i]));
  for (const plan::ViewTmpfs& tmpfs : view.tmpfs) {
    args.literal("--size");
    args.literal(std::to_string(tmpfs.max_bytes));
    args.literal("--tmpfs");
    args.literal(tmpfs.path);
  }
  if (view.flags & plan::kViewProc) {
    args.literal("--proc");
    args.literal("/proc");
  }
}

}  // namespace

plan::Bwrap bwrap_arguments(const PolicyIR& ir, const plan::Plan& plan) {
  Args args;
  const uint32_t asked = plan::namespaces_of(plan);
  add_namespaces(ir, asked, args);
  args.literal("--new-session");
  args.literal("--die-with-parent");
  add_capabilities(plan::kept_capabilities_of(plan), args);
  add_trees(ir, granted_trees(ir), args);
  // The host root's links into the bound trees (/bin -> usr/bin ...), read
  // at launch as the view reads them, then bwrap's own root made read-only.
  args.marker(BwrapArgKind::kRootLinks);
  if (ir.filesystem.write) {  // without it "/" is the host's, bound writable
    args.literal("--remount-ro");
    args.literal("/");
  }
  args.marker(BwrapArgKind::kSeccomp);
  return plan::Bwrap{args.take()};
}

}  // namespace aasmc
