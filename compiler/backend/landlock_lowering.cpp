#include "backend/landlock_lowering.h"

#include <map>

#include "kernel/landlock_uapi.h"

namespace aasmc {

namespace fs = aasm::landlock::fs;
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

uint32_t landlock_abi_floor(uint64_t rights) {
  for (uint32_t abi = 1; abi <= 7; ++abi)
    if ((rights & ~aasm::landlock::fs_rights_for_abi(int(abi))) == 0) return abi;
  return 7;
}

std::optional<aasm::plan::LandlockRuleset> lower_filesystem(const FilesystemIR& ir) {
  if (ir.empty()) return std::nullopt;
  aasm::plan::LandlockRuleset ruleset;
  // One rule per path template; the same path under several verbs gets the
  // union of their rights. std::map keeps the rules sorted (determinism).
  std::map<PathTemplate, LandlockRule> rules;
  auto grant = [&](const std::optional<std::vector<PathGrant>>& verb, uint64_t rights) {
    if (!verb) return;
    ruleset.handled_fs |= rights;
    for (const PathGrant& g : *verb) {
      LandlockRule& rule = rules[g.path];
      rule.access |= rights;
      rule.base = g.path.base;
      rule.path = g.path.rest;
      // Optional only if optional under every verb that names it.
      const uint16_t flag = g.optional ? aasm::plan::kRuleOptional : 0;
      rule.flags = rule.access == rights ? flag : uint16_t(rule.flags & flag);
    }
  };
  grant(ir.read, landlock_rights_for_read());
  grant(ir.write, landlock_rights_for_write());
  grant(ir.execute, landlock_rights_for_execute());
  for (auto& [path, rule] : rules) ruleset.rules.push_back(std::move(rule));
  ruleset.min_abi = landlock_abi_floor(ruleset.handled_fs);
  return ruleset;
}

}  // namespace aasmc
