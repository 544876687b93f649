// Shared pieces of the kernel tests: temp dirs, running binaries with their
// output captured, and writing + compiling policies with the real aasmc.
#pragma once

#include <doctest/doctest.h>

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aasm::ktest {

// The outcome of one process: exit_code when it exited, signal when killed.
struct Run {
  pid_t pid = -1;  // the process run (for a launch: the launcher)
  int exit_code = -1;
  int signal = 0;
  std::string out;
  std::string err;
};

// This process's cgroup directory in the v1 hierarchy of `controller`, from
// /proc/self/cgroup (a launcher it starts is in the same one); empty when
// there is no such hierarchy.
std::string own_v1_cgroup(const std::string& controller);

// The run's group a launcher made beneath `root` (cgroup::unique_run_name():
// "aasm-<its pid>-<random>"), as "/name"; empty when there is none.
std::string run_group_of(const std::string& root, pid_t launcher);

// A binary's path from the environment meson test sets (AASMC, ...).
std::string binary(const char* variable);

// Runs argv (argv[0] a path) with posix_spawn, stdin from /dev/null.
Run run(const std::vector<std::string>& argv, const std::string& cwd = "");

// Runs `body` in a forked copy of this process, stdin from /dev/null, its
// stdout and stderr captured; its return value is the exit status. The body
// must not use doctest (a copy of the test process reports nothing).
Run run_forked(const std::function<int()>& body);

// A fresh directory under `base` (/tmp unless given), removed with its
// contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& base = "/tmp");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// Kills and reaps the forked child `pid` at scope exit unless released: a
// failed REQUIRE must not leave a stopped launcher and its command behind,
// holding the test binary's stdout (the test runner would wait on it until
// its timeout).
class ReapOnExit {
 public:
  explicit ReapOnExit(pid_t pid) : pid_(pid) {}
  ~ReapOnExit();
  ReapOnExit(const ReapOnExit&) = delete;
  ReapOnExit& operator=(const ReapOnExit&) = delete;
  void release() { pid_ = -1; }

 private:
  pid_t pid_;
};

void write_file(const std::string& path, std::string_view content, unsigned mode = 0644);
std::string read_file(const std::string& path);
// A /proc file of a process that may end meanwhile: nothing where it cannot
// be opened or read (a read of a gone process's file fails with ESRCH, which
// std::ifstream turns into an exception from its iterator).
std::optional<std::string> read_proc_file(const std::string& path);
bool exists(const std::string& path);
void make_dir(const std::string& path);

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The `file:line:col: kind: message` lines of aasmc's diagnostics, with the
// file name removed, and the `aasmc: kind: message` lines of diagnostics no
// place in a file is to blame for; source lines and carets left out (the
// goldens compare these).
std::vector<std::string> diagnostic_lines(const std::string& text, const std::string& file);

// A YAML flow list of quoted strings: ["a", "b"].
std::string flow_list(const std::vector<std::string>& items);

// The policy shape (docs/policy-language.md) the kernel tests need; yaml()
// renders it.
struct Policy {
  std::vector<std::string> read, write, execute;
  std::string default_action = "kill";
  std::vector<std::string> syscalls;
  std::string yaml() const;
};

// Writes DIR/NAME.yaml, compiles it to DIR/NAME.bin (the compile must
// succeed) and returns the plan's path.
std::string compile(const TempDir& dir, const Policy& policy, const std::string& name = "plan");

// The same for a policy document whose spec body (indented by two) is `spec`.
std::string compile_spec(const TempDir& dir, const std::string& name, const std::string& spec);

// A cascade (docs/policy-language.md#cascades): one file DIR/NAME.yaml
// holding a document per spec body, tiers broad to narrow (org, team,
// agent, run), compiled to DIR/NAME.bin (the compile must succeed).
std::string compile_cascade(const TempDir& dir, const std::string& name, const std::vector<std::string>& specs);

// aasm-launch PLAN -- COMMAND..., from `cwd` when given.
// Also checks that the launcher left no cgroup of its run behind.
Run launch(const std::string& plan, const std::vector<std::string>& command, const std::string& cwd = "");
// aasm-launch PLAN -- aasm-probe ARGS..., from `cwd` when given.
Run probe(const std::string& plan, const std::vector<std::string>& args, const std::string& cwd = "");

// A `sleep 60` the test starts and kills (by its pid) at scope exit: a
// process outside every sandbox. A capless one runs through setpriv
// (util-linux) with every capability set emptied and the root exemptions
// locked off, so a capless command may inspect it where Landlock does not
// forbid it: the control for the /proc and ptrace tests. A nobody one runs
// as uid and gid 65534, for tests of an unprivileged launcher.
class Sentinel {
 public:
  enum class Caps { kRoot, kNone, kNobody };
  explicit Sentinel(Caps caps = Caps::kRoot);
  ~Sentinel();
  Sentinel(const Sentinel&) = delete;
  Sentinel& operator=(const Sentinel&) = delete;
  pid_t pid() const { return pid_; }
  std::string id() const { return std::to_string(pid_); }
  // Still running (not exited, not killed).
  bool alive() const;

 private:
  pid_t pid_ = -1;
};

// The directory aasm-probe was built in (policies allow executing from it).
std::string probe_dir();
// aasm-fault (tests/probe/fault.c), built beside the probe.
std::string fault_tool();

// The host's bubblewrap, for the bwrap backend's tests; have_bwrap() says
// why a test skips where it is absent.
inline constexpr const char* kBwrap = "/usr/bin/bwrap";
bool have_bwrap();

// Appends to `argv` what runs the rest as `uid`: nothing for root, setpriv
// (util-linux) to uid and gid 65534 without groups otherwise.
void run_as(uid_t uid, std::vector<std::string>& argv);

}  // namespace aasm::ktest

// Checks a finished run: it exited (not killed) with `code`, printing
// exactly `stdout_text`. A macro so failures point at the test's line.
#define CHECK_RUN(run_expr, code, stdout_text)         \
  do {                                                 \
    const ::aasm::ktest::Run& run_ = (run_expr);       \
    INFO("stderr: ", run_.err);                        \
    CHECK(run_.signal == 0);                           \
    CHECK(run_.exit_code == (code));                   \
    CHECK(run_.out == std::string(stdout_text));       \
  } while (0)
