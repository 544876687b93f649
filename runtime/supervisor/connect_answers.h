// Answers for TCP connections the plan's Landlock ruleset refuses.
//
// Landlock refuses connect() to a port outside the allow-list with EACCES,
// which tools take for a passing fault: wget retries it twenty times over
// minutes (its retryable_socket_connect_error() gives up at once only on
// ECONNREFUSED, ENETUNREACH, EHOSTUNREACH and the family errors). So when
// the ruleset handles TCP connect, the child hands the supervisor a listener
// for connect() (kernel/seccomp_notify.h), and the supervisor answers a call
// to a port Landlock would refuse with ECONNREFUSED before the kernel sees
// it. Every other call goes on to Landlock, which stays the enforcement:
// a command that races the address after the supervisor read it meets
// Landlock's EACCES, and with the supervisor gone the call fails (ENOSYS).
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "supervisor/denials.h"

namespace aasm {

// The TCP port a connect() or bind() names (arguments 1 and 2: its address
// and length), read from the caller: where the address is inet and the
// socket (argument 0) is a TCP socket of the address's family; else nullopt.
// What is read may have changed by the time the kernel reads it: a report's
// detail or an answer's errno, never a decision.
std::optional<uint16_t> tcp_port_named(const seccomp_notif& call);

class ConnectAnswers {
 public:
  // Only when `effective` (what this host applies) handles TCP connect.
  static std::optional<ConnectAnswers> for_ruleset(const plan::LandlockRuleset& effective);

  // Answers `call`, a connect() the listener handed over
  // (supervisor/listener_answers.h receives it); a refusal is recorded in
  // `denials` (when given) as Landlock's, seen by the listener.
  void answer(int listener, const seccomp_notif& call, denials::Log* denials);

  // One line per refused port with its count, for the run's events.
  std::vector<std::string> summary() const;

  // What the supervisor does, for --dry-run.
  static constexpr const char* kDescription =
      "connect() to a TCP port outside network.outbound is answered ECONNREFUSED by the supervisor "
      "(tools retry Landlock's EACCES); Landlock refuses it beneath";

 private:
  // The port of a call Landlock would refuse, read from the caller.
  std::optional<uint16_t> refused_port(const seccomp_notif& call) const;

  std::vector<uint16_t> allowed_ports_;  // ascending
  std::map<uint16_t, uint64_t> refused_;
};

}  // namespace aasm
