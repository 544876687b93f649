// The run's cgroup: a memory ceiling with swap off, a task ceiling and a CPU
// quota for the whole confined tree, the kernel's own event counters for what
// happened, and a cleanup that kills every task, proves the groups empty and
// removes them.
//
// Where: cgroup v2 when the launcher's own v2 cgroup already delegates every
// controller the limits need (its cgroup.subtree_control lists them);
// otherwise the v1 hierarchies (memory, pids, cpu) of a hybrid host. Groups
// are created only beneath the launcher's own cgroup of each hierarchy, as
// read from /proc/self/cgroup; nothing else is ever written, and only tasks
// listed in the run's own groups are ever signalled.
//
// A RunCgroup's destructor does not clean up: a cleanup that can fail must be
// asked for and its result reported (kill_and_remove).
//
// This file is the run's groups' life: created, limited, entered, counted,
// emptied and removed. What the host offers is found in cgroup_host.h.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "supervisor/cgroup_sweep.h"

namespace aasm::cgroup {

struct Limits {
  std::optional<uint64_t> memory_bytes;    // memory ceiling
  std::optional<uint64_t> swap_bytes;      // 0 = swap off (v1: memory.memsw.limit_in_bytes; v2: memory.swap.max)
  std::optional<uint64_t> pids;            // task ceiling of the whole tree
  std::optional<uint64_t> cpu_millicores;  // CPU quota: 1500 = 1.5 cores (v1: cpu.cfs_quota_us/period; v2: cpu.max)
};

enum class Version { kV1, kV2 };
const char* version_name(Version version);

// Counters the kernel keeps for the run's groups. A counter that could not be
// read is named in `unreadable` instead of being reported as 0.
struct Events {
  uint64_t oom_kills = 0;      // v1: memory.oom_control "oom_kill"; v2: memory.events "oom_kill"
  uint64_t pids_max_hits = 0;  // pids.events "max": forks refused by the task ceiling
  std::vector<std::string> unreadable;
};

// complete only when every group was proven empty and removed; otherwise
// every residual is named ("pid 123 in /sys/fs/cgroup/pids/...", "cgroup dir
// ... not removed: EBUSY").
struct Cleanup {
  bool complete = false;
  std::vector<std::string> residuals;
};

// One limit as written and as the kernel reads it back (it may round, e.g.
// memory to whole pages): the basis for calling the limit measured.
struct Knob {
  std::string path;
  std::string written;
  std::string read_back;
};

// Exited tasks stay charged to pids.current until their parent reaps them,
// so a group is not proven empty before then. Orphans go to init (which may
// be slow: about 1.8 s on a Firecracker guest) or to the nearest child
// subreaper; a supervisor that is a subreaper must reap them itself.
enum class Reap {
  kNone,         // reap nothing: the caller's exit statuses stay untouched
  kSignalled,    // waitpid(pid, WNOHANG) each pid this cleanup signalled (those that are the caller's children)
  kAllChildren,  // waitpid(-1, WNOHANG): for a subreaper supervisor that has already collected its command's status
};

struct KillOptions {
  // Total time for killing, waiting for emptiness and removing.
  std::chrono::milliseconds deadline{5000};
  Reap reap = Reap::kNone;
};

// A name for a new run's groups: "aasm-<pid>-<16 hex digits>". The pid says
// which launcher made it; the random part keeps a group left behind by a
// launcher killed together with its janitor (SIGKILL of both, the OOM
// killer) from refusing every later launcher that is given the same pid.
std::string unique_run_name();

class RunCgroup {
 public:
  // `name` must be unique per run (unique_run_name()); it becomes the directory
  // name in every hierarchy. Refuses, naming what is missing and the remedy,
  // when a controller a limit needs is unavailable, the launcher's own cgroup
  // cannot be found, or a group cannot be created; nothing is left behind.
  static Result<RunCgroup> create(const Limits& limits, const std::string& name);
  // The same with the version chosen by the caller (tests, or a plan that
  // insists on one).
  static Result<RunCgroup> create(const Limits& limits, const std::string& name, Version version);

  RunCgroup(RunCgroup&& other) noexcept;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup();  // closes descriptors only; the groups stay

  Version version() const { return version_; }

  // Moves a process (every thread of it) into the run's group(s): every
  // hierarchy's cgroup.procs on v1, the one cgroup.procs on v2.
  Status add(pid_t pid);

  // A directory descriptor for clone3(CLONE_INTO_CGROUP) on v2; -1 on v1.
  int v2_directory_fd() const;

  // Every v1 group's `tasks` file (v2: cgroup.procs), opened for writing now
  // (close-on-exec), for a child that moves itself in with place_self() as
  // its first step, while it is still its only thread: v1 has no
  // CLONE_INTO_CGROUP. The kernel checks the opener's credentials, so the
  // move works from a new user namespace too. The caller closes them.
  Result<std::vector<int>> open_placement_files() const;

  // The kernel's counters, read now.
  Events events() const;

  // One SIGKILL to every task the run's groups (and groups beneath them)
  // list now (a deadline or an output limit ends the run);
  // kill_and_remove() afterwards proves the end.
  void kill_all() const;

  // Kills every task of every group (and of any group the run made beneath
  // them), waits until every group is proven empty, removes them deepest
  // first, and reports what, if anything, remains. Bounded by the deadline.
  // The janitor empties them by the same rules (cgroup_sweep.h).
  Cleanup kill_and_remove(const KillOptions& options = {});

  // The groups as the cleanup walks them, for the janitor to hold a copy.
  const sweep::Targets& sweep_targets() const { return *targets_; }

  // The directories created, for reports.
  std::vector<std::string> paths() const;
  // Every limit written, with the kernel's read-back.
  const std::vector<Knob>& knobs() const { return knobs_; }
  // Things a report should say that are not errors (e.g. swap off because
  // the host has no swap at all, memory.memsw.* being absent).
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Group {
    std::string controller;  // "memory", "pids", "cpu", "freezer" (v1); "" (v2)
    std::string path;        // the directory, e.g. /sys/fs/cgroup/pids/aasm-123-0f1e2d3c4b5a6978
    std::string hierarchy_path;  // the same group as /proc/<pid>/cgroup names it: /aasm-123-0f1e2d3c4b5a6978
    int fd = -1;                 // the directory, opened (its files are opened relative to it)
  };
  RunCgroup() = default;
  static Result<RunCgroup> create_impl(const Limits& limits, const std::string& name, std::optional<Version> version);
  Status write_limits(const Limits& limits);
  // `absent`, when given, is set instead of failing if the knob does not exist.
  Status write_knob(const Group& group, const std::string& file, const std::string& value, uint64_t page_round,
                    bool* absent = nullptr);
  void remove_created_dirs();
  void close_directories();

  Version version_ = Version::kV1;
  std::vector<Group> groups_;
  // The same groups, in fixed arrays (8 KiB: not copied with each move).
  std::unique_ptr<sweep::Targets> targets_ = std::make_unique<sweep::Targets>();
  std::vector<Knob> knobs_;
  std::vector<std::string> notes_;
  bool removed_ = false;
};

// Writes "0" (the calling thread) into each descriptor of
// open_placement_files(), so the caller and all it starts are counted in the
// run's groups. Call it while the process has one thread: on v1 `tasks`
// moves that thread alone, and the kernel moves a thread that moves itself
// without write-locking the global cgroup_threadgroup_rwsem, whose writer
// waits for an RCU grace period (kernel commit 9a3284fad42f; 5 to 20 ms on
// the development host, against 0.03 ms). Returns 0 or errno. Raw system
// calls only: async-signal-safe, and no errno written.
int place_self(const int* fds, size_t count);

// What this host can give the launcher, without creating anything: which
// controllers, where, whether the launcher may create groups there
// (cgroup_host.cpp).
std::string describe_host_support();

}  // namespace aasm::cgroup
