// The kernel's floor under the run's cgroup (docs/benchmarks.md, "The
// kernel's floor of the run's cgroup"): what any launcher pays to put a
// command into new v1 memory, pids and cpu groups with the coding agent's
// limits, measured without aasm's code around it, so that the launch-time
// benchmark's cgroup cost can be split into the kernel's part and the
// launcher's.
//
// Each round, in a shuffled order:
//   bare:   fork a child that exits at once, wait for it;
//   groups: mkdir the three groups beneath this process's own (found as the
//           launcher finds them, cgroup::discover_host), write the five
//           limits, open the three `tasks` files, fork a child that moves
//           itself in (writes 0 to each) and exits, wait, rmdir the groups.
// `groups - bare` is the floor of the groups' life; each step is timed too.
// Host discovery runs in a fresh process each round (--discover-once: the
// first /proc access and mountinfo of a new process are what a launch pays).
//
// Needs root (or a delegated v1 memory, pids and cpu hierarchy); creates
// groups only beneath its own cgroup, named cgroup-floor-<pid>-<round>.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "supervisor/cgroup_host.h"
#include "timing.h"

namespace {

using aasm::bench::now_ms;
using aasm::bench::quantile;

struct Knob {
  size_t group;  // index into kControllers
  const char* file;
  const char* value;
};
constexpr const char* kControllers[] = {"memory", "pids", "cpu"};
// The coding agent's limits (coding-agent-cgroup.yaml) as the launcher writes them.
constexpr Knob kKnobs[] = {{0, "memory.limit_in_bytes", "2147483648"},
                           {0, "memory.memsw.limit_in_bytes", "2147483648"},
                           {1, "pids.max", "512"},
                           {2, "cpu.cfs_period_us", "100000"},
                           {2, "cpu.cfs_quota_us", "150000"}};

std::map<std::string, std::vector<double>> samples;

struct Step {
  const char* name;
  double start = now_ms();
  explicit Step(const char* n) : name(n) {}
  ~Step() { samples[name].push_back(now_ms() - start); }
};

double fork_and_wait(const int* tasks, size_t count) {
  const double start = now_ms();
  const pid_t child = ::fork();
  if (child == 0) {
    for (size_t i = 0; i < count; ++i)
      if (::write(tasks[i], "0", 1) != 1) _exit(1);
    _exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::fprintf(stderr, "cgroup-floor: the child could not move itself\n");
  return now_ms() - start;
}

bool groups_round(const std::vector<int>& own, const std::string& name) {
  int dirs[3], tasks[3];
  {
    Step step("mkdir + open, 3 groups");
    for (size_t g = 0; g < 3; ++g) {
      if (::mkdirat(own[g], name.c_str(), 0755) != 0) return false;
      dirs[g] = ::openat(own[g], name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  }
  {
    Step step("write 5 limits");
    for (const Knob& knob : kKnobs) {
      const int fd = ::openat(dirs[knob.group], knob.file, O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, knob.value, std::strlen(knob.value)) < 0) std::perror(knob.file);
      ::close(fd);
    }
  }
  {
    Step step("open 3 tasks files");
    for (size_t g = 0; g < 3; ++g) tasks[g] = ::openat(dirs[g], "tasks", O_WRONLY | O_CLOEXEC);
  }
  samples["fork, self-move, exit, wait"].push_back(fork_and_wait(tasks, 3));
  for (size_t g = 0; g < 3; ++g) ::close(tasks[g]);
  {
    Step step("rmdir 3 groups");
    for (size_t g = 0; g < 3; ++g) {
      ::close(dirs[g]);
      if (::unlinkat(own[g], name.c_str(), AT_REMOVEDIR) != 0) std::perror("rmdir");
    }
  }
  return true;
}

// One host discovery, as a launch's first: prints its time in ms.
int discover_once() {
  const double start = now_ms();
  const aasm::cgroup::Host host = aasm::cgroup::discover_host();
  const double took = now_ms() - start;
  std::printf("%.4f\n", took);
  return host.problem.empty() ? 0 : 1;
}

double discovery_in_fresh_process(const char* self) {
  int out[2];
  if (::pipe(out) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::execl(self, self, "--discover-once", static_cast<char*>(nullptr));
    _exit(127);
  }
  ::close(out[1]);
  char text[64] = {};
  const ssize_t n = ::read(out[0], text, sizeof text - 1);
  ::close(out[0]);
  ::waitpid(child, nullptr, 0);
  return n > 0 ? std::atof(text) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 300;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--discover-once") return discover_once();
    if (arg == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench-cgroup-floor [--rounds N]\n");
      return 2;
    }
  }
  const aasm::cgroup::Host host = aasm::cgroup::discover_host();
  std::vector<int> own;
  for (const char* controller : kControllers) {
    const aasm::cgroup::Hierarchy* h = host.v1_for(controller);
    if (!h || !h->usable()) {
      std::printf("cgroup-floor: skipped: no usable v1 %s hierarchy here (%s)\n", controller,
                  h ? h->problem.c_str() : "not mounted");
      return 0;
    }
    own.push_back(::open(h->own_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  std::mt19937 shuffle(12345);
  const int warmup = 10;
  for (int round = 0; round < rounds + warmup; ++round) {
    const bool groups_first = shuffle() & 1;
    for (int turn = 0; turn < 2; ++turn) {
      if ((turn == 0) == groups_first) {
        const double start = now_ms();
        if (!groups_round(own, "cgroup-floor-" + std::to_string(::getpid()) + "-" + std::to_string(round))) {
          std::perror("cgroup-floor: mkdir");
          return 1;
        }
        samples["groups round"].push_back(now_ms() - start);
      } else {
        samples["bare round (fork, exit, wait)"].push_back(fork_and_wait(nullptr, 0));
      }
    }
    samples["host discovery, fresh process"].push_back(discovery_in_fresh_process(argv[0]));
    if (round + 1 == warmup) samples.clear();
  }
  std::printf("%-34s %9s %9s   (%d rounds, ms)\n", "step", "median", "p90", rounds);
  for (const auto& [name, values] : samples)
    std::printf("%-34s %9.4f %9.4f\n", name.c_str(), quantile(values, 0.5), quantile(values, 0.9));
  const double floor = quantile(samples["groups round"], 0.5) - quantile(samples["bare round (fork, exit, wait)"], 0.5) +
                       quantile(samples["host discovery, fresh process"], 0.5);
  std::printf("floor of the run's cgroup (groups - bare + discovery): %.4f ms\n", floor);
  return 0;
}
