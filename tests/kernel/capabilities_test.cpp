// The command starts with no capability at all, even when the launcher runs
// as root: every set empty, the bounding set too, and no way back.
#include <unistd.h>

#include <fstream>

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

// isolation.linux_capabilities keeps exactly what it names: the capability
// is in every set (ambient, so it survives execve of a program without file
// capabilities) and does its job: binding a privileged port on loopback.
TEST_CASE("capabilities: a kept capability is the only one left, and it works") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the kernel suite runs as root");
  std::ifstream unprivileged_start("/proc/sys/net/ipv4/ip_unprivileged_port_start");
  int first_unprivileged = 0;
  unprivileged_start >> first_unprivileged;
  REQUIRE_MESSAGE(first_unprivileged > 1019, "ports below 1020 need no capability on this host");
  TempDir dir;
  const std::string filesystem = "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"" + probe_dir() +
                                 "\"]}\n    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n";
  const std::string kept = compile_spec(dir, "kept", filesystem + "  isolation:\n    linux_capabilities: [CAP_NET_BIND_SERVICE]\n");
  const Run status = launch(kept, {"/usr/bin/cat", "/proc/self/status"});
  INFO(status.err);
  REQUIRE(status.exit_code == 0);
  const std::string caps = capability_lines(status.out);
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    CHECK_MESSAGE(caps.find(std::string(set) + ":\t0000000000000400") != std::string::npos, set, " in\n", caps);
  CHECK_RUN(probe(kept, {"tcp-bind", "1019"}), 0, "OK\n");

  SUBCASE("control: without it, the same bind is refused") {
    const std::string none = compile_spec(dir, "none", filesystem);
    CHECK_RUN(probe(none, {"tcp-bind", "1019"}), 1, "EACCES\n");
  }

  SUBCASE("a launcher that does not hold it refuses before anything starts") {
    // setpriv (util-linux) takes it out of the bounding set, so even root
    // does not get it at exec.
    const Run refused = run({"/usr/bin/setpriv", "--bounding-set", "-net_bind_service", binary("AASM_LAUNCH"), kept, "--",
                             binary("AASM_PROBE"), "tcp-bind", "1019"});
    CHECK(refused.exit_code == 125);
    CHECK(refused.out.empty());
    CHECK(refused.err.find("isolation.linux_capabilities: the plan keeps CAP_NET_BIND_SERVICE, which aasm-launch does "
                           "not hold") != std::string::npos);
  }
}

}  // namespace
}  // namespace aasm::ktest
