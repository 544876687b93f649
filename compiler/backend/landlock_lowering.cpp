#include "backend/landlock_lowering.h"

#include <map>

#include "kernel/landlock_uapi.h"

namespace aasmc {

namespace fs = aasm::landlock::fs;
namespace net = aasm::landlock::net;
namespace scope = aasm::landlock::scope;
using aasm::plan::LandlockRule;

uint64_t landlock_rights_for_read() { return fs::kReadFile | fs::kReadDir; }

// Everything that changes the tree or a file's contents. REFER is included so
// that cross-directory rename/link is allowed only inside writable trees;
// IOCTL_DEV because device ioctls act on the device.
uint64_t landlock_rights_for_write() {
  return fs::kWriteFile | fs::kRemoveDir | fs::kRemoveFile | fs::kMakeChar | fs::kMakeDir | fs::kMakeReg |
         fs::kMakeSock | fs::kMakeFifo | fs::kMakeBlock | fs::kMakeSym | fs::kRefer | fs::kTruncate | fs::kIoctlDev;
}

uint64_t landlock_rights_for_execute() { return fs::kExecute; }

aasm::plan::PathBase plan_base(PathBase base) {
  switch (base) {
    case PathBase::kAbsolute: return aasm::plan::PathBase::kAbsolute;
    case PathBase::kCwd: return aasm::plan::PathBase::kCwd;
    case PathBase::kHome: return aasm::plan::PathBase::kHome;
  }
  return aasm::plan::PathBase::kAbsolute;
}

namespace {

using aasm::plan::ControlDomain;

using aasm::plan::LandlockControl;

class RulesetBuilder {
 public:
  explicit RulesetBuilder(const PolicyIR& ir) : ir_(ir) {}

  std::optional<aasm::plan::LandlockRuleset> build() {
    verb(ControlDomain::kFileRead, Domain::kFileRead, ir_.filesystem.read, landlock_rights_for_read());
    verb(ControlDomain::kFileWrite, Domain::kFileWrite, ir_.filesystem.write, landlock_rights_for_write());
    verb(ControlDomain::kFileExecute, Domain::kFileExecute, ir_.filesystem.execute, landlock_rights_for_execute());
    network(ControlDomain::kNetworkOutbound, Domain::kNetworkOutbound, ir_.network.outbound, net::kConnectTcp);
    network(ControlDomain::kNetworkBind, Domain::kNetworkBind, ir_.network.bind, net::kBindTcp);
    ipc();
    if (ruleset_.controls.empty()) return std::nullopt;
    for (auto& [path, rule] : rules_) {
      if (rule.base != aasm::plan::PathBase::kAbsolute && ir_.filesystem.system_root_templates_allowed())
        rule.flags |= aasm::plan::kRuleSystemRootTemplate;
      ruleset_.rules.push_back(std::move(rule));
    }
    for (const auto& [port, access] : ports_) ruleset_.net_rules.push_back({access, port});
    for (const LandlockControl& control : ruleset_.controls)
      ruleset_.min_abi = std::max(ruleset_.min_abi, control.min_abi);
    return ruleset_;
  }

 private:
  void add_control(ControlDomain domain, Domain policy_domain, uint64_t fs, uint64_t net, uint64_t scoped) {
    ruleset_.handled_fs |= fs;
    ruleset_.handled_net |= net;
    ruleset_.scoped |= scoped;
    const uint16_t flags = ir_.degraded_allowed(policy_domain) ? aasm::plan::kControlDegradable : 0;
    ruleset_.controls.push_back({domain, flags, aasm::landlock::abi_floor(fs, net, scoped), fs, net, scoped});
  }

  // One rule per path template; the same path under several verbs gets the
  // union of their rights. std::map keeps the rules sorted (determinism).
  void verb(ControlDomain domain, Domain policy_domain, const std::optional<std::vector<PathGrant>>& grants,
            uint64_t rights) {
    if (!grants) return;
    add_control(domain, policy_domain, rights, 0, 0);
    grant(*grants, rights, false);
  }

  // `all_optional`: a missing path is skipped, whatever the policy says.
  void grant(const std::vector<PathGrant>& grants, uint64_t rights, bool all_optional) {
    for (const PathGrant& g : grants) {
      aasm::plan::LandlockRule& rule = rules_[g.path];
      const bool fresh = rule.access == 0;
      rule.access |= rights;
      rule.base = plan_base(g.path.base);
      rule.path = g.path.rest;
      // Optional only if optional under every verb that names it.
      const uint16_t flag = g.optional || all_optional ? aasm::plan::kRuleOptional : 0;
      rule.flags = fresh ? flag : uint16_t(rule.flags & flag);
    }
  }

  // TCP connect or bind, by port. Host names are the broker's, in the
  // command's own network namespace (egress_lowering.cpp), not Landlock's.
  void network(ControlDomain domain, Domain policy_domain, const std::optional<NetworkRuleIR>& rule, uint64_t right) {
    if (!rule || (!rule->none && !rule->tcp_ports)) return;
    add_control(domain, policy_domain, 0, right, 0);
    if (rule->none) return;
    for (const auto& [port, from] : *rule->tcp_ports) ports_[port] |= right;
  }

  // The scopes, and a unix socket allow-list (RESOLVE_UNIX beneath each
  // path; a socket that is missing at launch cannot be connected to, so its
  // rule is optional). Where the host lacks RESOLVE_UNIX and ipc may degrade,
  // the plan's fallback seccomp rules refuse every pathname socket instead.
  void ipc() {
    uint64_t scoped = 0;
    if (ir_.ipc.abstract_unix_sockets_denied && ir_.ipc.abstract_unix_sockets_denied->value)
      scoped |= scope::kAbstractUnixSocket;
    if (ir_.ipc.signals_denied && ir_.ipc.signals_denied->value) scoped |= scope::kSignal;
    const std::optional<UnixSocketsIR>& sockets = ir_.ipc.unix_sockets;
    const bool allow_list = sockets && !sockets->deny && !sockets->unrestricted();
    const uint64_t fs = allow_list ? fs::kResolveUnix : 0;
    if (!scoped && !fs) return;
    add_control(ControlDomain::kIpc, Domain::kIpc, fs, 0, scoped);
    if (!allow_list) return;
    if (ir_.degraded_allowed(Domain::kIpc)) ruleset_.controls.back().flags |= aasm::plan::kControlSeccompFallback;
    grant(*sockets->allow, fs, true);
  }

  const PolicyIR& ir_;
  aasm::plan::LandlockRuleset ruleset_;
  std::map<PathTemplate, aasm::plan::LandlockRule> rules_;
  std::map<uint16_t, uint64_t> ports_;
};

}  // namespace

std::optional<aasm::plan::LandlockRuleset> lower_landlock(const PolicyIR& ir) { return RulesetBuilder(ir).build(); }

}  // namespace aasmc
