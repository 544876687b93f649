#include "frontend/paths.h"

#include "plan/format.h"  // kMaxPathBytes: what a plan can carry

namespace aasmc {

std::string PathTemplate::text() const {
  switch (base) {
    case PathBase::kAbsolute: return rest;
    case PathBase::kCwd: return "${CWD}" + rest;
    case PathBase::kHome: return "${HOME}" + rest;
  }
  return rest;
}

std::optional<PathTemplate> parse_path(std::string_view text, PathError& error) {
  auto fail = [&](size_t offset, std::string message) -> std::optional<PathTemplate> {
    error = {offset, std::move(message)};
    return std::nullopt;
  };
  PathTemplate path;
  std::string_view rest = text;
  if (text.starts_with("${")) {
    const size_t close = text.find('}');
    if (close == std::string_view::npos) return fail(0, "unterminated '${' in path");
    const std::string_view name = text.substr(2, close - 2);
    if (name == "CWD") path.base = PathBase::kCwd;
    else if (name == "HOME") path.base = PathBase::kHome;
    else return fail(0, "unknown path variable '${" + std::string(name) + "}' (only ${CWD} and ${HOME} exist)");
    rest = text.substr(close + 1);
    if (!rest.empty() && rest[0] != '/')
      return fail(close + 1, "a path variable must be followed by '/' or end the path");
  } else if (text.empty() || text[0] != '/') {
    return fail(0, "path '" + std::string(text) + "' is not absolute (start it with '/', ${CWD} or ${HOME})");
  }
  const size_t prefix = text.size() - rest.size();
  if (rest.size() > aasm::plan::kMaxPathBytes) return fail(0, "path is longer than PATH_MAX");
  // A NUL (written as the YAML escape "\0") would cut the path short in the
  // kernel and grant its parent.
  if (const size_t nul = rest.find('\0'); nul != std::string_view::npos)
    return fail(prefix + nul, "NUL byte in path");
  if (const size_t variable = rest.find("${"); variable != std::string_view::npos)
    return fail(prefix + variable, "a path variable may only begin a path");
  // Walk the segments: no empty, '.' or '..' segment, no trailing '/'.
  for (size_t at = 0; at < rest.size();) {
    const size_t next = rest.find('/', at + 1);
    const std::string_view segment = rest.substr(at + 1, (next == std::string_view::npos ? rest.size() : next) - at - 1);
    const bool is_root = path.base == PathBase::kAbsolute && rest == "/";
    if (segment.empty() && !is_root)
      return fail(prefix + at, next == std::string_view::npos ? "trailing '/' in path" : "empty segment ('//') in path");
    if (segment == "." || segment == "..")
      return fail(prefix + at + 1, "'" + std::string(segment) + "' segment in path: write the normalized path");
    if (next == std::string_view::npos) break;
    at = next;
  }
  path.rest = std::string(rest);
  return path;
}

bool contains(const PathTemplate& ancestor, const PathTemplate& path) {
  if (ancestor.base != path.base) return false;
  if (ancestor.rest == path.rest) return true;
  if (ancestor.base == PathBase::kAbsolute && ancestor.rest == "/") return true;
  if (ancestor.rest.empty()) return true;  // ${CWD} contains ${CWD}/x
  return path.rest.size() > ancestor.rest.size() && path.rest.starts_with(ancestor.rest) &&
         path.rest[ancestor.rest.size()] == '/';
}

}  // namespace aasmc
