// Paths as trees: one place that says when a path lies in another. Both are
// absolute and normal (no "." or "..", no doubled or trailing "/"), as the
// plan's paths and the launcher's resolved ones are; "/" holds every
// absolute path, and "/a" does not hold "/ab".
#pragma once

#include <string_view>

namespace aasm {

// Whether `path` is `tree` or lies beneath it.
constexpr bool at_or_beneath(std::string_view path, std::string_view tree) {
  if (tree == "/") return path.starts_with('/');
  return path.starts_with(tree) && (path.size() == tree.size() || path[tree.size()] == '/');
}

// The tree that holds `path` directly: "/" for "/a" and for "/".
constexpr std::string_view parent_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? "/" : path.substr(0, slash);
}

// Whether `path` lies beneath `tree`, not `tree` itself.
constexpr bool strictly_beneath(std::string_view path, std::string_view tree) {
  return path != tree && at_or_beneath(path, tree);
}

}  // namespace aasm
