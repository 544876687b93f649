// Same policy, same compiler: the same plan bytes (docs/plan-format.md,
// "Determinism"). Plans are checked into git, so any drift would show up as a
// spurious diff or a digest change.
#include <sys/stat.h>
#include <sys/sysmacros.h>

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

// A plan is written beside its path and renamed over it; rename(2) over a
// device would replace the node: `aasmc compile -o /dev/null` once turned the
// host's /dev/null into a regular file. Here on a device node of the test's own.
TEST_CASE("aasmc -o: a character device is written in place, a FIFO or directory refused, a file replaced") {
  Sandbox s;
  const std::string policy = s.dir / "plan.yaml";
  compile(s.dir, s.base());  // writes plan.yaml
  const std::string device = s.dir / "null";
  REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  const Run to_device = run({binary("AASMC"), "compile", policy, "-o", device});
  CHECK(to_device.exit_code == 0);
  struct stat st {};
  REQUIRE(::lstat(device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  const std::string fifo = s.dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const Run to_fifo = run({binary("AASMC"), "compile", policy, "-o", fifo});
  CHECK(to_fifo.exit_code == 1);
  CHECK(to_fifo.err.find("not a regular file") != std::string::npos);
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));

  // The control: a regular file is replaced by the plan.
  const std::string file = s.dir / "old.bin";
  write_file(file, "old");
  CHECK(run({binary("AASMC"), "compile", policy, "-o", file}).exit_code == 0);
  CHECK(read_file(file).substr(0, 4) != "old");
}
