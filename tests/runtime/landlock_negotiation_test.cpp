// Negotiation of a plan's Landlock controls with older ABIs than this host's
// (which speaks 7): the floors, degrading where the plan permits, refusing
// where it does not, and the cut-down ruleset.
#include <doctest/doctest.h>

#include <cerrno>
#include <string>

#include "kernel/landlock_rights_text.h"
#include "kernel/landlock_uapi.h"
#include "supervisor/landlock_negotiation.h"

using namespace aasm;
namespace fs = aasm::landlock::fs;
namespace net = aasm::landlock::net;
namespace scope = aasm::landlock::scope;

namespace {

constexpr uint64_t kRead = fs::kReadFile | fs::kReadDir;
constexpr uint64_t kWrite = fs::kWriteFile | fs::kMakeReg | fs::kRefer | fs::kTruncate | fs::kIoctlDev;

plan::LandlockRuleset ruleset(bool write_may_degrade) {
  plan::LandlockRuleset r;
  r.handled_fs = kRead | kWrite;
  r.handled_net = net::kConnectTcp;
  r.scoped = scope::kSignal;
  r.rules = {{kRead, plan::PathBase::kAbsolute, 0, "/usr"}, {kWrite, plan::PathBase::kAbsolute, 0, "/tmp"}};
  r.net_rules = {{net::kConnectTcp, 443}};
  r.controls = {
      {plan::ControlDomain::kFileRead, 0, 1, kRead, 0, 0},
      {plan::ControlDomain::kFileWrite, uint16_t(write_may_degrade ? plan::kControlDegradable : 0), 5, kWrite, 0, 0},
      {plan::ControlDomain::kNetworkOutbound, plan::kControlDegradable, 4, 0, net::kConnectTcp, 0},
      {plan::ControlDomain::kIpc, plan::kControlDegradable, 6, 0, 0, scope::kSignal},
  };
  r.min_abi = 6;
  return r;
}

ControlLevel level_of(const LandlockNegotiation& n, plan::ControlDomain domain) {
  for (const ControlOutcome& c : n.controls)
    if (c.control.domain == domain) return c.level;
  FAIL("no such control");
  return ControlLevel::kRefused;
}

}  // namespace

TEST_CASE("negotiation: ABI 7 enforces every control as planned") {
  const LandlockNegotiation n = negotiate_landlock(ruleset(false), {7, 0, 0});
  CHECK_FALSE(n.refused());
  for (const ControlOutcome& c : n.controls) CHECK(c.level == ControlLevel::kEnforced);
  CHECK(n.effective.handled_fs == (kRead | kWrite));
  CHECK(n.applies);
}

TEST_CASE("negotiation: ABI 3 refuses a required control it cannot enforce, naming ABI and kernel") {
  const LandlockNegotiation n = negotiate_landlock(ruleset(false), {3, 0, 0});
  REQUIRE(n.refused());
  CHECK(level_of(n, plan::ControlDomain::kFileWrite) == ControlLevel::kRefused);
  const std::string why = n.refusal();
  CHECK(why.find("file_write") == 0);
  CHECK(why.find("needs Landlock ABI 5") != std::string::npos);
  CHECK(why.find("this kernel has ABI 3") != std::string::npos);
  CHECK(why.find("Linux 6.10") != std::string::npos);
}

TEST_CASE("negotiation: ABI 3 with the domains permitted to degrade runs with what the host knows") {
  const LandlockNegotiation n = negotiate_landlock(ruleset(true), {3, 0, 0});
  CHECK_FALSE(n.refused());
  CHECK(level_of(n, plan::ControlDomain::kFileRead) == ControlLevel::kEnforced);
  CHECK(level_of(n, plan::ControlDomain::kFileWrite) == ControlLevel::kPartial);          // no IOCTL_DEV
  CHECK(level_of(n, plan::ControlDomain::kNetworkOutbound) == ControlLevel::kNotEnforced); // no TCP rights
  CHECK(level_of(n, plan::ControlDomain::kIpc) == ControlLevel::kNotEnforced);             // no scopes
  // The ruleset keeps only rights ABI 3 knows; the port rule goes with CONNECT_TCP.
  CHECK(n.effective.handled_fs == ((kRead | kWrite) & ~fs::kIoctlDev));
  CHECK(n.effective.handled_net == 0);
  CHECK(n.effective.scoped == 0);
  CHECK(n.effective.net_rules.empty());
  REQUIRE(n.effective.rules.size() == 2);
  CHECK(n.effective.rules[1].access == (kWrite & ~fs::kIoctlDev));
  CHECK(n.applies);
}

TEST_CASE("negotiation: no Landlock at all refuses a required control and names the kernel configuration") {
  const LandlockNegotiation n = negotiate_landlock(ruleset(true), {0, ENOSYS, 0});
  REQUIRE(n.refused());  // file_read is required
  CHECK(n.refusal().find("no Landlock") != std::string::npos);
  CHECK(n.refusal().find("CONFIG_SECURITY_LANDLOCK") != std::string::npos);
  CHECK_FALSE(n.applies);
}

// The sets and floors derived from kernel/landlock_rights.def, against the
// kernel's documentation of each ABI (Documentation/userspace-api/landlock.rst).
TEST_CASE("landlock rights: every set per ABI and every floor comes from the one table") {
  using landlock::abi_floor;
  CHECK(landlock::fs_rights_for_abi(0) == 0);
  CHECK(landlock::fs_rights_for_abi(1) == 0x1fff);  // EXECUTE .. MAKE_SYM
  CHECK(landlock::fs_rights_for_abi(2) == 0x3fff);  // + REFER
  CHECK(landlock::fs_rights_for_abi(3) == 0x7fff);  // + TRUNCATE
  CHECK(landlock::fs_rights_for_abi(4) == 0x7fff);
  CHECK(landlock::fs_rights_for_abi(5) == 0xffff);  // + IOCTL_DEV
  CHECK(landlock::fs_rights_for_abi(8) == 0xffff);
  CHECK(landlock::fs_rights_for_abi(9) == 0x1ffff);  // + RESOLVE_UNIX
  CHECK(landlock::net_rights_for_abi(3) == 0);
  CHECK(landlock::net_rights_for_abi(4) == (net::kBindTcp | net::kConnectTcp));
  CHECK(landlock::scopes_for_abi(5) == 0);
  CHECK(landlock::scopes_for_abi(6) == (scope::kAbstractUnixSocket | scope::kSignal));
  CHECK(landlock::kLatestAbi == 9);
  CHECK(abi_floor(0, 0, 0) == 1);
  CHECK(abi_floor(kRead, 0, 0) == 1);
  CHECK(abi_floor(kWrite, 0, 0) == 5);
  CHECK(abi_floor(0, net::kConnectTcp, 0) == 4);
  CHECK(abi_floor(0, 0, scope::kSignal) == 6);
  CHECK(abi_floor(fs::kResolveUnix, 0, 0) == 9);
  CHECK(abi_floor(uint64_t(1) << 40, 0, 0) == landlock::kLatestAbi);  // a right no ABI here describes
  CHECK(std::string(landlock::right_name(landlock::RightKind::kNet, net::kConnectTcp)) == "connect_tcp");
  CHECK(landlock::right_name(landlock::RightKind::kScope, uint64_t(1) << 5) == nullptr);
  CHECK(std::string(kernel_for_landlock_abi(6)) == "6.12");
  CHECK(std::string(kernel_for_landlock_abi(landlock::kLatestAbi + 1)) == "a newer kernel");
}

// Rights by name in every report (show, explain, --dry-run, doctor, receipts):
// the table's names, lowest bit first, an undescribed bit by its number.
TEST_CASE("landlock rights text: names from the one table, never a mask") {
  using landlock::RightKind;
  CHECK(landlock::rights_list_text(kRead) == "read_file,read_dir");
  CHECK(landlock::rights_list_text(0) == "none");
  CHECK(landlock::rights_list_text(net::kConnectTcp | net::kBindTcp, RightKind::kNet) == "bind_tcp,connect_tcp");
  CHECK(landlock::rights_list_text(fs::kExecute | (uint64_t(1) << 40)) == "execute,bit40");
  CHECK(landlock::rights_names(scope::kSignal, RightKind::kScope) == std::vector<std::string>{"signal"});
  CHECK(landlock::landlock_rights_text(kRead, 0, scope::kSignal) == "fs read_file,read_dir; net none; scopes signal");
  const plan::LandlockControl control{plan::ControlDomain::kFileRead, 0, 1, kRead, 0, 0};
  CHECK(control_rights_text(control) == "fs read_file,read_dir; net none; scopes none");
}
