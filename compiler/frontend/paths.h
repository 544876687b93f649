// Policy paths: absolute, normalized, optionally starting with a launch-time
// variable (${CWD}, ${HOME}) that the launcher resolves.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace aasmc {

// Where a path starts. Paths sort by it first, in this order, and so do a
// plan's Landlock rules (the backend maps it to plan::PathBase).
enum class PathBase { kAbsolute, kCwd, kHome };

struct PathTemplate {
  PathBase base = PathBase::kAbsolute;
  std::string rest;  // absolute path, or the suffix after the variable ("" or "/x")

  std::string text() const;  // as written in a policy
  auto operator<=>(const PathTemplate&) const = default;
};

struct PathError {
  size_t offset;  // byte offset of the fault inside the path text
  std::string message;
};

// Parses and validates one path as written in a policy.
std::optional<PathTemplate> parse_path(std::string_view text, PathError& error);

// True when `ancestor` is `path` or one of its parents (same variable base).
bool contains(const PathTemplate& ancestor, const PathTemplate& path);

}  // namespace aasmc
