#include "supervisor/cgroup.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <set>

#include "kernel/raw_syscall.h"
#include "supervisor/cgroup_host.h"

namespace aasm::cgroup {
namespace {

// 0 or errno (sweep::write_value: one write(2) of the whole value).
int write_file(const std::string& path, const std::string& value) {
  return int(-sweep::write_value(path.c_str(), value.c_str()));
}

std::vector<std::string> needed_controllers(const Limits& limits) {
  std::vector<std::string> needed;
  if (limits.memory_bytes || limits.swap_bytes) needed.push_back(kMemory);
  if (limits.pids) needed.push_back(kPids);
  if (limits.cpu_millicores) needed.push_back(kCpu);
  return needed;
}

}  // namespace

const char* version_name(Version version) { return version == Version::kV2 ? "v2" : "v1"; }

std::string unique_run_name() {
  uint64_t nonce = 0;
  // Never blocks: a pool not yet initialised (early boot) answers EAGAIN,
  // and the clock is unique enough for one pid.
  if (::getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != sizeof nonce) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    nonce = uint64_t(now.tv_sec) * 1000000000u + uint64_t(now.tv_nsec);
  }
  char name[48];
  std::snprintf(name, sizeof name, "aasm-%d-%016llx", int(::getpid()), static_cast<unsigned long long>(nonce));
  return name;
}

RunCgroup::RunCgroup(RunCgroup&& other) noexcept
    : version_(other.version_),
      groups_(std::move(other.groups_)),
      targets_(std::move(other.targets_)),
      knobs_(std::move(other.knobs_)),
      notes_(std::move(other.notes_)),
      removed_(other.removed_) {}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    close_directories();
    version_ = other.version_;
    groups_ = std::move(other.groups_);
    targets_ = std::move(other.targets_);
    knobs_ = std::move(other.knobs_);
    notes_ = std::move(other.notes_);
    removed_ = other.removed_;
  }
  return *this;
}

RunCgroup::~RunCgroup() { close_directories(); }

void RunCgroup::close_directories() {
  for (Group& g : groups_)
    if (g.fd >= 0) ::close(std::exchange(g.fd, -1));
}

int RunCgroup::v2_directory_fd() const { return version_ == Version::kV2 && !groups_.empty() ? groups_.front().fd : -1; }

Result<RunCgroup> RunCgroup::create(const Limits& limits, const std::string& name) {
  return create_impl(limits, name, std::nullopt);
}

Result<RunCgroup> RunCgroup::create(const Limits& limits, const std::string& name, Version version) {
  return create_impl(limits, name, version);
}

Result<RunCgroup> RunCgroup::create_impl(const Limits& limits, const std::string& name,
                                         std::optional<Version> wanted) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos || name.size() > 200 ||
      name.find('\n') != std::string::npos)
    return make_error("cgroup: the run's cgroup name '" + name + "' is not a single path component");
  if (limits.cpu_millicores && *limits.cpu_millicores == 0)
    return make_error("cgroup: a CPU quota of 0 millicores would never let the command run");
  if (limits.pids && *limits.pids == 0) return make_error("cgroup: a task ceiling of 0 would not let the command start");

  const Host host = discover_host();
  if (!host.problem.empty()) return make_error("cgroup: " + host.problem);
  const std::vector<std::string> needed = needed_controllers(limits);

  const bool v2_fits = host.v2 && host.v2->usable() &&
                       std::all_of(needed.begin(), needed.end(), [&](const std::string& c) { return host.v2->has(c); });
  const bool v1_fits = std::all_of(needed.begin(), needed.end(), [&](const std::string& c) {
    const Hierarchy* h = host.v1_for(c);
    return h && h->usable();
  });
  Version version;
  if (wanted) {
    version = *wanted;
    if ((version == Version::kV2 && !v2_fits) || (version == Version::kV1 && !v1_fits)) {
      std::string missing;
      if (version == Version::kV2 && !(host.v2 && host.v2->usable()))
        missing = host.v2 ? host.v2->problem : "no cgroup v2 hierarchy is mounted";
      for (const std::string& c : needed) {
        const bool ok = version == Version::kV2 ? host.v2 && host.v2->has(c) : host.v1_for(c) && host.v1_for(c)->usable();
        if (!ok)
          missing += (missing.empty() ? "" : "; ") +
                     why_unavailable(host, c, version == Version::kV2, version == Version::kV1);
      }
      return make_error(std::string("cgroup: cgroup ") + version_name(version) + " cannot hold this run's limits: " +
                        missing +
                        (version == Version::kV2
                             ? ". Remedy: run aasm-launch in a leaf of a v2 subtree delegated to it whose "
                               "cgroup.subtree_control enables these controllers, or let it use v1"
                             : ". Remedy: mount the v1 hierarchies writable by the launcher, or let it use v2"));
    }
  } else if (v2_fits) {
    version = Version::kV2;
  } else if (v1_fits) {
    version = Version::kV1;
  } else {
    std::string missing;
    for (const std::string& c : needed) {
      const bool v2_ok = host.v2 && host.v2->usable() && host.v2->has(c);
      const Hierarchy* v1 = host.v1_for(c);
      if (!v2_ok && !(v1 && v1->usable())) missing += (missing.empty() ? "" : "; ") + why_unavailable(host, c);
    }
    if (missing.empty()) missing = "the controllers are split between v1 and v2, and one run uses one version";
    return make_error("cgroup: the run's limits need controllers this launcher cannot use: " + missing +
                      ". Remedy: run aasm-launch in a cgroup v2 subtree delegated to it with these controllers "
                      "enabled in its cgroup.subtree_control (e.g. systemd-run -p Delegate=yes, then move the "
                      "launcher into a leaf of that subtree), or on a host that mounts the v1 hierarchies writable "
                      "by the launcher; or drop the limits from the policy");
  }

  RunCgroup run;
  run.version_ = version;
  auto make_group = [&](const Hierarchy& h, const std::string& controller) -> Status {
    const std::string dir = h.own_dir + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) {
      const int error = errno;
      if (error == EEXIST)
        return make_error("cgroup: " + dir + " exists already; a run's cgroup must be new (the name must be unique "
                          "per run), and one this launcher did not create is never adopted");
      return make_error("cgroup: cannot create " + dir + ": " + errno_text(error) +
                        (error == EACCES || error == EPERM || error == EROFS
                             ? "; the launcher needs write access to its own cgroup (run as root, or delegate it)"
                             : ""));
    }
    // Every later file of the group is opened relative to this descriptor:
    // a kernfs path walk from / costs about 2 us per file here (and v2's
    // clone3 takes it as is).
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    run.groups_.push_back({controller, dir, (h.own_path == "/" ? "" : h.own_path) + "/" + name, fd});
    if (fd < 0) return make_error("cgroup: cannot open " + dir + ": " + errno_text(errno));
    run.targets_->v2 = version == Version::kV2;
    if (!run.targets_->add(dir, run.groups_.back().hierarchy_path, controller))
      return make_error("cgroup: " + dir + " is too long a path for the run's cleanup (at most " +
                        std::to_string(sweep::Targets::kPathBytes - 1) + " bytes)");
    return Ok{};
  };
  auto fail = [&](const Error& error) -> Result<RunCgroup> {
    run.remove_created_dirs();
    return error;
  };

  if (version == Version::kV2) {
    if (Status made = make_group(*host.v2, ""); !made) return fail(made.error());
  } else {
    // pids first: it counts every task of the tree, so cleanup tracks the
    // tree through it even when no task ceiling is asked for, and stops a
    // fork bomb while it is being killed (pids.max = 0 is hierarchical).
    // Only without a usable pids hierarchy does freezer stop forks instead:
    // one hierarchy fewer per launch, its mkdir and rmdir the dearest part.
    std::vector<std::string> controllers = needed;
    const auto usable = [&](const char* controller) {
      const Hierarchy* h = host.v1_for(controller);
      return h && h->usable();
    };
    const char* stopper = usable(kPids) ? kPids : kFreezer;
    if (std::find(controllers.begin(), controllers.end(), stopper) == controllers.end() && usable(stopper))
      controllers.push_back(stopper);
    std::stable_sort(controllers.begin(), controllers.end(),
                     [](const std::string& a, const std::string& b) { return a == kPids && b != kPids; });
    if (controllers.empty())
      return make_error("cgroup: no v1 hierarchy (pids, memory, cpu, freezer) is usable to track the run: " +
                        why_unavailable(host, kPids));
    for (const std::string& controller : controllers) {
      const Hierarchy* h = host.v1_for(controller);
      // cpu and cpuacct may share one hierarchy; memory, pids, cpu never share with each other here.
      bool shared = false;
      for (const Group& g : run.groups_) shared = shared || g.path == h->own_dir + "/" + name;
      if (shared) continue;
      if (Status made = make_group(*h, controller); !made) return fail(made.error());
    }
  }
  if (Status written = run.write_limits(limits); !written) return fail(written.error());
  return run;
}

Status RunCgroup::write_knob(const Group& group, const std::string& file, const std::string& value,
                             uint64_t page_round, bool* absent) {
  const std::string path = group.path + "/" + file;
  // Written and read back through one descriptor: a launch writes five.
  const int fd = ::openat(group.fd, file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && absent) {  // a knob the kernel may lack (swap accounting): the caller decides
    *absent = true;
    return Ok{};
  }
  // The memory controller's limit write fails EINTR whenever a signal is
  // pending on the writing thread, before it changes anything (v1
  // mem_cgroup_resize_max; runc retries for the same reason): written again.
  ssize_t n = -1;
  for (int attempt = 0; fd >= 0 && attempt < 100; ++attempt) {
    n = ::write(fd, value.data(), value.size());
    if (n >= 0 || errno != EINTR) break;
  }
  if (n != ssize_t(value.size())) {
    const int error = n < 0 ? errno : EIO;
    if (fd >= 0) ::close(fd);
    return make_error("cgroup: writing '" + value + "' to " + path + " failed: " + errno_text(error));
  }
  char buffer[256];
  n = sweep::read_small_fd(fd, buffer, sizeof buffer);
  ::close(fd);
  if (n < 0 || size_t(n) == sizeof buffer - 1)
    return make_error("cgroup: " + path + " cannot be read back after writing '" + value + "'");
  const std::string read_back = trim(std::string(buffer, size_t(n)));
  bool same = read_back == value;
  if (!same && page_round) {
    // The memory controller keeps whole pages: it rounds the limit down.
    const uint64_t wanted = std::strtoull(value.c_str(), nullptr, 10);
    same = std::strtoull(read_back.c_str(), nullptr, 10) == wanted / page_round * page_round;
  }
  if (!same)
    return make_error("cgroup: after writing '" + value + "' to " + path + " the kernel holds '" + read_back + "'");
  knobs_.push_back({path, value, read_back});
  return Ok{};
}

namespace {

// The launcher's nice value, or 0 where it cannot be read.
int launcher_nice() {
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, 0);
  return errno == 0 ? nice : 0;
}

// The kernel's weight of each nice value, -20 to 19 (kernel/sched/core.c
// sched_prio_to_weight): what a v1 group's cpu.shares means.
constexpr uint32_t kNiceWeights[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904,
    3906,  3121,  2501,  1991,  1586,  1277,  1024,  820,   655,   526,   423,   335,  272,  215,
    172,   137,   110,   87,    70,    56,    45,    36,    29,    23,    18,    15};

}  // namespace

Status RunCgroup::write_limits(const Limits& limits) {
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  auto dir_of = [&](const char* controller) -> const Group* {
    for (const Group& g : groups_)
      if (version_ == Version::kV2 || g.controller == controller) return &g;
    return nullptr;
  };
  // The CPU quota: `millicores` thousandths of a CPU per period. The kernel
  // wants a quota of at least 1 ms, so small quotas get a 1 s period.
  auto cpu_quota = [&](uint64_t millicores) {
    const uint64_t period = millicores * 100 >= 1000 ? 100000 : 1000000;
    return std::pair<uint64_t, uint64_t>{millicores * period / 1000, period};
  };
  // Read only when a swap knob is absent.
  const auto swap_off_anyway = [] { return !host_has_swap(); };
  // A new cpu group competes with the launcher's siblings at nice 0's
  // weight, whatever the command's nice value: `nice -n 10 aasm-launch`
  // would hand the command a nice-0 share of the machine. The group takes
  // the launcher's weight instead (a new group has nice 0's already).
  const int nice = limits.cpu_millicores ? launcher_nice() : 0;

  if (version_ == Version::kV2) {
    const Group& dir = *dir_of("");
    if (limits.memory_bytes)
      if (Status s = write_knob(dir, "memory.max", std::to_string(*limits.memory_bytes), page); !s) return s;
    if (limits.swap_bytes) {
      bool absent = false;
      if (Status s = write_knob(dir, "memory.swap.max", std::to_string(*limits.swap_bytes), page, &absent); !s)
        return s;
      if (!absent) {
        // written and read back
      } else if (*limits.swap_bytes == 0 && swap_off_anyway()) {
        notes_.push_back("swap: " + dir.path + "/memory.swap.max is absent (no swap accounting), but the host has no "
                         "swap configured (/proc/swaps lists none): swap is off anyway");
      } else {
        return make_error("cgroup: a swap ceiling was asked for but " + dir.path +
                          "/memory.swap.max is absent (the kernel does not account swap) while the host has swap; "
                          "remedy: enable swap accounting (CONFIG_MEMCG_SWAP, swapaccount=1) or turn swap off");
      }
    }
    if (limits.pids)
      if (Status s = write_knob(dir, "pids.max", std::to_string(*limits.pids), 0); !s) return s;
    if (limits.cpu_millicores) {
      const auto [quota, period] = cpu_quota(*limits.cpu_millicores);
      if (Status s = write_knob(dir, "cpu.max", std::to_string(quota) + " " + std::to_string(period), 0); !s) return s;
      if (nice != 0)
        if (Status s = write_knob(dir, "cpu.weight.nice", std::to_string(nice), 0); !s) return s;
    }
    return Ok{};
  }

  if (const Group* dir = dir_of(kMemory)) {
    if (limits.memory_bytes)
      if (Status s = write_knob(*dir, "memory.limit_in_bytes", std::to_string(*limits.memory_bytes), page); !s) return s;
    if (limits.swap_bytes) {
      // v1 has no swap-only knob: memsw limits memory plus swap together.
      if (!limits.memory_bytes)
        return make_error("cgroup: a swap ceiling without a memory ceiling cannot be expressed on cgroup v1 "
                          "(memory.memsw.limit_in_bytes bounds memory plus swap); set a memory ceiling too");
      // memsw must not be below the memory limit, which is already written.
      const uint64_t memsw = *limits.memory_bytes + *limits.swap_bytes;
      bool absent = false;
      if (Status s = write_knob(*dir, "memory.memsw.limit_in_bytes", std::to_string(memsw), page, &absent); !s)
        return s;
      if (!absent) {
        // written and read back
      } else if (*limits.swap_bytes == 0 && swap_off_anyway()) {
        notes_.push_back("swap: " + dir->path + "/memory.memsw.* is absent (swap accounting is off), but the host has no "
                         "swap configured (/proc/swaps lists none): swap is off anyway");
      } else {
        return make_error("cgroup: a swap ceiling was asked for but " + dir->path +
                          "/memory.memsw.limit_in_bytes is absent (swap accounting is off) while the host has swap; "
                          "remedy: boot with swapaccount=1, turn swap off (swapoff -a), or use cgroup v2");
      }
    }
  }
  if (limits.pids)
    if (Status s = write_knob(*dir_of(kPids), "pids.max", std::to_string(*limits.pids), 0); !s) return s;
  if (limits.cpu_millicores) {
    const Group& dir = *dir_of(kCpu);
    const auto [quota, period] = cpu_quota(*limits.cpu_millicores);
    if (Status s = write_knob(dir, "cpu.cfs_period_us", std::to_string(period), 0); !s) return s;
    if (Status s = write_knob(dir, "cpu.cfs_quota_us", std::to_string(quota), 0); !s) return s;
    if (nice != 0)
      if (Status s = write_knob(dir, "cpu.shares", std::to_string(kNiceWeights[nice + 20]), 0); !s) return s;
  }
  return Ok{};
}

void RunCgroup::remove_created_dirs() {
  close_directories();
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) ::rmdir(it->path.c_str());
  groups_.clear();
  targets_->count = 0;
}

Status RunCgroup::add(pid_t pid) {
  if (removed_) return make_error("cgroup: the run's cgroup has been removed");
  for (const Group& g : groups_)
    if (int error = write_file(g.path + "/cgroup.procs", std::to_string(pid)))
      return make_error("cgroup: moving pid " + std::to_string(pid) + " into " + g.path + " failed: " +
                        errno_text(error));
  return Ok{};
}

Result<std::vector<int>> RunCgroup::open_placement_files() const {
  const char* file = version_ == Version::kV2 ? "/cgroup.procs" : "/tasks";
  std::vector<int> fds;
  for (const Group& g : groups_) {
    const int fd = ::openat(g.fd, file + 1, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      const int error = errno;
      for (int open_fd : fds) ::close(open_fd);
      return make_error("cgroup: cannot open " + g.path + file + ": " + errno_text(error));
    }
    fds.push_back(fd);
  }
  return fds;
}

int place_self(const int* fds, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const long n = raw::syscall4(SYS_write, fds[i], long("0"), 1);
    if (n != 1) return n < 0 ? int(-n) : EIO;
  }
  return 0;
}

Events RunCgroup::events() const {
  Events events;
  bool memory = false, pids = false;
  for (const Group& g : groups_) {
    const auto has = [&](const char* file) { return ::faccessat(g.fd, file, F_OK, 0) == 0; };
    const bool has_memory = version_ == Version::kV2 ? has("memory.events") : g.controller == kMemory;
    const bool has_pids = version_ == Version::kV2 ? has("pids.events") : g.controller == kPids;
    // v2 counters are hierarchical; v1 counts in the group where the event
    // happened, so a v1 tree is summed.
    if (!has_memory && !has_pids) continue;
    std::vector<std::string> dirs;
    if (version_ == Version::kV2)
      dirs.push_back(g.path);
    else
      sweep::each_directory(
          g.path.c_str(), [](const char* dir, void* out) { static_cast<std::vector<std::string>*>(out)->push_back(dir); },
          &dirs);
    // `file` of `dir` (the group or a group beneath it), read through the
    // group's descriptor.
    const auto counter = [&](const std::string& dir, const char* file, const char* key) {
      const std::string relative = "." + dir.substr(g.path.size()) + "/" + file;
      char text[1024];
      const int fd = ::openat(g.fd, relative.c_str(), O_RDONLY | O_CLOEXEC);
      const long n = fd < 0 ? -1 : sweep::read_small_fd(fd, text, sizeof text);
      if (fd >= 0) ::close(fd);
      return n >= 0 && size_t(n) < sizeof text - 1 ? sweep::keyed_value(text, key) : -1;
    };
    for (const std::string& dir : dirs) {
      if (has_memory) {
        memory = true;
        const char* file = version_ == Version::kV2 ? "memory.events" : "memory.oom_control";
        if (const long value = counter(dir, file, "oom_kill"); value >= 0) events.oom_kills += uint64_t(value);
        else events.unreadable.push_back("oom_kills: " + dir + "/" + file + " has no oom_kill counter");
      }
      if (has_pids) {
        pids = true;
        if (const long value = counter(dir, "pids.events", "max"); value >= 0) events.pids_max_hits += uint64_t(value);
        else events.unreadable.push_back("pids_max_hits: " + dir + "/pids.events has no max counter");
      }
    }
  }
  if (!memory) events.unreadable.push_back("oom_kills: the run has no memory group to count them");
  if (!pids) events.unreadable.push_back("pids_max_hits: the run has no pids group to count them");
  return events;
}

namespace {

// The supervisor's side of the sweep: what remains, worded for the report,
// and the reaping KillOptions asks for.
class Reporter final : public sweep::Observer {
 public:
  explicit Reporter(Reap reap) : reap_(reap) {}

  void pass_begins() override { last_pass_.clear(); }

  void residual(const sweep::Residual& r) override {
    const std::string dir = r.dir;
    switch (r.kind) {
      case sweep::Residual::Kind::kTask:
        last_pass_.push_back("pid " + std::to_string(r.value) + " in " + dir);
        break;
      case sweep::Residual::Kind::kUnreaped:
        last_pass_.push_back(dir + ": pids.current = " + (r.value < 0 ? "unreadable" : std::to_string(r.value)) +
                             " although cgroup.procs lists no task (exited tasks their parent has not reaped)");
        break;
      case sweep::Residual::Kind::kPopulated:
        last_pass_.push_back(dir + ": cgroup.events does not say populated 0");
        break;
      case sweep::Residual::Kind::kNotRemoved:
        removal_.push_back("cgroup dir " + dir + " not removed: " + errno_text(int(r.value)));
        break;
    }
  }

  void signalled(pid_t pid) override { signalled_.insert(pid); }

  void pass_done() override {
    if (reap_ == Reap::kSignalled)
      for (pid_t pid : signalled_) ::waitpid(pid, nullptr, WNOHANG);
    if (reap_ == Reap::kAllChildren)
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
  }

  // What kept the last pass from proving the groups empty (nothing once it
  // did), then what could not be removed.
  std::vector<std::string> residuals() const {
    std::vector<std::string> all = last_pass_;
    all.insert(all.end(), removal_.begin(), removal_.end());
    return all;
  }

 private:
  Reap reap_;
  std::set<pid_t> signalled_;
  std::vector<std::string> last_pass_, removal_;
};

}  // namespace

Cleanup RunCgroup::kill_and_remove(const KillOptions& options) {
  Reporter reporter(options.reap);
  const bool emptied = sweep::empty_and_remove(*targets_, long(options.deadline.count()), reporter);
  close_directories();
  removed_ = true;
  Cleanup cleanup;
  cleanup.residuals = reporter.residuals();
  cleanup.complete = emptied && cleanup.residuals.empty();
  return cleanup;
}

void RunCgroup::kill_all() const {
  sweep::Observer nothing_to_report;
  sweep::kill_listed(*targets_, nothing_to_report);
}

std::vector<std::string> RunCgroup::paths() const {
  std::vector<std::string> paths;
  for (const Group& g : groups_) paths.push_back(g.path);
  return paths;
}

}  // namespace aasm::cgroup
