#include "plan/view_mounts.h"

#include "kernel/mount_view.h"
#include "supervisor/path_binding.h"

namespace aasm::plan {
namespace {

std::string tree_options(uint16_t flags) {
  return std::string(flags & kViewWritable ? "rw" : "ro") + ",nosuid,nodev" + (flags & kViewNoExec ? ",noexec" : "");
}

}  // namespace

std::vector<ViewMountText> describe_view(const FilesystemView& view) {
  std::vector<ViewMountText> rows;
  for (const ViewTree& tree : view.trees)
    rows.push_back({rule_template(LandlockRule{0, tree.base, 0, tree.path}),
                    tree.flags & kViewProtected ? "bind, protected (read-only over its writable tree)" : "bind",
                    tree_options(tree.flags), (tree.flags & kViewOptional) != 0});
  if (view.flags & kViewProc) rows.push_back({"/proc", "proc of the command's PID namespace", "nosuid,nodev,noexec"});
  std::string nodes;
  for (size_t i = 0; i < std::size(mount_view::kDevNodes); ++i)
    if (view.dev_nodes & (1u << i)) nodes += (nodes.empty() ? "" : ", ") + std::string(mount_view::kDevNodes[i]);
  rows.push_back({"/dev", "tmpfs holding " + (nodes.empty() ? std::string("no node") : nodes), "ro,nosuid,noexec"});
  if (view.flags & kViewDevPts) rows.push_back({"/dev/pts", "a new devpts instance", "nosuid,noexec"});
  for (const ViewTmpfs& tmpfs : view.tmpfs)
    rows.push_back({tmpfs.path, "private tmpfs, " + std::to_string(tmpfs.max_bytes) + " bytes",
                    std::string("rw,nosuid,nodev") + (tmpfs.flags & kViewNoExec ? ",noexec" : "")});
  return rows;
}

}  // namespace aasm::plan
