#include "self_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include "kernel/landlock_uapi.h"

namespace aasm {
namespace {

struct CheckInfo {
  SelfCheck check;
  plan::ControlDomain domain;
  const char* attempt;   // what the child must fail to do
  const char* measured;  // the receipt's evidence when it did fail
  const char* failure;   // the refusal when it did not
};

constexpr CheckInfo kChecks[] = {
    {kReadCheck, plan::ControlDomain::kFileRead, "to read the root directory",
     "reading a directory outside the ruleset then failed with EACCES",
     "a directory outside the ruleset was still readable: the kernel accepted the ruleset but does not enforce it"},
    {kWriteCheck, plan::ControlDomain::kFileWrite, "to create a directory in the root directory",
     "creating a directory outside the writable trees then failed with EACCES",
     "creating a directory outside the writable trees was not refused with EACCES"},
    {kConnectCheck, plan::ControlDomain::kNetworkOutbound, "to connect to 127.0.0.1:0 over TCP",
     "a TCP connect to 127.0.0.1:0 then failed with EACCES",
     "a TCP connect to 127.0.0.1:0, a port no policy can grant, was not refused with EACCES"},
    {kBindCheck, plan::ControlDomain::kNetworkBind, "to bind 127.0.0.1:0 over TCP",
     "a TCP bind of 127.0.0.1:0 then failed with EACCES",
     "a TCP bind of 127.0.0.1:0, a port no policy can grant, was not refused with EACCES"},
    {kSignalCheck, plan::ControlDomain::kIpc, "to send signal 0 to the supervisor",
     "signal 0 to the supervisor then failed with EPERM",
     "signal 0 to the supervisor, outside the domain, was not refused with EPERM"},
};

// Why a control has no check at this launch: its receipt basis says so.
const char* unproven(plan::ControlDomain domain) {
  switch (domain) {
    case plan::ControlDomain::kFileRead: return "no directory outside the ruleset to test reading";
    case plan::ControlDomain::kFileWrite:
      return "no directory outside the writable trees that the kernel's own permissions let the launcher write";
    case plan::ControlDomain::kFileExecute: return "nothing is executed before the command itself to test it";
    case plan::ControlDomain::kNetworkOutbound: return "no IPv4 socket to test connecting with";
    case plan::ControlDomain::kNetworkBind: return "no IPv4 socket to test binding with";
    case plan::ControlDomain::kIpc: return "no process outside the domain to signal (none in a new PID namespace)";
  }
  return "no check";
}

const CheckInfo& info(SelfCheck check) {
  for (const CheckInfo& c : kChecks)
    if (c.check == check) return c;
  return kChecks[0];
}

}  // namespace

uint32_t plan_self_checks(const plan::LandlockRuleset& effective, const BoundRuleset& bound, int denied_dir_fd,
                          uint32_t fresh_namespaces) {
  uint32_t checks = 0;
  if (denied_dir_fd >= 0) {
    checks |= kReadCheck;
    // Only where no rule grants it and the kernel's own permissions would
    // let the launcher make the directory: elsewhere EACCES proves nothing.
    if ((effective.handled_fs & landlock::fs::kMakeDir) && !(rights_on(bound, denied_dir_fd) & landlock::fs::kMakeDir) &&
        ::faccessat(denied_dir_fd, ".", W_OK, AT_EACCESS) == 0)
      checks |= kWriteCheck;
  }
  if (effective.handled_net & landlock::net::kConnectTcp) checks |= kConnectCheck;
  if (effective.handled_net & landlock::net::kBindTcp) checks |= kBindCheck;
  // In a new PID namespace the supervisor has no pid to signal.
  if ((effective.scoped & landlock::scope::kSignal) && !(fresh_namespaces & plan::kNamespacePid)) checks |= kSignalCheck;
  return checks;
}

landlock::self_check::Result run_self_check(SelfCheck check, const SelfCheckTarget& target) {
  namespace self_check = landlock::self_check;
  switch (check) {
    case kReadCheck: return self_check::read_directory(target.denied_dir_fd);
    case kWriteCheck: return self_check::make_directory(target.denied_dir_fd);
    case kConnectCheck: return self_check::tcp_connect();
    case kBindCheck: return self_check::tcp_bind();
    case kSignalCheck: return self_check::signal_process(target.supervisor);
  }
  return {};
}

const char* self_check_attempt(SelfCheck check) { return info(check).attempt; }
const char* self_check_failure(SelfCheck check) { return info(check).failure; }

Evidence self_check_basis(const plan::LandlockControl& control, uint32_t passed) {
  Evidence evidence{Basis::kAsserted,
                    std::string("landlock_restrict_self returned 0 with these rights handled; ") + unproven(control.domain)};
  for (const CheckInfo& c : kChecks)
    if (c.domain == control.domain && (passed & c.check))
      evidence = {Basis::kMeasured, std::string("landlock_restrict_self returned 0; ") + c.measured};
  if (control.scoped & landlock::scope::kAbstractUnixSocket)
    evidence.text += "; the abstract unix socket scope is asserted (nothing outside the domain is connected to before exec)";
  return evidence;
}

}  // namespace aasm
