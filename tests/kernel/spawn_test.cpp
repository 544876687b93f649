// kernel/spawn.h against the real kernel: the vfork-style start returns only
// once the child has exec'd, and the clone3 start puts the child into a
// cgroup v2 directory before it runs (CLONE_INTO_CGROUP). This host's v2
// hierarchy has no controllers, so the launcher cannot use it for limits;
// placement itself needs none, and is what is tested here, in a group made
// beneath this process's own v2 cgroup and removed afterwards.
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "harness.h"
#include "kernel/spawn.h"

extern char** environ;

namespace aasm::ktest {
namespace {

// The v2 line of /proc/self/cgroup ("0::/path"), or "" on a v1-only host.
std::string own_v2_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

std::string v2_mount() {
  for (const char* candidate : {"/sys/fs/cgroup/unified", "/sys/fs/cgroup"}) {
    struct stat st {};
    if (::stat((std::string(candidate) + "/cgroup.controllers").c_str(), &st) == 0) return candidate;
  }
  return "";
}

struct CatArgs {
  int out;
};

// The child: its own /proc/self/cgroup on the pipe.
int cat_own_cgroup(void* argument) {
  const auto* args = static_cast<const CatArgs*>(argument);
  if (::dup2(args->out, STDOUT_FILENO) < 0) return 126;
  static char cat[] = "cat", file[] = "/proc/self/cgroup";
  char* const argv[] = {cat, file, nullptr};
  spawn::await_supervisor();
  spawn::exec("/usr/bin/cat", argv, environ);
  return 127;
}

// Runs the child with `options`, returns the v2 line it printed.
std::string child_v2_line(spawn::Options options) {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  CatArgs args{pipe_fds[1]};
  pid_t slot = 0;
  options.pid_slot = &slot;
  bool alongside_ran = false;
  const pid_t pid = spawn::start(options, cat_own_cgroup, &args, [&] { return alongside_ran = true; });
  CHECK(alongside_ran);
  ::close(pipe_fds[1]);
  REQUIRE_MESSAGE(pid > 0, "spawn: ", std::strerror(-pid));
  CHECK(slot == pid);  // CLONE_PARENT_SETTID
  std::string text;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) text.append(buffer, size_t(n));
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const size_t at = text.find("0::");
  return at == std::string::npos ? "" : text.substr(at + 3, text.find('\n', at) - at - 3);
}

TEST_CASE("spawn: clone3(CLONE_INTO_CGROUP) starts the child inside a v2 cgroup") {
  const std::string mount = v2_mount(), own = own_v2_cgroup();
  REQUIRE_MESSAGE(!mount.empty(), "no cgroup v2 hierarchy mounted");
  const std::string relative = (own == "/" ? "" : own) + "/aasm-spawn-test-" + std::to_string(::getpid());
  const std::string directory = mount + relative;
  REQUIRE_MESSAGE(::mkdir(directory.c_str(), 0755) == 0, "mkdir ", directory, ": ", std::strerror(errno));
  const int fd = ::open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);

  CHECK(child_v2_line({0, fd, nullptr}) == relative);
  SUBCASE("control: the vfork-style start leaves the child in this process's cgroup") {
    CHECK(child_v2_line({0, -1, nullptr}) == own);
  }

  ::close(fd);
  CHECK_MESSAGE(::rmdir(directory.c_str()) == 0, "rmdir ", directory, ": ", std::strerror(errno));
}

// `alongside` failing: the child, held before its exec, is killed, and the
// start reports it.
TEST_CASE("spawn: when the work alongside fails, the child never execs") {
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  CatArgs args{pipe_fds[1]};
  pid_t slot = 0;
  const pid_t result = spawn::start({0, -1, &slot}, cat_own_cgroup, &args, [] { return false; });
  ::close(pipe_fds[1]);
  CHECK(result == -ECANCELED);
  REQUIRE(slot > 0);
  int status = 0;
  REQUIRE(::waitpid(slot, &status, 0) == slot);
  CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  char byte;
  CHECK(::read(pipe_fds[0], &byte, 1) == 0);  // cat never ran: nothing written
  ::close(pipe_fds[0]);
}

}  // namespace
}  // namespace aasm::ktest
