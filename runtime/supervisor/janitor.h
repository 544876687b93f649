// The janitor: a small process the supervisor starts beside the command. It
// waits on a pipe only the supervisor holds; if the supervisor dies without
// saying it is done (kill -9), the pipe's end arrives and the janitor kills
// what the supervisor would have killed. The parent-death signal covers the
// command itself; the janitor covers the rest of its process group.
#pragma once

#include <sys/types.h>

#include "support/result.h"

namespace aasm {

class Janitor {
 public:
  // Watches `process_group` (the command's, after its setsid).
  static Result<Janitor> start(pid_t process_group);
  Janitor(Janitor&& other) noexcept;
  Janitor& operator=(Janitor&&) = delete;
  ~Janitor();

  // The supervisor cleaned up itself: the janitor leaves without acting.
  void release();

 private:
  Janitor(int pipe_write, pid_t pid) : pipe_write_(pipe_write), pid_(pid) {}
  int pipe_write_ = -1;
  pid_t pid_ = -1;
};

}  // namespace aasm
