#include "base/path_tree.h"

#include <doctest/doctest.h>

namespace aasm {
namespace {

// The one definition the compiler's view lowering, the launcher's rule
// binding, the denial report and the view's builder share: component-wise,
// "/" holding every absolute path.
static_assert(at_or_beneath("/a/b", "/a"));
static_assert(at_or_beneath("/a", "/a"));
static_assert(!at_or_beneath("/ab", "/a"));
static_assert(!at_or_beneath("/a", "/a/b"));
static_assert(at_or_beneath("/", "/"));
static_assert(at_or_beneath("/x/y", "/"));
static_assert(!at_or_beneath("x", "/"));
static_assert(strictly_beneath("/a/b", "/a"));
static_assert(!strictly_beneath("/a", "/a"));
static_assert(strictly_beneath("/x", "/"));
static_assert(!strictly_beneath("/", "/"));
static_assert(!strictly_beneath("/tmp-x", "/tmp"));

TEST_CASE("path trees: a path lies in a tree component-wise, and / holds every absolute path") {
  const struct {
    const char* path;
    const char* tree;
    bool at_or_beneath, strictly_beneath;
  } cases[] = {
      {"/proc/self/fd", "/proc", true, true}, {"/proc", "/proc", true, false}, {"/procfs", "/proc", false, false},
      {"/dev/shm", "/dev", true, true},       {"/", "/", true, false},        {"/home/u", "/", true, true},
      {"/a", "/a/b", false, false},           {"", "/", false, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.path);
    CAPTURE(c.tree);
    CHECK(at_or_beneath(c.path, c.tree) == c.at_or_beneath);
    CHECK(strictly_beneath(c.path, c.tree) == c.strictly_beneath);
  }
}

TEST_CASE("path trees: the parent of a path, and / as its own") {
  CHECK(parent_of("/ws/.git/commondir") == "/ws/.git");
  CHECK(parent_of("/ws") == "/");
  CHECK(parent_of("/") == "/");
  CHECK(parent_of("relative") == "/");
}

}  // namespace
}  // namespace aasm
