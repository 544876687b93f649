// Landlock's own records of its denials (Landlock ABI 7, Linux 6.15), where
// the host delivers them: the kernel writes an AUDIT_LANDLOCK_ACCESS record
// per denial (and an AUDIT_LANDLOCK_DOMAIN record naming the process that
// made the domain, before its first one) only while host auditing is
// enabled, and a process reads them from the audit netlink multicast group
// (AUDIT_NLGRP_READLOG, CAP_AUDIT_READ). The launcher never enables host
// auditing itself: that is the host administrator's choice (auditctl -e 1),
// and it changes what every process on the host logs.
//
// Where the records cannot come, the reason is one sentence of the run's
// denials_unseen (launch_report.h) with the two ways to see them:
// aasm-launch --explain (supervisor/explain_tracer.h), or host auditing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "supervisor/denials.h"

namespace aasm::landlock_audit {

// The landlock_restrict_self flag that keeps the domain logging after the
// command's exec (the kernel's default logs only until then).
uint32_t restrict_flags();

struct Subscription {
  int fd = -1;              // the audit socket, subscribed; -1 when the records cannot come
  std::string unavailable;  // why not, for the sentence; "" when fd >= 0
};

// Subscribes, without changing anything on the host, where records could
// come (audit in the kernel, readable by this process, Landlock ABI 7).
// Before the command starts: the domain's first record comes with its first
// denial. Whether they will come is auditing_off()'s question.
Subscription subscribe(int landlock_abi);

// Why no record comes even to a subscription (host auditing disabled, or
// the question refused), or nullopt when auditing is on: AUDIT_GET. Asked
// only where a report needs the answer: the kernel sends the reply from a
// kernel thread it creates for it (kthread_run in audit_send_reply), which
// costs a launch from 0.1 ms idle to milliseconds under load.
std::optional<std::string> auditing_off();

// The sentence for denials_unseen, which starts with kUnseenSubject (the
// report's hint to --explain looks for it).
inline constexpr std::string_view kUnseenSubject = "Landlock denials: ";
std::string unseen_sentence(const std::string& unavailable);

// One record's text (after the "audit(...): " prefix or with it), of type
// `type` (AUDIT_LANDLOCK_ACCESS or _DOMAIN).
struct Record {
  uint64_t domain = 0;
  std::optional<pid_t> creator;  // a domain record: the process that restricted itself
  std::optional<denials::Denial> denial;  // an access record: what was refused
};
std::optional<Record> parse(int type, std::string_view text);

// Each netlink message of one datagram `recv` returned: its type and text
// (up to its first NUL). Audit's messages end unaligned, so the last one's
// NLMSG_ALIGN reaches past the datagram; nothing is read beyond it.
void for_each_message(std::string_view datagram, const std::function<void(int type, std::string_view text)>& take);

// Reads the subscription's pending records into `log`: the denials of the
// domains `command` made (the launcher's child restricts itself).
class Reader {
 public:
  Reader(int fd, pid_t command, denials::Log& log) : fd_(fd), command_(command), log_(log) {}
  int fd() const { return fd_; }
  void read_pending();

 private:
  int fd_;
  pid_t command_;
  denials::Log& log_;
  std::set<uint64_t> domains_;  // the run's
};

}  // namespace aasm::landlock_audit
