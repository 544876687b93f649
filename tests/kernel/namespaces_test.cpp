// isolation.namespaces: the command runs in fresh user, PID, IPC, UTS,
// network and mount namespaces when the plan asks, and in the host's
// otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

namespace aasm::ktest {
namespace {

const char* const kReport =
    "echo pid=$$; for n in pid ipc uts net mnt; do /usr/bin/readlink /proc/self/ns/$n; done; exit 3";

std::string with_namespaces(const TempDir& dir, const std::string& name, const std::string& isolation,
                            const std::string& also_readable = "/usr") {
  return compile_spec(dir, name,
                      "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"/proc\", \"/dev/null\", \"" + also_readable +
                          "\"]}\n    execute: {allow: [\"/usr\"]}\n" + isolation);
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

// In a new user namespace only the launcher's own uid and gid are mapped
// (to themselves): a file of any other owner shows up as the overflow id,
// every other namespace made with it belongs to it, and the run's cgroup
// still holds the command (it moved itself in through a descriptor the
// supervisor opened).
TEST_CASE("namespaces: a user namespace maps only the launcher's own ids and owns the others") {
  REQUIRE(::geteuid() == 0);
  TempDir dir;
  const std::string foreign = dir / "foreign-owned";
  write_file(foreign, "x");
  REQUIRE(::chown(foreign.c_str(), 4321, 4321) == 0);
  REQUIRE(::chmod(dir.path().c_str(), 0755) == 0);
  const std::string report = "/usr/bin/cat /proc/self/uid_map /proc/self/gid_map; /usr/bin/stat -c 'owner=%u:%g' " +
                             foreign + "; /usr/bin/readlink /proc/self/ns/user; echo pid=$$; "
                             "for n in pid ipc uts net mnt; do /usr/bin/readlink /proc/self/ns/$n; done; "
                             "/usr/bin/grep pids /proc/self/cgroup; exit 3";
  const std::string isolation = "  isolation:\n    namespaces: [user, pid, ipc, uts, net, mount]\n  resources:\n    pids: 64\n";
  const Run r = launch(with_namespaces(dir, "user", isolation, dir.path()), {"/usr/bin/sh", "-c", report});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("         0          0          1\n         0          0          1\n") == 0);  // uid_map, gid_map
  CHECK(r.out.find("owner=65534:65534\n") != std::string::npos);
  CHECK(r.out.find("pid=1\n") != std::string::npos);
  for (const char* kind : {"user", "pid", "ipc", "uts", "net", "mnt"}) {
    CAPTURE(kind);
    CHECK(r.out.find(own_namespace(kind)) == std::string::npos);
  }
  CHECK(r.out.find("/aasm-") != std::string::npos);  // the pids line names the run's cgroup

  SUBCASE("control: without a user namespace every id is the host's") {
    const Run c = launch(with_namespaces(dir, "no-user", "  isolation:\n    namespaces: [pid]\n", dir.path()),
                         {"/usr/bin/sh", "-c", report});
    CHECK(c.exit_code == 3);
    CHECK(c.out.find("         0          0 4294967295\n") == 0);
    CHECK(c.out.find("owner=4321:4321\n") != std::string::npos);
    CHECK(c.out.find(own_namespace("user")) != std::string::npos);
  }
}

}  // namespace
}  // namespace aasm::ktest
