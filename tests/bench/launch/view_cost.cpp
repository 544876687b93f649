// The launch cost of the filesystem view (runtime/kernel/mount_view.h)
// against bwrap building the same view: the wall time of one launch of
// /bin/true, from before the start to after waitpid, every variant once per
// round in a shuffled order (fixed seed), then medians, p95 and the
// overhead over a bare /bin/true. docs/benchmarks.md, "The cost of the
// filesystem view", has the command and the numbers.
//
//   bench-view-cost [--rounds N] [--warmup N] [--workspace DIR]
//   bench-view-cost --launch DIR [-- CMD [ARG...]]
//   bench-view-cost --bwrap-argv DIR
//
// --launch builds the view around DIR and runs CMD (default /bin/true) in it,
// in DIR, with neither Landlock nor a seccomp filter: the real-work
// benchmark's `view only` (real_work.py), which aasm-launch cannot give since
// a plan with the view always carries Landlock too. --bwrap-argv prints,
// one per line, the bwrap variant's arguments for DIR without the command,
// so that real_work.py runs bwrap with exactly these binds.
//
// The view is a coding agent's: /usr read-only, /etc read-only and noexec,
// the workspace (DIR, default the current directory) read-write, the root's
// links into /usr, a fresh /proc, /dev with null, zero, full, random,
// urandom, tty and a devpts instance, and a private 64 MiB /tmp. bwrap gets
// the same binds, links, /proc, /dev (its --dev makes the same six nodes and
// devpts) and /tmp (--size); it has no noexec. Variants:
//   bare            posix_spawn /bin/true
//   namespaces      this process clones the child into new user, mount and
//                   PID namespaces (kernel/spawn.h), which execs /bin/true
//   view            the same, the view prepared before the clone and built
//                   by the child before its exec
//   view, root      the same without the user namespace (mount and PID only)
//   view, own process  posix_spawn of this binary with --launch, which does
//                   `view` and exits with /bin/true's status: what a launcher
//                   process pays on top (its exec and start-up), as bwrap does
//   bwrap, bwrap --as-pid-1   `bwrap --unshare-user --unshare-pid` with the
//                   binds above; --as-pid-1 skips bwrap's reaper process,
//                   leaving the command PID 1 as the view does
// bwrap is looked up along $PATH; when missing, its variants are skipped.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kernel/mount_view.h"
#include "kernel/namespaces.h"
#include "kernel/spawn.h"
#include "plan/plan.h"
#include "timing.h"

extern char** environ;

namespace {

using aasm::bench::now_ms;
using aasm::bench::quantile;
namespace mount_view = aasm::mount_view;

constexpr uint64_t kTmpBytes = 64ull << 20;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bench-view-cost: %s\n", message.c_str());
  std::exit(2);
}

mount_view::Spec coding_agent_view(const std::string& workspace) {
  mount_view::Spec spec;
  spec.trees = {{"/usr", "", 0}, {"/etc", "", mount_view::kNoExec}, {workspace, "", mount_view::kWritable}};
  spec.dev_nodes.assign(std::begin(mount_view::kDevNodes), std::end(mount_view::kDevNodes));
  spec.dev_pts = true;
  spec.proc = true;
  spec.tmpfs = {{"/tmp", kTmpBytes, true}};
  mount_view::add_root_symlinks(spec);
  return spec;
}

std::vector<std::string> bwrap_argv(const std::string& bwrap, const mount_view::Spec& spec, bool as_pid_1) {
  std::vector<std::string> argv = {bwrap, "--unshare-user", "--unshare-pid"};
  if (as_pid_1) argv.push_back("--as-pid-1");
  for (const mount_view::Tree& tree : spec.trees)
    argv.insert(argv.end(), {(tree.flags & mount_view::kWritable) ? "--bind" : "--ro-bind", tree.host_path, tree.host_path});
  for (const mount_view::Symlink& link : spec.symlinks) argv.insert(argv.end(), {"--symlink", link.target, link.view_path});
  argv.insert(argv.end(), {"--proc", "/proc", "--dev", "/dev", "--size", std::to_string(kTmpBytes), "--tmpfs", "/tmp",
                           "/bin/true"});
  return argv;
}

char true_path[] = "/bin/true";
char* true_argv[] = {true_path, nullptr};

struct ViewChild {
  const mount_view::Prepared* view;
  char* const* argv;  // the command, argv[0] a path
  uint32_t namespaces;
  uid_t uid;
  gid_t gid;
};

int view_child(void* argument) {
  const ViewChild& c = *static_cast<const ViewChild*>(argument);
  if (aasm::namespaces::finish_in_child(c.namespaces, c.uid, c.gid) != 0) return 125;
  if (c.view && mount_view::build(*c.view).error != 0) return 125;
  aasm::spawn::await_supervisor();
  aasm::spawn::exec(c.argv[0], c.argv, environ);
  return 127;
}

// One launch as the launcher would do it: prepare (resolving the host's
// paths), clone into the namespaces, build, exec; the wait status.
int launch_view(const mount_view::Spec* spec, uint32_t namespaces, char* const* argv = true_argv) {
  std::optional<mount_view::Prepared> prepared;
  if (spec) {
    auto view = mount_view::prepare(*spec);
    if (!view) fail("prepare: " + view.error().message);
    prepared = std::move(*view);
  }
  ViewChild child{prepared ? &*prepared : nullptr, argv, namespaces, getuid(), getgid()};
  const pid_t pid = aasm::spawn::start({aasm::namespaces::clone_flags(namespaces), -1, nullptr}, view_child, &child,
                                       [] { return true; });
  if (pid < 0) fail(std::string("spawn: ") + std::strerror(-pid));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail(std::string("waitpid: ") + std::strerror(errno));
  return status;
}

int spawn_and_wait(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) fail("posix_spawn " + args[0] + ": " + std::strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail(std::string("waitpid: ") + std::strerror(errno));
  return status;
}

struct Variant {
  std::string name;
  std::function<int()> launch;  // the wait status
  std::vector<double> ms;
};

constexpr uint32_t kUserMountPid = aasm::plan::kNamespaceUser | aasm::plan::kNamespaceMount | aasm::plan::kNamespacePid;
constexpr uint32_t kMountPid = aasm::plan::kNamespaceMount | aasm::plan::kNamespacePid;

}  // namespace

int main(int argc, char** argv) {
  int rounds = 301, warmup = 20;
  std::string workspace;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--rounds") rounds = std::atoi(value().c_str());
    else if (a == "--warmup") warmup = std::atoi(value().c_str());
    else if (a == "--workspace") workspace = value();
    else if (a == "--launch") {  // the `view, own process` variant's child; real_work.py's `view only`
      const std::string dir = value();
      mount_view::Spec spec = coding_agent_view(dir);
      spec.working_directory = dir;
      char* const* command = true_argv;
      if (i + 1 < argc && std::string(argv[i + 1]) == "--") {
        if (i + 2 >= argc) fail("-- needs a command");
        command = argv + i + 2;
      } else if (i + 1 < argc) fail("unknown argument " + std::string(argv[i + 1]));
      const int status = launch_view(&spec, kUserMountPid, command);
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    } else if (a == "--bwrap-argv") {
      const auto bwrap = aasm::bench::find_in_path("bwrap");
      if (!bwrap) fail("bwrap: not found along $PATH");
      std::vector<std::string> args = bwrap_argv(*bwrap, coding_agent_view(value()), false);
      args.pop_back();  // the command, /bin/true
      for (const std::string& arg : args) std::printf("%s\n", arg.c_str());
      return 0;
    } else fail("unknown argument " + a);
  }
  if (workspace.empty()) {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd)) fail("getcwd");
    workspace = cwd;
  }
  const mount_view::Spec spec = coding_agent_view(workspace);
  auto prepared = mount_view::prepare(spec);
  if (!prepared) fail("prepare: " + prepared.error().message);
  char self[4096];
  const ssize_t self_length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (self_length <= 0) fail("readlink /proc/self/exe");
  const std::string self_path(self, size_t(self_length));

  std::vector<Variant> variants = {
      {"bare /bin/true", [] { return spawn_and_wait({"/bin/true"}); }, {}},
      {"namespaces (user, mount, pid), no view", [] { return launch_view(nullptr, kUserMountPid); }, {}},
      {"view (user, mount, pid)", [&] { return launch_view(&spec, kUserMountPid); }, {}},
      {"view as root (mount, pid)", [&] { return launch_view(&spec, kMountPid); }, {}},
      {"view, own process (exec of a launcher)", [&] { return spawn_and_wait({self_path, "--launch", workspace}); }, {}},
  };
  if (const auto bwrap = aasm::bench::find_in_path("bwrap")) {
    for (const bool as_pid_1 : {false, true}) {
      const std::vector<std::string> args = bwrap_argv(*bwrap, spec, as_pid_1);
      variants.push_back({as_pid_1 ? "bwrap --as-pid-1" : "bwrap", [args] { return spawn_and_wait(args); }, {}});
    }
  } else {
    std::printf("bwrap: not found along $PATH, its variants skipped\n");
  }
  for (Variant& v : variants) {
    const int status = v.launch();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail(v.name + ": the trial launch failed (status " + std::to_string(status) + ")");
  }

  std::mt19937 shuffle(13);
  std::vector<size_t> order(variants.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (int round = 0; round < warmup + rounds; ++round) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (size_t i : order) {
      const double start = now_ms();
      if (variants[i].launch() != 0) fail(variants[i].name + ": a launch failed");
      if (round >= warmup) variants[i].ms.push_back(now_ms() - start);
    }
  }

  std::printf("%d rounds after %d warm-up rounds, shuffled; the view: %zu steps (system calls in the child), %zu mounts\n\n",
              rounds, warmup, prepared->steps.size(), prepared->mounts.size());
  std::printf("| variant | median ms | p95 ms | overhead, median |\n|---|---:|---:|---:|\n");
  const double bare = quantile(variants[0].ms, 0.5);
  for (const Variant& v : variants)
    std::printf("| %s | %.3f | %.3f | %+.3f |\n", v.name.c_str(), quantile(v.ms, 0.5), quantile(v.ms, 0.95),
                quantile(v.ms, 0.5) - bare);
  const auto overhead = [&](const std::string& name) -> std::optional<double> {
    for (const Variant& v : variants)
      if (v.name == name) return quantile(v.ms, 0.5) - bare;
    return std::nullopt;
  };
  const double view = *overhead("view (user, mount, pid)"), own = *overhead("view, own process (exec of a launcher)");
  std::printf("\n");
  for (const char* name : {"bwrap", "bwrap --as-pid-1"})
    if (const auto b = overhead(name))
      std::printf("%s overhead / view's: %.1fx; / the view's in its own process: %.1fx\n", name, *b / view, *b / own);
  return 0;
}
