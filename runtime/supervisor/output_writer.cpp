#include "supervisor/output_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace aasm {

namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId&) const = default;
};

std::optional<FileId> file_of(int fd) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// The files given up on, in this process (touched by the main thread only).
std::vector<FileId>& stalled_files() {
  static std::vector<FileId> files;
  return files;
}

}  // namespace

struct OutputWriter::Shared {
  int fd = -1;
  int done = -1;  // eventfd, written when a chunk is done
  std::optional<FileId> file;
  std::mutex mutex;
  std::condition_variable handed;
  // Guarded by mutex.
  std::string chunk;
  size_t in_hand = 0;    // the size of the chunk being written
  bool busy = false;     // a chunk is in hand
  bool closing = false;  // the OutputWriter is gone: end once idle
  bool gave_up = false;
  int error = 0;
  uint64_t dropped = 0;
  // Of the chunk in hand; written by the thread without the lock.
  std::atomic<size_t> written{0};

  ~Shared() {
    if (done >= 0) ::close(done);
  }
};

namespace {

// The thread: blocking writes, one chunk at a time, never holding the lock
// while it writes.
void write_chunks(std::shared_ptr<OutputWriter::Shared> s) {
  std::unique_lock<std::mutex> lock(s->mutex);
  for (;;) {
    s->handed.wait(lock, [&] { return s->busy || s->closing; });
    if (!s->busy) return;
    const std::string chunk = std::move(s->chunk);
    lock.unlock();
    size_t done = 0;
    int error = 0;
    while (done < chunk.size()) {
      const ssize_t n = ::write(s->fd, chunk.data() + done, chunk.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : EIO;
        break;
      }
      done += size_t(n);
      s->written.store(done);
    }
    lock.lock();
    if (!s->gave_up) {  // once given up on, its bytes were counted then
      s->dropped += chunk.size() - done;
      if (error) s->error = error;
    }
    s->busy = false;
    const uint64_t one = 1;
    (void)!::write(s->done, &one, sizeof one);
  }
}

}  // namespace

int64_t monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

OutputWriter::OutputWriter(int fd) : shared_(std::make_shared<Shared>()) {
  shared_->fd = fd;
  shared_->file = file_of(fd);
  shared_->done = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (shared_->done < 0) {
    shared_->error = errno;
    return;
  }
  // Every signal blocked in the thread: the launcher's forwarded signals
  // are read from a signalfd by the main thread, and a thread that had them
  // unblocked would take them with their default action.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  try {
    std::thread(write_chunks, shared_).detach();
    started_ = true;
  } catch (const std::system_error& e) {
    shared_->error = e.code().value() ? e.code().value() : EAGAIN;
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

OutputWriter::~OutputWriter() {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  shared_->closing = true;
  shared_->handed.notify_one();
}

bool OutputWriter::busy() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->busy && !shared_->gave_up;
}

int OutputWriter::done_fd() const { return started_ ? shared_->done : -1; }

void OutputWriter::acknowledge() {
  uint64_t count;
  if (shared_->done >= 0) (void)!::read(shared_->done, &count, sizeof count);
}

void OutputWriter::write(std::string data) {
  if (data.empty()) return;
  const bool stalled = shared_->file && std::ranges::find(stalled_files(), *shared_->file) != stalled_files().end();
  if (stalled) give_up();
  std::lock_guard<std::mutex> lock(shared_->mutex);
  if (!started_ || shared_->gave_up || shared_->error || shared_->busy) {
    shared_->dropped += data.size();
    return;
  }
  shared_->in_hand = data.size();
  shared_->written.store(0);
  shared_->chunk = std::move(data);
  shared_->busy = true;
  shared_->handed.notify_one();
}

bool OutputWriter::wait(int64_t deadline_ms) {
  while (busy()) {
    const int64_t left = deadline_ms - monotonic_ms();
    if (left <= 0) {
      give_up();
      return false;
    }
    pollfd done{shared_->done, POLLIN, 0};
    ::poll(&done, 1, int(std::min<int64_t>(left, INT_MAX)));
    acknowledge();
  }
  return true;
}

void OutputWriter::give_up() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (shared_->gave_up) return;
    shared_->gave_up = true;
    if (shared_->busy) shared_->dropped += shared_->in_hand - std::min(shared_->in_hand, shared_->written.load());
  }
  // This process's descriptor only: the file description, shared with the
  // user's shell, is left as it is, and the thread still holds it.
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, shared_->fd);
    if (null != shared_->fd) ::close(null);
  }
  if (shared_->file && std::ranges::find(stalled_files(), *shared_->file) == stalled_files().end())
    stalled_files().push_back(*shared_->file);
}

uint64_t OutputWriter::dropped() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->dropped;
}

int OutputWriter::error() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->error;
}

bool OutputWriter::gave_up() const {
  std::lock_guard<std::mutex> lock(shared_->mutex);
  return shared_->gave_up;
}

}  // namespace aasm
