// OutputWriter (runtime/supervisor/output_writer.h) on pipes of the test's
// own: a reader that reads gets every byte; one that never reads costs the
// caller no more than its deadline, the bytes are counted, and the
// descriptor (only this process's) then leads to /dev/null; a second writer
// of the same file gives up at once; a reader gone is an error, counted.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "supervisor/output_writer.h"

using aasm::monotonic_ms;
using aasm::OutputWriter;

namespace {

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    for (int fd : {read, write})
      if (fd >= 0) ::close(fd);
  }
  // Fills it, so that the next blocking write blocks.
  void fill() const {
    const int flags = ::fcntl(write, F_GETFL);
    ::fcntl(write, F_SETFL, flags | O_NONBLOCK);
    const std::string block(65536, 'f');
    while (::write(write, block.data(), block.size()) > 0) {
    }
    ::fcntl(write, F_SETFL, flags);
  }
  std::string drain() const {
    const int flags = ::fcntl(read, F_GETFL);
    ::fcntl(read, F_SETFL, flags | O_NONBLOCK);
    std::string out;
    char buffer[65536];
    for (ssize_t n; (n = ::read(read, buffer, sizeof buffer)) > 0;) out.append(buffer, size_t(n));
    ::fcntl(read, F_SETFL, flags);
    return out;
  }
};

bool is_dev_null(int fd) {
  struct stat st{}, null{};
  return ::fstat(fd, &st) == 0 && ::stat("/dev/null", &null) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == null.st_rdev;
}

}  // namespace

TEST_CASE("output writer: a reader that reads gets every byte, in order, and nothing is dropped") {
  Pipe pipe;
  OutputWriter writer(pipe.write);
  std::string expected;
  for (int i = 0; i < 3; ++i) {
    const std::string chunk = "chunk " + std::to_string(i) + "\n";
    expected += chunk;
    CHECK_FALSE(writer.busy());
    writer.write(chunk);
    CHECK(writer.wait(monotonic_ms() + 5000));
  }
  CHECK(pipe.drain() == expected);
  CHECK(writer.dropped() == 0);
  CHECK(writer.error() == 0);
  CHECK_FALSE(writer.gave_up());
  CHECK_FALSE(is_dev_null(pipe.write));
}

TEST_CASE("output writer: a reader that never reads costs the deadline, no more; the bytes are counted once") {
  Pipe pipe;
  pipe.fill();
  const int same_file = ::dup(pipe.write);
  REQUIRE(same_file >= 0);
  OutputWriter writer(pipe.write);
  writer.write(std::string(1000, 'x'));
  CHECK(writer.busy());
  CHECK(writer.done_fd() >= 0);
  const int64_t start = monotonic_ms();
  CHECK_FALSE(writer.wait(start + 300));
  const int64_t waited = monotonic_ms() - start;
  CHECK(waited >= 300);
  CHECK(waited < 2000);
  CHECK(writer.gave_up());
  CHECK_FALSE(writer.busy());
  CHECK(writer.dropped() == 1000);
  CHECK(writer.error() == 0);
  // Only this descriptor now leads to /dev/null; the pipe itself is as it was.
  CHECK(is_dev_null(pipe.write));
  CHECK_FALSE(is_dev_null(same_file));
  CHECK((::fcntl(same_file, F_GETFL) & O_NONBLOCK) == 0);
  // Later bytes are counted, not written.
  writer.write("more");
  CHECK(writer.dropped() == 1004);

  SUBCASE("a second writer of the same file gives up at once") {
    OutputWriter again(same_file);
    const int64_t before = monotonic_ms();
    again.write("yy");
    CHECK_FALSE(again.busy());
    CHECK(again.wait(before + 5000));
    CHECK(monotonic_ms() - before < 200);
    CHECK(again.gave_up());
    CHECK(again.dropped() == 2);
  }

  // The reader reads at last: the abandoned thread's write completes
  // without counting its bytes a second time.
  std::string seen;
  for (int i = 0; i < 100 && seen.find('x') == std::string::npos; ++i) {
    seen += pipe.drain();
    ::usleep(10000);
  }
  ::usleep(20000);
  CHECK(writer.dropped() == 1004);
  ::close(same_file);
}

TEST_CASE("output writer: a reader gone is an error: the bytes are counted, the errno kept") {
  Pipe pipe;
  ::close(pipe.read);
  pipe.read = -1;
  // The writer's thread blocks every signal: SIGPIPE stays pending there
  // and the write fails with EPIPE, as in the launcher (which ignores it).
  OutputWriter writer(pipe.write);
  writer.write("lost");
  CHECK(writer.wait(monotonic_ms() + 5000));
  CHECK(writer.error() == EPIPE);
  CHECK(writer.dropped() == 4);
  CHECK_FALSE(writer.gave_up());
  writer.write("also");
  CHECK(writer.dropped() == 8);
}
