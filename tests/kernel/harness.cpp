#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

extern char** environ;

namespace aasm::ktest {

std::string binary(const char* variable) {
  const char* value = std::getenv(variable);
  REQUIRE_MESSAGE((value && *value), std::string(variable), " is not set (run the tests through `meson test`)");
  return value;
}

namespace {

// Drains both pipes together so neither can fill up and stall the child,
// then reaps it.
Run collect(pid_t pid, int out_read, int err_read) {
  Run result;
  result.pid = pid;
  pollfd fds[2] = {{out_read, POLLIN, 0}, {err_read, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_pipes = 2;
  while (open_pipes > 0) {
    if (::poll(fds, 2, -1) < 0) {
      REQUIRE(errno == EINTR);
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_pipes;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) REQUIRE(errno == EINTR);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace

Run run(const std::vector<std::string>& argv, const std::string& cwd) {
  int out[2], err[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  ::close(err[1]);
  REQUIRE_MESSAGE(spawned == 0, "posix_spawn ", argv[0], ": ", std::strerror(spawned));
  return collect(pid, out[0], err[0]);
}

Run run_forked(const std::function<int()>& body) {
  int out[2], err[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || ::dup2(null, STDIN_FILENO) < 0 || ::dup2(out[1], STDOUT_FILENO) < 0 ||
        ::dup2(err[1], STDERR_FILENO) < 0)
      ::_exit(126);
    ::_exit(body());
  }
  ::close(out[1]);
  ::close(err[1]);
  return collect(pid, out[0], err[0]);
}

TempDir::TempDir(const std::string& base) {
  std::string pattern = base + "/aasm-kt-XXXXXX";
  REQUIRE_MESSAGE(::mkdtemp(pattern.data()) != nullptr, "mkdtemp: ", std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  // Depth first, and on past a failure so one stuck entry leaves the least behind.
  ::nftw(
      path_.c_str(),
      [](const char* p, const struct stat*, int, FTW*) {
        ::remove(p);
        return 0;
      },
      16, FTW_DEPTH | FTW_PHYS);
}

void write_file(const std::string& path, std::string_view content, unsigned mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  REQUIRE_MESSAGE(fd >= 0, "cannot create ", path, ": ", std::strerror(errno));
  const bool written = ::write(fd, content.data(), content.size()) == ssize_t(content.size());
  ::fchmod(fd, mode);
  ::close(fd);
  REQUIRE(written);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open ", path);
  return {std::istreambuf_iterator<char>(in), {}};
}

ReapOnExit::~ReapOnExit() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::optional<std::string> read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, size_t(n));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return out;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void make_dir(const std::string& path) { REQUIRE(::mkdir(path.c_str(), 0755) == 0); }

std::vector<std::string> diagnostic_lines(const std::string& text, const std::string& file) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with(file + ":"))
      lines.push_back(line.substr(file.size() + 1));
    else if (line.starts_with("aasmc: "))
      lines.push_back(line);
  return lines;
}

std::string flow_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + ("\"" + items[i] + "\"");
  return out + "]";
}

std::string Policy::yaml() const {
  return "apiVersion: aasm.dev/v1\n"
         "kind: Policy\n"
         "metadata: {name: kernel-test, tier: agent}\n"
         "spec:\n"
         "  filesystem:\n"
         "    read: {allow: " + flow_list(read) + "}\n"
         "    write: {allow: " + flow_list(write) + "}\n"
         "    execute: {allow: " + flow_list(execute) + "}\n"
         "  syscalls:\n"
         "    default: \"" + default_action + "\"\n"
         "    allow: " + flow_list(syscalls) + "\n";
}

namespace {

std::string compile_yaml(const TempDir& dir, const std::string& name, const std::string& yaml) {
  const std::string source = dir / (name + ".yaml");
  const std::string plan = dir / (name + ".bin");
  write_file(source, yaml);
  const Run compiled = run({binary("AASMC"), "compile", source, "-o", plan});
  INFO("policy:\n", yaml);
  INFO("aasmc stderr: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  REQUIRE(exists(plan));
  return plan;
}

}  // namespace

std::string compile(const TempDir& dir, const Policy& policy, const std::string& name) {
  return compile_yaml(dir, name, policy.yaml());
}

std::string compile_spec(const TempDir& dir, const std::string& name, const std::string& spec) {
  return compile_yaml(dir, name,
                      "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: " + name + ", tier: agent}\nspec:\n" + spec);
}

std::string compile_cascade(const TempDir& dir, const std::string& name, const std::vector<std::string>& specs) {
  static const char* const kTiers[] = {"org", "team", "agent", "run"};
  REQUIRE(!specs.empty());
  REQUIRE(specs.size() <= std::size(kTiers));
  std::string yaml;
  for (size_t i = 0; i < specs.size(); ++i)
    yaml += std::string(i ? "---\n" : "") + "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: " + name + "-" +
            kTiers[i] + ", tier: " + kTiers[i] + "}\nspec:\n" + specs[i];
  return compile_yaml(dir, name, yaml);
}

std::string own_v1_cgroup(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (line.substr(first + 1, second - first - 1) != controller) continue;
    const std::string path = line.substr(second + 1);
    return "/sys/fs/cgroup/" + controller + (path == "/" ? "" : path);
  }
  return "";
}

std::string run_group_of(const std::string& root, pid_t launcher) {
  const std::string prefix = "aasm-" + std::to_string(launcher) + "-";
  DIR* dir = ::opendir(root.c_str());
  if (!dir) return "";
  std::string found;
  while (const dirent* entry = ::readdir(dir))
    if (std::string_view(entry->d_name).starts_with(prefix)) found = std::string("/") + entry->d_name;
  ::closedir(dir);
  return found;
}

Run launch(const std::string& plan, const std::vector<std::string>& command, const std::string& cwd) {
  std::vector<std::string> argv = {binary("AASM_LAUNCH"), plan, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  Run r = run(argv, cwd);
  // Whatever the run's end, refusals included, its groups went with it (the
  // pids hierarchy holds every v1 run's group).
  static const std::string pids_root = own_v1_cgroup("pids");
  if (!pids_root.empty()) {
    const std::string left = run_group_of(pids_root, r.pid);
    CHECK_MESSAGE(left.empty(), "the launcher left its cgroup ", pids_root, left, " behind");
  }
  return r;
}

Run probe(const std::string& plan, const std::vector<std::string>& args, const std::string& cwd) {
  std::vector<std::string> command = {binary("AASM_PROBE")};
  command.insert(command.end(), args.begin(), args.end());
  return launch(plan, command, cwd);
}

Sentinel::Sentinel(Caps caps) {
  std::vector<const char*> args = {"sleep", "60"};
  const char* path = "/usr/bin/sleep";
  if (caps == Caps::kNone) {
    path = "/usr/bin/setpriv";
    args = {"setpriv", "--securebits", "+noroot,+noroot_locked,+no_setuid_fixup,+no_setuid_fixup_locked",
            "--bounding-set", "-all", "--inh-caps", "-all", "--", "/usr/bin/sleep", "60"};
  } else if (caps == Caps::kNobody) {
    path = "/usr/bin/setpriv";
    args = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/usr/bin/sleep", "60"};
  }
  std::vector<char*> argv;
  for (const char* arg : args) argv.push_back(const_cast<char*>(arg));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  const int spawned = posix_spawn(&pid_, path, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(spawned == 0, "posix_spawn sleep: ", std::strerror(spawned));
}

Sentinel::~Sentinel() {
  ::kill(pid_, SIGKILL);
  int status;
  ::waitpid(pid_, &status, 0);
}

bool Sentinel::alive() const {
  int status;
  return ::waitpid(pid_, &status, WNOHANG) == 0;
}

std::string probe_dir() {
  const std::string probe = binary("AASM_PROBE");
  return probe.substr(0, probe.rfind('/'));
}

std::string fault_tool() { return probe_dir() + "/aasm-fault"; }

bool have_bwrap() {
  if (::access(kBwrap, X_OK) == 0) return true;
  MESSAGE("skipped: ", kBwrap, " is absent (Debian's package bubblewrap; ./run deps installs it)");
  return false;
}

void run_as(uid_t uid, std::vector<std::string>& argv) {
  if (uid != 0)
    for (const char* a : {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"}) argv.push_back(a);
}

}  // namespace aasm::ktest
