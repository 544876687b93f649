// Which Landlock controls a launch can prove before exec, and how: one
// operation per control that the ruleset must refuse after
// landlock_restrict_self (kernel/landlock_self_check.h). The child runs the
// planned checks; a wrong answer refuses the launch; the receipt calls a
// control "measured" only when its own check was refused, and --dry-run
// lists what will be tried.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "kernel/landlock_self_check.h"
#include "plan/controls.h"
#include "plan/plan.h"
#include "supervisor/path_binding.h"

namespace aasm {

// The word the child reports its completed steps in, stored before exec in
// memory the supervisor reads: the receipt's "measured" (launch_report.h).
// A bit per confinement step, and one per self-check the ruleset passed.
enum ChildDone : uint32_t {
  kLandlockRestricted = 1u << 0,
  kSeccompInstalled = 1u << 2,
  kNamespacesReady = 1u << 3,
  kCapabilitiesDropped = 1u << 4,
  kResourceLimitsSet = 1u << 5,
  kConnectListenerHanded = 1u << 10,  // the supervisor answers connect() (connect_answers.h)
  kViewBuilt = 1u << 11,              // the filesystem view built, its protected paths answering EROFS
  kErrnoAnswersListened = 1u << 12,   // the main program's errno answers reach the supervisor (listener_answers.h)
  kBwrapExecuted = 1u << 13,          // the child is about to exec bwrap with the plan's arguments (bwrap_exec.h)
  kBrokerListening = 1u << 14,        // the broker's socket made in the command's network namespace (egress_broker.h)
};
enum SelfCheck : uint32_t {
  kReadCheck = 1u << 1,
  kWriteCheck = 1u << 6,
  kConnectCheck = 1u << 7,
  kBindCheck = 1u << 8,
  kSignalCheck = 1u << 9,
};
inline constexpr uint32_t kAllChildDone = kLandlockRestricted | kSeccompInstalled | kNamespacesReady |
                                          kCapabilitiesDropped | kResourceLimitsSet | kConnectListenerHanded | kViewBuilt |
                                          kBwrapExecuted | kBrokerListening;
inline constexpr uint32_t kAllSelfChecks = kReadCheck | kWriteCheck | kConnectCheck | kBindCheck | kSignalCheck;
static_assert((kAllChildDone & kAllSelfChecks) == 0, "a step and a self-check share a bit of the child's report word");

// The checks that can prove `effective` at this launch: `denied_dir_fd` is
// open_denied_directory's (or -1), `fresh_namespaces` the plan's.
uint32_t plan_self_checks(const plan::LandlockRuleset& effective, const BoundRuleset& bound, int denied_dir_fd,
                          uint32_t fresh_namespaces);

struct SelfCheckTarget {
  int denied_dir_fd = -1;
  pid_t supervisor = -1;
};

// Runs `check` in the child. Async-signal-safe.
landlock::self_check::Result run_self_check(SelfCheck check, const SelfCheckTarget& target);

// Every check, in the order the child runs them.
inline constexpr SelfCheck kSelfChecksInOrder[] = {kReadCheck, kWriteCheck, kConnectCheck, kBindCheck, kSignalCheck};

// "fail to read /": what the check tries, for --dry-run.
const char* self_check_attempt(SelfCheck check);
// Why a launch was refused when the check's operation was not refused.
const char* self_check_failure(SelfCheck check);

// A Landlock control's receipt basis, given the checks that passed.
Evidence self_check_basis(const plan::LandlockControl& control, uint32_t passed);

}  // namespace aasm
