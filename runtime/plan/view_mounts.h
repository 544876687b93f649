// The mounts of a filesystem view as the plan states them: templates, not the
// host's paths, so one text serves `aasmc show` (before any launch), and
// aasm-launch's --dry-run and receipt (docs/filesystem-view.md).
#pragma once

#include <string>
#include <vector>

#include "plan/plan.h"

namespace aasm::plan {

struct ViewMountText {
  std::string path;     // "${CWD}/.git/hooks", "/proc"
  std::string what;     // "bind", "bind, protected (...)", "private tmpfs, 67108864 bytes"
  std::string options;  // "ro,nosuid,nodev,noexec"
  bool optional = false;  // skipped where missing at launch
};

// The trees first, in the plan's order (one row per `view.trees` entry, same
// index), then the view's own filesystems: /proc, /dev, /dev/pts, each tmpfs.
std::vector<ViewMountText> describe_view(const FilesystemView& view);

}  // namespace aasm::plan
