#include "supervisor/landlock_negotiation.h"

#include <cstdio>
#include <cstring>
#include <utility>

#include "kernel/landlock_rights_text.h"
#include "kernel/landlock_uapi.h"

namespace aasm {
namespace {

// Plans without per-control floors describe the whole ruleset as one
// required control.
std::vector<plan::LandlockControl> controls_of(const plan::LandlockRuleset& ruleset) {
  if (!ruleset.controls.empty()) return ruleset.controls;
  return {{plan::ControlDomain::kFileRead, 0, ruleset.min_abi, ruleset.handled_fs, ruleset.handled_net, ruleset.scoped}};
}

// How much of the control the host's rights give, each of its parts (fs,
// net, scopes) whole, not at all, or in part.
ControlLevel host_level(const plan::LandlockControl& control, uint64_t fs, uint64_t net, uint64_t scopes) {
  LevelOfParts level;
  for (const auto& [wanted, known] : {std::pair{control.fs, fs}, {control.net, net}, {control.scoped, scopes}})
    if (wanted)
      level.add(!(wanted & ~known) ? ControlLevel::kEnforced
                : (wanted & known) ? ControlLevel::kPartial
                                   : ControlLevel::kNotEnforced);
  return level.level();
}

}  // namespace

std::string control_rights_text(const plan::LandlockControl& c) {
  return landlock::landlock_rights_text(c.fs, c.net, c.scoped);
}

const char* kernel_for_landlock_abi(uint32_t abi) {
  static const char* const kReleases[] = {
      "",  // no ABI 0
#define AASM_LANDLOCK_ABI(abi, kernel_release) kernel_release,
#include "kernel/landlock_rights.def"
  };
  static_assert(std::size(kReleases) == landlock::kLatestAbi + 1, "landlock_rights.def lists every ABI, in order");
  return abi < std::size(kReleases) ? kReleases[abi] : "a newer kernel";
}

bool LandlockNegotiation::needs_seccomp_fallback() const {
  for (const ControlOutcome& c : controls)
    if ((c.control.flags & plan::kControlSeccompFallback) && c.level != ControlLevel::kEnforced) return true;
  return false;
}

bool LandlockNegotiation::refused() const {
  for (const ControlOutcome& c : controls)
    if (c.level == ControlLevel::kRefused) return true;
  return false;
}

std::string LandlockNegotiation::refusal() const {
  for (const ControlOutcome& c : controls)
    if (c.level == ControlLevel::kRefused) return std::string(plan::control_domain_name(c.control.domain)) + ": " + c.why;
  return "";
}

LandlockNegotiation negotiate_landlock(const plan::LandlockRuleset& ruleset, const landlock::AbiProbe& probe) {
  const int abi = probe.abi;
  const uint64_t fs = landlock::fs_rights_for_abi(abi), net = landlock::net_rights_for_abi(abi),
                 scopes = landlock::scopes_for_abi(abi);
  const std::string host = abi == 0 ? std::string("this kernel has no Landlock (landlock_create_ruleset: ") +
                                          std::strerror(probe.error) + ")"
                                    : "this kernel has ABI " + std::to_string(abi);
  LandlockNegotiation out;
  for (const plan::LandlockControl& control : controls_of(ruleset)) {
    ControlOutcome outcome{control, ControlLevel::kEnforced, ""};
    if ((control.flags & plan::kControlNotEnforceable) && !control.fs && !control.net && !control.scoped) {
      outcome.level = ControlLevel::kNotEnforced;
      outcome.why = "host names cannot be enforced by the kernel; isolation.degraded permits running without";
      out.controls.push_back(std::move(outcome));
      continue;
    }
    const ControlLevel here = host_level(control, fs, net, scopes);
    if (here != ControlLevel::kEnforced) {
      const std::string need = "needs Landlock ABI " + std::to_string(control.min_abi) + ", " + host + "; Linux " +
                               kernel_for_landlock_abi(control.min_abi) + " or later provides it" +
                               (abi == 0 ? " (with CONFIG_SECURITY_LANDLOCK=y and landlock in the lsm= list)" : "");
      if (control.flags & plan::kControlSeccompFallback) {
        // Stricter, not looser: the fallback refuses what the rights would have allowed.
        outcome.level = ControlLevel::kPartial;
        outcome.why = need + "; isolation.degraded permits running with less: the unix socket allow-list is not "
                             "enforced, every pathname socket is refused instead (seccomp fallback)";
      } else if (control.flags & plan::kControlDegradable) {
        outcome.level = here;
        outcome.why = need + "; isolation.degraded permits running with less";
      } else {
        outcome.level = ControlLevel::kRefused;
        outcome.why = need + " (or list the domain in isolation.degraded to accept less)";
      }
    }
    if ((control.flags & plan::kControlNotEnforceable) && outcome.level == ControlLevel::kEnforced) {
      outcome.level = ControlLevel::kPartial;
      outcome.why = "its ports are enforced, its host names cannot be (isolation.degraded permits this)";
    }
    out.controls.push_back(std::move(outcome));
  }
  plan::LandlockRuleset& e = out.effective;
  e = ruleset;
  e.handled_fs &= fs;
  e.handled_net &= net;
  e.scoped &= scopes;
  e.rules.clear();
  for (plan::LandlockRule rule : ruleset.rules)
    if ((rule.access &= e.handled_fs) != 0) e.rules.push_back(rule);
  e.net_rules.clear();
  for (plan::LandlockNetRule rule : ruleset.net_rules)
    if ((rule.access &= e.handled_net) != 0) e.net_rules.push_back(rule);
  out.applies = abi > 0 && (e.handled_fs || e.handled_net || e.scoped);
  return out;
}

}  // namespace aasm
