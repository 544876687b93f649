// The command starts with no capability at all, even when the launcher runs
// as root: every set empty, the bounding set too, and no way back.
#include <unistd.h>

#include "harness.h"

namespace aasm::ktest {
namespace {

std::string capability_lines(const std::string& status) {
  std::string out;
  size_t at = 0;
  while ((at = status.find("\nCap", at)) != std::string::npos) {
    const size_t end = status.find('\n', at + 1);
    out += status.substr(at + 1, end - at);
    at = end;
  }
  return out;
}

TEST_CASE("capabilities: a command launched by root has every capability set empty") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the kernel suite runs as root");
  TempDir dir;
  const std::string source = dir / "caps.yaml";
  write_file(source,
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: caps, tier: agent}\nspec:\n"
             "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\"]}\n    execute: {allow: [\"/usr\"]}\n");
  REQUIRE(run({binary("AASMC"), "compile", source, "-o", dir / "caps.bin"}).exit_code == 0);
  const Run r = launch(dir / "caps.bin", {"/usr/bin/cat", "/proc/self/status"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string caps = capability_lines(r.out);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    CHECK_MESSAGE(caps.find(std::string(set) + ":\t0000000000000000") != std::string::npos, set, " in\n", caps);

  SUBCASE("control: the same command run directly by root has capabilities") {
    const Run direct = run({"/usr/bin/cat", "/proc/self/status"});
    REQUIRE(direct.exit_code == 0);
    CHECK(capability_lines(direct.out).find("CapEff:\t0000000000000000") == std::string::npos);
  }
}

}  // namespace
}  // namespace aasm::ktest
