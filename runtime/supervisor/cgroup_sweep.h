// Emptying and removing the run's cgroups: the one cleanup, called by the
// supervisor at the end of every run (RunCgroup::kill_and_remove) and by the
// janitor when the supervisor was killed before it could (janitor.h). Both
// follow the same rules:
//
//   1. kill: every task that cgroup.procs lists in every directory of every
//      group's tree (the run's groups and any the command made beneath
//      them), each pinned with pidfd_open and signalled through the pidfd
//      only if /proc/<pid>/cgroup still shows it in that very group;
//   2. prove empty: no cgroup.procs listed a task, pids.current is 0
//      (exited tasks stay charged until reaped), and on v2 cgroup.events
//      says populated 0. When the kernel's count already says 0 before
//      rule 1 (the usual end of a run), each group is removed at once:
//      the kernel refuses to remove a group with a task or a subgroup, and
//      a group it refuses goes through the rules from 1;
//   3. if not, stop new tasks, once: on v2, cgroup.kill; on v1, pids.max = 0
//      in the pids group (hierarchical: no task of the tree can fork, so
//      the next pass finds every task), or, without a pids group, freeze
//      the freezer group, kill as in 1, thaw, and the kills land;
//   4. repeat 1-2 until the groups are proven empty or time is up;
//   5. remove every directory, deepest first, EBUSY retried.
//
// The janitor shares the supervisor's memory (clone(CLONE_VM)) and acts when
// the supervisor may have died anywhere, holding any lock: it may not
// allocate, nor write the errno it shares. So this file makes raw system
// calls only (kernel/raw_syscall.h), into fixed buffers on the stack, and
// takes what it walks as plain arrays (Targets). What only the supervisor
// does, reporting residuals as text and reaping the tasks it signalled, it
// does in its Observer.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string_view>

namespace aasm::cgroup::sweep {

// The run's groups as the cleanup needs them, in fixed arrays: a process
// that may not allocate can hold a copy.
struct Targets {
  static constexpr int kMaxGroups = 8;
  static constexpr size_t kPathBytes = 512;
  struct Group {
    char dir[kPathBytes];             // /sys/fs/cgroup/pids/aasm-123-0f1e2d3c4b5a6978
    char hierarchy_path[kPathBytes];  // /aasm-123-0f1e2d3c4b5a6978: the same group as /proc/<pid>/cgroup names it
    char controller[16];              // v1: "pids", "memory", "cpu", "freezer"; v2: ""
  };
  bool v2 = false;
  int count = 0;
  Group groups[kMaxGroups];

  // False (and nothing added) when the group does not fit.
  bool add(std::string_view dir, std::string_view hierarchy_path, std::string_view controller);
};

// Something that keeps the groups from being proven empty or removed.
struct Residual {
  enum class Kind {
    kTask,        // `value`: a pid that `dir`'s cgroup.procs lists
    kUnreaped,    // `value`: `dir`'s pids.current (-1: unreadable) although no cgroup.procs lists a task
    kPopulated,   // `dir`'s cgroup.events does not say populated 0 (v2)
    kNotRemoved,  // `value`: the errno of `dir`'s rmdir
  };
  Kind kind;
  const char* dir;
  long value;
};

// The caller's side of a sweep. Called in the sweeping process: the
// janitor's observer must obey the same rules as this file (it uses this
// base, which does nothing).
class Observer {
 public:
  virtual ~Observer() = default;
  // A pass over the groups begins: residuals reported before it are stale.
  virtual void pass_begins() {}
  virtual void residual(const Residual&) {}
  // `pid` was sent SIGKILL (it was in the run's groups).
  virtual void signalled(pid_t) {}
  // The kill pass is over (the supervisor reaps here).
  virtual void pass_done() {}
};

// Rules 1-5 within `timeout_ms` in all. True when every group was proven
// empty and every directory removed; otherwise the last pass's residuals
// and those of the removal were reported to `observer`.
bool empty_and_remove(const Targets& targets, long timeout_ms, Observer& observer);

// Rule 1 alone, once, without freezing: one SIGKILL to every task the
// groups' trees list now (a deadline or an output limit ends the run);
// nothing when the kernel's count of the tree's tasks is already 0.
void kill_listed(const Targets& targets, Observer& observer);

// Writes `value` to a cgroup file with one write(2), as cgroup files take
// one value per write: 0 or -errno.
long write_value(const char* path, const char* value);

// Reads a small file of one value or a few keyed lines (a cgroup knob,
// pids.events, /proc/<pid>/cgroup) into `buffer`, NUL-terminated: its
// length, or -errno. A length of size - 1 may mean the file was longer.
long read_small(const char* path, char* buffer, size_t size);
// The same from an open descriptor, from offset 0 (pread: after a write too).
long read_small_fd(int fd, char* buffer, size_t size);

// The number after "key " on a line of `text` (memory.events,
// memory.oom_control, pids.events, cgroup.events); -1 when there is none.
long keyed_value(const char* text, const char* key);

// Calls visit(dir, context) for every directory of the tree at `root`
// (nothing when it does not exist), parents first, as the sweep walks them.
void each_directory(const char* root, void (*visit)(const char* dir, void* context), void* context);

}  // namespace aasm::cgroup::sweep
