// Same policy, same compiler: the same plan bytes (docs/plan-format.md,
// "Determinism"). Plans are checked into git, so any drift would show up as a
// spurious diff or a digest change.
#include "harness.h"
#include "sandbox.h"

using namespace aasm::ktest;

TEST_CASE("determinism: two compiles of the same policy are byte-identical") {
  Sandbox s;
  const std::string first = read_file(compile(s.dir, s.base()));
  CHECK_FALSE(first.empty());

  // The same source again, once from another working directory: neither the
  // run nor the working directory may leak into the plan.
  for (const std::string& cwd : {s.dir.path(), std::string("/")}) {
    CAPTURE(cwd);
    const std::string again = s.dir / "again.bin";
    const Run compiled = run({binary("AASMC"), "compile", s.dir / "plan.yaml", "-o", again}, cwd);
    INFO("aasmc stderr: ", compiled.err);
    REQUIRE(compiled.exit_code == 0);
    CHECK(read_file(again) == first);
  }

  // Control: a different policy, from a file of the same name, gives
  // different bytes, so the comparison can fail.
  TempDir elsewhere;
  Policy other = s.base();
  other.read.push_back(s.secret);
  CHECK(read_file(compile(elsewhere, other)) != first);
}
