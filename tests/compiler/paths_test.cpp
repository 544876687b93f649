// Path templates and the subtree meet of the cascade merge.
#include <doctest/doctest.h>

#include "frontend/paths.h"
#include "middle/build_ir.h"

namespace aasmc {
namespace {

PathTemplate path(std::string_view text) {
  PathError error;
  auto parsed = parse_path(text, error);
  REQUIRE_MESSAGE(parsed, text, ": ", error.message);
  return *parsed;
}

std::vector<PathGrant> grants(std::initializer_list<std::string_view> texts) {
  std::vector<PathGrant> out;
  for (std::string_view text : texts) out.push_back({path(text), false, {}});
  return out;
}

std::vector<std::string> texts(const std::vector<PathGrant>& grants) {
  std::vector<std::string> out;
  for (const PathGrant& grant : grants) out.push_back(grant.path.text());
  return out;
}

TEST_CASE("paths: variables and normal forms") {
  CHECK(path("/").rest == "/");
  CHECK(path("${CWD}").base == PathBase::kCwd);
  CHECK(path("${CWD}").rest == "");
  CHECK(path("${HOME}/.cache").rest == "/.cache");
  CHECK(path("${HOME}/.cache").text() == "${HOME}/.cache");
}

TEST_CASE("paths: broken paths are refused with the offending offset") {
  struct Case {
    const char* text;
    size_t offset;
    const char* message_part;
  };
  const Case cases[] = {
      {"", 0, "not absolute"},          {"usr", 0, "not absolute"},
      {"/usr/", 4, "trailing"},         {"/usr//lib", 4, "empty segment"},
      {"/usr/./lib", 5, "'.'"},         {"/usr/../etc", 5, "'..'"},
      {"${PWD}/x", 0, "unknown path variable"}, {"${CWD", 0, "unterminated"},
      {"${CWD}x", 6, "followed by '/'"}, {"/a/${HOME}", 3, "only begin"},
  };
  for (const Case& c : cases) {
    PathError error;
    INFO(c.text);
    CHECK_FALSE(parse_path(c.text, error));
    CHECK(error.offset == c.offset);
    CHECK(error.message.find(c.message_part) != std::string::npos);
  }
}

TEST_CASE("merge: path allow-lists meet over subtrees") {
  using V = std::vector<std::string>;
  CHECK(texts(intersect_paths(grants({"/a"}), grants({"/a/b"}))) == V{"/a/b"});
  CHECK(texts(intersect_paths(grants({"/a/b"}), grants({"/a"}))) == V{"/a/b"});
  CHECK(texts(intersect_paths(grants({"/a"}), grants({"/c"}))).empty());
  CHECK(texts(intersect_paths(grants({"/ab"}), grants({"/a"}))).empty());  // a prefix is not a parent
  CHECK(texts(intersect_paths(grants({"/"}), grants({"/usr", "/etc"}))) == V{"/etc", "/usr"});
  CHECK(texts(intersect_paths(grants({"${CWD}"}), grants({"${CWD}/build", "/tmp"}))) == V{"${CWD}/build"});
  // Different variables cannot be related at compile time: disjoint.
  CHECK(texts(intersect_paths(grants({"${HOME}"}), grants({"/home"}))).empty());
  // allow: [] is deny-all and stays so.
  CHECK(intersect_paths(grants({"/usr"}), grants({})).empty());
}

TEST_CASE("merge: the meet is commutative and idempotent") {
  const auto a = grants({"/usr", "/etc/ssl", "${CWD}"});
  const auto b = grants({"/usr/lib", "/etc", "${CWD}/src", "/opt"});
  CHECK(texts(intersect_paths(a, b)) == texts(intersect_paths(b, a)));
  CHECK(texts(intersect_paths(a, a)) == texts(normalize_paths(a)));
}

TEST_CASE("normalize: covered grants are dropped, order is canonical") {
  using V = std::vector<std::string>;
  CHECK(texts(normalize_paths(grants({"/usr/lib", "/usr", "/etc", "/usr"}))) == V{"/etc", "/usr"});
}

}  // namespace
}  // namespace aasmc
