// What the supervisor answers through the run's one seccomp listener
// (kernel/seccomp_notify.h): the plan's errno answers, which the listener's
// filter (the main program, rewritten) hands over instead of answering
// itself, those of the rule programs before it too (each goes in notifying,
// and the main program notifies the same calls), and the connect() calls
// ConnectAnswers words.
//
// For each call the supervisor runs the installed programs as written on
// the call's seccomp_data (kernel/bpf_interpreter.h) and answers what the
// kernel would have answered without the listener (bpf::run_stack: the
// strictest action, among equal ones the newest filter's): an errno answer
// with that errno, recorded in the run's denials; an allowed connect()
// through ConnectAnswers. Never SECCOMP_USER_NOTIF_FLAG_CONTINUE for a call
// the programs refuse: a filter sees only registers, which the kernel copied
// into the notification, so the programs' answer on them is the answer they
// would have given. A call the supervisor cannot place gets ENOSYS, the
// kernel's own answer when no supervisor is there.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "supervisor/denials.h"

namespace aasm {

class ConnectAnswers;

class ListenerAnswers {
 public:
  // `observed`: the programs installed, as written, in install order (the
  // main program last), when the listener's filter is the main program's
  // rewrite (empty: only connect() comes); `connect`: the connect() answers
  // (nullptr: none). Both outlive this.
  ListenerAnswers(std::span<const plan::SeccompProgram> observed, ConnectAnswers* connect)
      : observed_(observed), connect_(connect) {}

  // Answers the pending notification of `listener`, if any, recording a
  // refusal in `log` (nullptr: not recorded).
  void answer_one(int listener, denials::Log* log);

 private:
  std::span<const plan::SeccompProgram> observed_;
  ConnectAnswers* connect_;
};

// The errno a SECCOMP_RET_ERRNO answer `action` gives (the kernel caps
// it at MAX_ERRNO; 0: the call returns 0 without running), nullopt for any
// other answer.
std::optional<int> errno_of(uint32_t action);

// The numbers (below 1024: the x32 range and beyond the programs' header
// kills) one of `rules`, the programs installed before the main one, may
// answer with an errno, whatever the arguments. The launcher sends them to
// the listener too (seccomp::notifying_main). Sorted.
std::vector<int32_t> rule_errno_numbers(const std::vector<const plan::SeccompProgram*>& rules);

// Those of them `main` may answer with an errno too. Among equal actions the
// kernel lets the main program's win (the newest filter's), but a rule's
// errno beats a notification: where the rules cannot go in notifying
// (seccomp::notifying_rule), main keeps its errno answers for these numbers
// and the listener never sees them (the launch report says so). Sorted.
std::vector<int32_t> shared_errno_numbers(const plan::SeccompProgram& main,
                                          const std::vector<const plan::SeccompProgram*>& rules);

// Why `main` cannot go in rewritten at all, or "" when it can: with
// `connect`, connect() goes to the listener before the program runs, so the
// program may not kill or trap it.
std::string rewrite_conflict(const plan::SeccompProgram& main, bool connect);

}  // namespace aasm
