// What the supervisor answers through the run's one seccomp listener
// (kernel/seccomp_notify.h): the plan's errno answers, which the listener's
// filter (the main program, rewritten) hands over instead of answering
// itself, and the connect() calls ConnectAnswers words.
//
// For each call the supervisor runs the main program as written on the
// call's seccomp_data (kernel/bpf_interpreter.h) and answers what it
// answers: an errno answer with that errno, recorded in the run's denials;
// an allowed connect() through ConnectAnswers. Never
// SECCOMP_USER_NOTIF_FLAG_CONTINUE for a call the program refuses: a
// filter sees only registers, which the kernel copied into the notification,
// so the program's answer on them is the answer it would have given. A call
// the supervisor cannot place gets ENOSYS, the kernel's own answer when no
// supervisor is there.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "supervisor/denials.h"

namespace aasm {

class ConnectAnswers;

class ListenerAnswers {
 public:
  // `observed`: the main program as written, when the listener's filter is
  // its rewrite (nullptr: only connect() comes); `connect`: the connect()
  // answers (nullptr: none). Both outlive this.
  ListenerAnswers(const plan::SeccompProgram* observed, ConnectAnswers* connect)
      : observed_(observed), connect_(connect) {}

  // Answers the pending notification of `listener`, if any, recording a
  // refusal in `log` (nullptr: not recorded).
  void answer_one(int listener, denials::Log* log);

 private:
  const plan::SeccompProgram* observed_;
  ConnectAnswers* connect_;
};

// The numbers `main` (the main program) must keep answering with its own
// errno when it goes in rewritten (kernel/seccomp_notify.h) after `rules`
// (the programs installed before it): those both it and a rule may answer
// with an errno. Among equal actions the kernel lets the main program's win
// (the newest filter's), but a rule's errno beats a notification, so
// notifying them would change the answer. Sorted; the listener never sees
// them (the launch report says so).
std::vector<int32_t> shared_errno_numbers(const plan::SeccompProgram& main,
                                          const std::vector<const plan::SeccompProgram*>& rules);

// Why `main` cannot go in rewritten at all, or "" when it can: with
// `connect`, connect() goes to the listener before the program runs, so the
// program may not kill or trap it.
std::string rewrite_conflict(const plan::SeccompProgram& main, bool connect);

}  // namespace aasm
