// isolation.namespaces: the command runs in fresh PID, IPC, UTS, network and
// mount namespaces when the plan asks, and in the host's otherwise.
#include <unistd.h>

#include "harness.h"

namespace aasm::ktest {
namespace {

const char* const kReport =
    "echo pid=$$; for n in pid ipc uts net mnt; do /usr/bin/readlink /proc/self/ns/$n; done; exit 3";

std::string with_namespaces(const TempDir& dir, const std::string& name, const std::string& isolation) {
  return compile_spec(dir, name,
                      "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"/dev/null\"]}\n"
                      "    execute: {allow: [\"/usr\"]}\n" + isolation);
}

std::string own_namespace(const char* kind) {
  char target[128] = {};
  const ssize_t n = ::readlink((std::string("/proc/self/ns/") + kind).c_str(), target, sizeof target - 1);
  return n > 0 ? std::string(target, size_t(n)) : "";
}

TEST_CASE("namespaces: the command is PID 1 of a fresh PID namespace, in fresh IPC, UTS, net and mount ones") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  const std::string plan =
      with_namespaces(dir, "ns", "  isolation:\n    namespaces: [pid, ipc, uts, net, mount]\n");
  const Run r = launch(plan, {"/usr/bin/sh", "-c", kReport});
  INFO(r.err);
  CHECK(r.exit_code == 3);  // the command's own status, through the namespace's init
  CHECK(r.out.find("pid=1\n") == 0);
  for (const char* kind : {"pid", "ipc", "uts", "net", "mnt"}) {
    CAPTURE(kind);
    CHECK(r.out.find(own_namespace(kind)) == std::string::npos);  // not the host's
  }

  SUBCASE("control: without isolation.namespaces the command shares the host's") {
    const Run c = launch(with_namespaces(dir, "host", ""), {"/usr/bin/sh", "-c", kReport});
    CHECK(c.exit_code == 3);
    CHECK(c.out.find("pid=1\n") == std::string::npos);
    for (const char* kind : {"ipc", "uts", "net", "mnt"}) CHECK(c.out.find(own_namespace(kind)) != std::string::npos);
  }
}

}  // namespace
}  // namespace aasm::ktest
