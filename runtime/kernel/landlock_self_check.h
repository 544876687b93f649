// Proof, after landlock_restrict_self and before exec, that a control is
// enforced: one operation the ruleset must now refuse, tried in the child.
// A receipt calls a control "measured" only when its check ran and got the
// refusal; a check that gets any other answer refuses the launch.
//
// Every check is harmless if the ruleset did not take: the connect and bind
// go to 127.0.0.1 port 0 (never a connection: the kernel refuses port 0
// itself, Landlock first, because no policy can grant port 0), the signal is
// 0 (existence only), and a directory the write check made is removed.
// Raw system calls only: the child shares the supervisor's memory
// (kernel/spawn.h), so no errno.
#pragma once

#include <sys/types.h>

namespace aasm::landlock::self_check {

enum class Outcome { kRefused, kNotPossible, kNotRefused };

struct Result {
  Outcome outcome = Outcome::kNotPossible;
  int error = 0;  // kNotRefused: the errno the kernel gave instead (0: the operation succeeded)
};

// openat(directory, ".") for reading: EACCES.
Result read_directory(int directory_fd);
// mkdirat(directory, NAME): EACCES. NAME carries the pid; removed if made.
Result make_directory(int directory_fd);
// TCP connect to 127.0.0.1:0: EACCES.
Result tcp_connect();
// TCP bind to 127.0.0.1:0: EACCES.
Result tcp_bind();
// kill(process, 0) of a process outside the domain: EPERM.
Result signal_process(pid_t process);

}  // namespace aasm::landlock::self_check
