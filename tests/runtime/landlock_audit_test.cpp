// Landlock's audit records as the kernel writes them (Linux 6.15,
// Documentation/admin-guide/LSM/landlock.rst; security/landlock/audit.c,
// security/lsm_audit.c), parsed into the run's denials. This host has
// auditing disabled and the launcher never enables it, so the records are
// checked here as text; the delivery is not exercised end to end.
#include <doctest/doctest.h>

#include <cerrno>

#include "kernel/landlock_uapi.h"
#include "supervisor/landlock_audit.h"

using namespace aasm;
using landlock_audit::parse;

namespace {
constexpr int kAccess = 1423, kDomain = 1424;
}

TEST_CASE("landlock audit: a domain record names the process that made it; its end names none") {
  const auto made = parse(kDomain,
                          "audit(1729738800.221:31): domain=1a6fdc66f status=allocated mode=enforcing pid=286 uid=0 "
                          "exe=\"/root/sandboxer\" comm=\"sandboxer\"");
  REQUIRE(made);
  CHECK(made->domain == 0x1a6fdc66f);
  CHECK(made->creator == 286);
  CHECK_FALSE(made->denial);
  CHECK_FALSE(parse(kDomain, "audit(1729738800.221:33): domain=1a6fdc66f status=deallocated denials=2"));
}

TEST_CASE("landlock audit: access records become denials with their rights, path or port") {
  const auto fs = parse(kAccess, "audit(1729738800.268:30): domain=1a6fdc66f blockers=fs.make_reg,fs.refer path=\"/usr/local\" dev=\"vda2\" ino=365");
  REQUIRE(fs);
  REQUIRE(fs->denial);
  CHECK(fs->domain == 0x1a6fdc66f);
  CHECK(fs->denial->layer == denials::Layer::kLandlockFs);
  CHECK(fs->denial->witness == denials::Witness::kKernelRecord);
  CHECK(fs->denial->rights == (landlock::fs::kMakeReg | landlock::fs::kRefer));
  CHECK(fs->denial->path == "/usr/local");
  CHECK(fs->denial->error == EACCES);

  // A path with a space is hex-encoded (audit_log_untrustedstring).
  const auto hex = parse(kAccess, "audit(1.2:3): domain=5 blockers=fs.read_file path=2F746D702F6120622F66 dev=\"sda1\" ino=7");
  REQUIRE(hex);
  CHECK(hex->denial->path == "/tmp/a b/f");

  const auto connect = parse(kAccess, "audit(1.2:4): domain=5 blockers=net.connect_tcp daddr=127.0.0.1 dest=8080");
  REQUIRE(connect);
  CHECK(connect->denial->layer == denials::Layer::kLandlockNet);
  CHECK(connect->denial->rights == landlock::net::kConnectTcp);
  CHECK(connect->denial->port == 8080);
  const auto bind = parse(kAccess, "audit(1.2:5): domain=5 blockers=net.bind_tcp saddr=127.0.0.1 src=8081");
  REQUIRE(bind);
  CHECK(bind->denial->rights == landlock::net::kBindTcp);
  CHECK(bind->denial->port == 8081);

  const auto signal = parse(kAccess, "audit(1.2:6): domain=5 blockers=scope.signal opid=1 ocomm=\"systemd\"");
  REQUIRE(signal);
  CHECK(signal->denial->layer == denials::Layer::kLandlockScope);
  CHECK(signal->denial->rights == landlock::scope::kSignal);
  CHECK(signal->denial->arguments == "pid 1");
  CHECK(signal->denial->error == EPERM);
}

TEST_CASE("landlock audit: records of other kinds or rights the ruleset has no name for are not denials") {
  CHECK_FALSE(parse(1300, "audit(1.2:7): arch=c000003e syscall=257 success=no exit=-13"));
  CHECK_FALSE(parse(kAccess, "audit(1.2:8): domain=5 blockers=ptrace opid=1 ocomm=\"init\""));
  CHECK_FALSE(parse(kAccess, "audit(1.2:9): domain=5 blockers=fs.no_such_right path=\"/x\""));
  CHECK_FALSE(parse(kAccess, "audit(1.2:10): blockers=fs.read_file path=\"/x\""));
}

TEST_CASE("landlock audit: the sentence for a host that delivers none names why and both ways to see them") {
  const std::string s = landlock_audit::unseen_sentence("auditing is disabled on this host");
  CHECK(s.find("(auditing is disabled on this host)") != std::string::npos);
  CHECK(s.find("--explain") != std::string::npos);
  CHECK(s.find("auditctl -e 1") != std::string::npos);
}
