// The launcher's writes to its own stdout and stderr, which it shares with
// the user's shell. A write(2) there blocks for as long as the other end
// pleases: a terminal whose output is stopped (the command's
// ioctl(0, TCXONC, TCOOFF) on the terminal it inherited, the user's Ctrl-S),
// a pipe whose reader never reads. Setting O_NONBLOCK instead is not an
// option: it is a flag of the open file description, which the user's shell
// and every other holder of the terminal share (their reads and writes
// would start failing with EAGAIN). And poll(POLLOUT) first does not make
// the write safe: a terminal reports POLLOUT with one byte of room, and a
// write larger than the room, or one racing a TCOOFF, still blocks.
//
// So the blocking write is made by a thread of the writer's own, one chunk
// at a time, and the supervision loop only hands a chunk over and polls
// done_fd() for its completion: it never waits on its output. While a chunk
// is in hand the loop reads no more of the command's pipe, so a slow reader
// slows the command down (as before) and loses nothing, while the deadline,
// the listener, the forwarded signals and the limits go on.
//
// At the end the launcher waits for the last chunk until a deadline
// (wait()); past it, it gives the output up: the chunk is left to its
// thread (exit ends it), its unwritten bytes are counted as dropped, and
// the descriptor is pointed at /dev/null in this process only, so that no
// later write of the launcher (its final messages) can block on it. The
// file is remembered: a writer of the same file (stderr on the terminal
// that stdout stopped on) gives up at once, without a second wait.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace aasm {

class OutputWriter {
 public:
  explicit OutputWriter(int fd);
  // A chunk still in hand is left to the thread, which holds what it needs.
  ~OutputWriter();
  OutputWriter(const OutputWriter&) = delete;
  OutputWriter& operator=(const OutputWriter&) = delete;

  // A chunk handed over is not written yet.
  bool busy() const;
  // Readable when a chunk is done (then call acknowledge()); -1 until the
  // first chunk.
  int done_fd() const;
  void acknowledge();
  // Hands `data` over; only when not busy(). After an error or once given
  // up, the bytes are counted as dropped instead.
  void write(std::string data);
  // Waits until no chunk is in hand, or until `deadline_ms` (CLOCK_MONOTONIC
  // milliseconds) passes: then gives the output up, as above, and is false.
  bool wait(int64_t deadline_ms);

  // Bytes handed over that did not reach the descriptor.
  uint64_t dropped() const;
  // Why: the errno of the write that failed, or 0 (given up on, or none).
  int error() const;
  bool gave_up() const;

  struct Shared;

 private:
  void give_up();

  std::shared_ptr<Shared> shared_;
  bool started_ = false;
};

// CLOCK_MONOTONIC, in milliseconds.
int64_t monotonic_ms();

}  // namespace aasm
