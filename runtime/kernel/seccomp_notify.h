// Seccomp user notification: a filter that hands one system call to a
// supervisor through a listener descriptor, which the child passes over a
// socket before exec.
//
// The plan's own errno answers go through the same listener (the kernel
// allows one per filter chain): the main program is installed rewritten, its
// errno answers turned into notifications, and the supervisor answers each
// with the errno the program as written returns (supervisor/
// listener_answers.h). That is observation, not enforcement either: the
// answer is still a refusal, and with the supervisor gone the kernel answers
// ENOSYS, never the call.
//
// Never an enforcement mechanism here. A later filter of the command's own
// may answer the same call through its own listener, and
// SECCOMP_USER_NOTIF_FLAG_CONTINUE re-reads memory the command can change
// after the supervisor looked (seccomp_unotify(2)). Only a call the other
// controls already decide goes through a listener; the listener chooses
// the errno a refusal answers, never whether it is refused.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <optional>
#include <span>

#include "kernel/seccomp.h"

namespace aasm::seccomp {

// A filter that sends `syscall_nr` of the native architecture to the
// listener and lets everything else through (the plan's filters still run:
// the kernel takes the strictest answer of all filters).
PreparedFilter notifier_for(uint32_t audit_arch, int syscall_nr);

// `program` (the plan's main program) with every SECCOMP_RET_ERRNO answer
// replaced by SECCOMP_RET_USER_NOTIF, each in its place: every other path,
// and so every constant allow the kernel's action cache serves, is as
// written. With `notify_nr`, that call of the program's architecture goes to
// the listener first (notifier_for's test, prepended: the program's relative
// jumps stay valid). The numbers of `kept_errno` (of the program's
// architecture) keep their errno answers: each errno return becomes a jump
// to a test appended after the program, which answers the errno for those
// numbers and notifies for the others, so only the errno paths change.
// nullopt when the program returns its accumulator (an answer that cannot be
// rewritten in place), would pass the kernel's length limit, or keeps more
// numbers than one test's 8-bit jumps reach.
std::optional<PreparedFilter> with_errno_answers_notified(const plan::SeccompProgram& program,
                                                          std::optional<int> notify_nr,
                                                          std::span<const int32_t> kept_errno = {});

// The rule programs (installed before the main program) answer their own
// errno, and the kernel takes the strictest answer of all filters: an errno
// beats a notification, so the main program notifying alone would never see
// a call a rule refuses. Both go in notifying instead. Where two filters
// notify, the newest one's listener gets the call (seccomp_run_filters() keeps
// the first of equal actions, walking from the newest), and the main
// program, installed last, holds the run's listener; its supervisor answers
// what the programs as written answer (supervisor/listener_answers.h).
//
// `rule` with each errno return a notification, every other path as
// written (its constant allows stay cacheable). Alone, such a filter makes
// the kernel answer ENOSYS: it holds no listener. So it must go in only
// below a main program that notifies the same calls (notifying_main) with
// the listener.
PreparedFilter notifying_rule(const plan::SeccompProgram& rule);

// `main` as with_errno_answers_notified(main, notify_nr) rewrites it, and
// each return one of `ruled` reaches that an errno beats (`ruled`: the
// numbers one of `rules` may answer with an errno: supervisor/
// listener_answers.h rule_errno_numbers) a forward jump to copies of `rules`
// appended after the program, which notify where a rule answers an errno, go
// on where it lets the call through, and end with the return they replaced. Returns no ruled
// number reaches are as written: a call only they answer runs what it ran,
// and stays cached. nullopt when a program returns its accumulator or the
// result would pass the kernel's length limit.
std::optional<PreparedFilter> notifying_main(const plan::SeccompProgram& main, std::optional<int> notify_nr,
                                            std::span<const plan::SeccompProgram* const> rules,
                                            std::span<const int32_t> ruled);

// Installs the filter with a new listener. Returns the listener descriptor
// (close-on-exec) or -errno: EBUSY when a filter of an outer sandbox already
// has a listener. Raw system calls only (the child shares the supervisor's
// memory).
int install_with_listener(PreparedFilter& filter);

// Sends `fd` over the connected unix socket `socket` (SCM_RIGHTS). Raw
// system calls only. Returns 0 or errno.
int send_descriptor(int socket, int fd);

// The descriptor waiting on `socket`, without blocking; -1 when none.
int receive_descriptor(int socket);

// One pending notification of `listener`. False when none is pending or its
// caller has gone (ENOENT).
bool receive_notification(int listener, seccomp_notif& notification);

// True while `id`'s caller still waits: what was read from its memory
// or descriptors belongs to this call, not to a recycled pid.
bool still_waiting(int listener, uint64_t id);

// Lets the call proceed to the kernel, or fails it with `error` (0: the
// call returns 0 without running, as SECCOMP_RET_ERRNO with 0 does).
void answer_continue(int listener, uint64_t id);
void answer_error(int listener, uint64_t id, int error);

}  // namespace aasm::seccomp
