// Landlock's audit records as the kernel writes them (Linux 6.15,
// Documentation/admin-guide/LSM/landlock.rst; security/landlock/audit.c,
// security/lsm_audit.c), parsed into the run's denials. This host has
// auditing disabled and the launcher never enables it, so the records are
// checked here as text; the delivery is not exercised end to end.
#include <doctest/doctest.h>

#include <linux/netlink.h>

#include <cerrno>
#include <string>
#include <utility>
#include <vector>

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

namespace {
// One netlink message as audit sends it: the header's length counts the
// text exactly, unaligned.
std::string audit_message(int type, std::string_view text) {
  nlmsghdr header{};
  header.nlmsg_len = uint32_t(NLMSG_HDRLEN + text.size());
  header.nlmsg_type = uint16_t(type);
  std::string out(reinterpret_cast<const char*>(&header), sizeof header);
  out.append(NLMSG_HDRLEN - sizeof header, '\0');
  out.append(text);
  return out;
}
}  // namespace

TEST_CASE("landlock audit: a datagram's messages are read to its end and never past it, the last one unaligned") {
  const std::string first = audit_message(kDomain, "audit(1.1:1): domain=1 status=allocated pid=7");  // 47 bytes: unaligned
  REQUIRE(first.size() % NLMSG_ALIGNTO != 0);
  std::string datagram = first + std::string(NLMSG_ALIGN(first.size()) - first.size(), '\0');
  datagram += audit_message(kAccess, "audit(1.1:2): domain=1 blockers=fs.read_file path=\"/x\"");
  // Beyond the datagram, memory that looks like more messages: the reader
  // must not take it (NLMSG_NEXT over a size_t wrapped around here).
  const std::string memory = datagram + audit_message(kAccess, "audit(1.1:3): domain=1 blockers=fs.write_file path=\"/y\"");
  std::vector<std::pair<int, std::string>> taken;
  landlock_audit::for_each_message(std::string_view(memory.data(), datagram.size()),
                                   [&](int type, std::string_view text) { taken.emplace_back(type, std::string(text)); });
  REQUIRE(taken.size() == 2);
  CHECK(taken[0] == std::pair<int, std::string>{kDomain, "audit(1.1:1): domain=1 status=allocated pid=7"});
  CHECK(taken[1].second.find("path=\"/x\"") != std::string::npos);

  SUBCASE("a header that claims more than the datagram holds ends the reading") {
    std::string lying = audit_message(kAccess, "audit(1.1:4): domain=1");
    lying[0] = char(0x7f);  // nlmsg_len far past the end
    taken.clear();
    landlock_audit::for_each_message(lying, [&](int type, std::string_view text) { taken.emplace_back(type, std::string(text)); });
    CHECK(taken.empty());
  }
}
