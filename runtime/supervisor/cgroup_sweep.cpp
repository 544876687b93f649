#include "supervisor/cgroup_sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "kernel/raw_syscall.h"

namespace aasm::cgroup::sweep {
namespace {

using raw::syscall4;

// Bounds on what a sweep walks: the command may make groups of its own.
constexpr int kMaxDepth = 32;
constexpr int kMaxDirs = 4096;  // per group

// A path built in one buffer: a directory, to which a name is appended for
// a while and taken off again.
struct Path {
  char text[4096];
  size_t length = 0;

  bool set(const char* path) {
    length = 0;
    text[0] = 0;
    return push_raw(path, std::strlen(path));
  }
  // Appends "/name"; false (and nothing appended) when it does not fit.
  bool push(const char* name) {
    const size_t mark = length;
    if (push_raw("/", 1) && push_raw(name, std::strlen(name))) return true;
    pop(mark);
    return false;
  }
  void pop(size_t mark) {
    length = mark;
    text[mark] = 0;
  }

 private:
  bool push_raw(const char* part, size_t n) {
    if (length + n >= sizeof text) return false;
    std::memcpy(text + length, part, n);
    length += n;
    text[length] = 0;
    return true;
  }
};

long now_ms() {
  timespec now{};
  syscall4(SYS_clock_gettime, CLOCK_MONOTONIC, long(&now));
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

void pause_ms(long ms) {
  const timespec delay{0, ms * 1000 * 1000};
  syscall4(SYS_nanosleep, long(&delay), 0);
}

long open_file(const char* path, int flags) { return syscall4(SYS_openat, AT_FDCWD, long(path), flags | O_CLOEXEC); }
void close_fd(long fd) { syscall4(SYS_close, fd); }

}  // namespace

long read_small_fd(int fd, char* buffer, size_t size) {
  size_t used = 0;
  long result = 0;
  while (used < size - 1) {
    const size_t wanted = size - 1 - used;
    const long n = syscall4(SYS_pread64, fd, long(buffer + used), long(wanted), long(used));
    if (n == -EINTR) continue;
    if (n < 0) result = n;
    if (n <= 0) break;
    used += size_t(n);
    // These files are one seq_file record each: a read that returns less
    // than asked has returned all there is (a record larger than the
    // buffer fills it), so no second read to find the end of the file.
    if (size_t(n) < wanted) break;
  }
  buffer[used] = 0;
  return result < 0 ? result : long(used);
}

long read_small(const char* path, char* buffer, size_t size) {
  const long fd = open_file(path, O_RDONLY);
  if (fd < 0) return fd;
  const long n = read_small_fd(int(fd), buffer, size);
  close_fd(fd);
  return n;
}

long write_value(const char* path, const char* value) {
  const long fd = open_file(path, O_WRONLY);
  if (fd < 0) return fd;
  const long length = long(std::strlen(value));
  long n;
  do n = syscall4(SYS_write, fd, long(value), length);
  while (n == -EINTR);
  close_fd(fd);
  return n < 0 ? n : (n == length ? 0 : -EIO);
}

namespace {

// The same for the file `name` in the directory `dir`.
long read_small_in(Path& dir, const char* name, char* buffer, size_t size) {
  const size_t mark = dir.length;
  const long n = dir.push(name) ? read_small(dir.text, buffer, size) : -ENAMETOOLONG;
  dir.pop(mark);
  return n;
}
long write_value_in(Path& dir, const char* name, const char* value) {
  const size_t mark = dir.length;
  const long n = dir.push(name) ? write_value(dir.text, value) : -ENAMETOOLONG;
  dir.pop(mark);
  return n;
}

}  // namespace

long keyed_value(const char* text, const char* key) {
  const size_t key_length = std::strlen(key);
  for (const char* line = text; *line;) {
    if (std::strncmp(line, key, key_length) == 0 && line[key_length] == ' ') {
      long value = 0;
      for (const char* c = line + key_length + 1; *c >= '0' && *c <= '9'; ++c) value = value * 10 + (*c - '0');
      return value;
    }
    const char* end = std::strchr(line, '\n');
    if (!end) break;
    line = end + 1;
  }
  return -1;
}

namespace {

long leading_number(const char* text) {
  if (*text < '0' || *text > '9') return -1;
  long value = 0;
  for (const char* c = text; *c >= '0' && *c <= '9'; ++c) value = value * 10 + (*c - '0');
  return value;
}

enum class Kind { kGone, kLeaf, kMayHaveSubdirs };

// kernfs gives a directory 2 + its subdirectories as link count, so a group
// without subgroups needs no getdents of its many files. Anything else
// (another count, an error but ENOENT) is read.
Kind look_at(const char* dir) {
  struct stat st {};
  const long result = syscall4(SYS_newfstatat, AT_FDCWD, long(dir), long(&st), 0);
  if (result == -ENOENT || result == -ENOTDIR) return Kind::kGone;
  return result == 0 && st.st_nlink == 2 ? Kind::kLeaf : Kind::kMayHaveSubdirs;
}

// Calls visit(path) for every directory of the tree at `path` (none when it
// does not exist), parents first, or children first for removal.
template <class Visit>
void walk(Path& path, int depth, int& budget, bool children_first, Visit& visit) {
  if (budget <= 0) return;
  const Kind kind = look_at(path.text);
  if (kind == Kind::kGone) return;
  --budget;
  if (!children_first) visit(path);
  if (depth < kMaxDepth && kind == Kind::kMayHaveSubdirs) {
    const long fd = open_file(path.text, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
      alignas(dirent64) char entries[1024];
      for (long n; (n = syscall4(SYS_getdents64, fd, long(entries), sizeof entries)) > 0;) {
        for (long at = 0; at < n;) {
          const auto* entry = reinterpret_cast<const dirent64*>(entries + at);
          at += entry->d_reclen;
          if (entry->d_type != DT_DIR || std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0)
            continue;
          const size_t mark = path.length;
          if (!path.push(entry->d_name)) continue;  // too deep to name: its parent's rmdir reports it
          walk(path, depth + 1, budget, children_first, visit);
          path.pop(mark);
        }
      }
      close_fd(fd);
    }
  }
  if (children_first) visit(path);
}

template <class Visit>
void walk_tree(const char* root, bool children_first, Visit&& visit) {
  Path path;
  if (!path.set(root)) return;
  int budget = kMaxDirs;
  walk(path, 0, budget, children_first, visit);
}

char* append_number(char* out, unsigned long value) {
  char digits[24];
  int n = 0;
  do digits[n++] = char('0' + value % 10);
  while ((value /= 10) != 0);
  while (n > 0) *out++ = digits[--n];
  *out = 0;
  return out;
}

// Whether `name` is one of the comma-separated names in [begin, end).
bool list_has(const char* begin, const char* end, const char* name) {
  const size_t length = std::strlen(name);
  while (begin < end) {
    const char* comma = static_cast<const char*>(std::memchr(begin, ',', size_t(end - begin)));
    const char* item_end = comma ? comma : end;
    if (size_t(item_end - begin) == length && std::memcmp(begin, name, length) == 0) return true;
    begin = item_end + 1;
  }
  return false;
}

// Whether /proc/<pid>/cgroup (`text`) puts the task in `group`'s directory
// whose path below the group is `below` ("" or "/job").
bool member_of(const char* text, const Targets& targets, const Targets::Group& group, const char* below) {
  const size_t own = std::strlen(group.hierarchy_path), rest = std::strlen(below);
  bool ours = false;
  for (const char* line = text; *line;) {
    const char* end = std::strchr(line, '\n');
    if (!end) end = line + std::strlen(line);
    // hierarchy-id:controllers:path, "0::path" on v2.
    const char* first = static_cast<const char*>(std::memchr(line, ':', size_t(end - line)));
    const char* second = first ? static_cast<const char*>(std::memchr(first + 1, ':', size_t(end - first - 1))) : nullptr;
    if (second) {
      const bool hierarchy = targets.v2 ? (first == line + 1 && *line == '0' && second == first + 1)
                                        : list_has(first + 1, second, group.controller);
      const char* path = second + 1;
      if (hierarchy)
        ours = size_t(end - path) == own + rest && std::memcmp(path, group.hierarchy_path, own) == 0 &&
               std::memcmp(path + own, below, rest) == 0;
    }
    line = *end ? end + 1 : end;
  }
  return ours;
}

class Sweep {
 public:
  Sweep(const Targets& targets, Observer& observer, long deadline_ms)
      : targets_(targets), observer_(observer), deadline_ms_(deadline_ms) {}

  bool past_deadline() const { return now_ms() >= deadline_ms_; }

  // Rule 3; true when a freezer group was frozen (and must be thawed).
  bool stop_forks() {
    if (targets_.count == 0) return false;
    if (targets_.v2) {
      // cgroup.kill kills the whole subtree at once, forks in flight
      // included (Linux 5.14+; without it, kill passes alone).
      Path dir;
      if (dir.set(targets_.groups[0].dir)) write_value_in(dir, "cgroup.kill", "1");
      return false;
    }
    Path dir;
    // pids.max = 0 counts the whole tree, nested groups included: no task
    // in it can fork any more, and the next pass finds every task.
    if (const Targets::Group* pids = group_of("pids")) {
      if (dir.set(pids->dir)) write_value_in(dir, "pids.max", "0");
      return false;
    }
    const Targets::Group* freezer = group_of("freezer");
    if (!freezer) return false;
    if (!dir.set(freezer->dir) || write_value_in(dir, "freezer.state", "FROZEN") != 0) return false;
    // The kernel freezes the tree asynchronously; the kills are queued
    // either way, but a task still forking would add one to find.
    const long until = now_ms() + 1000 < deadline_ms_ ? now_ms() + 1000 : deadline_ms_;
    char state[32];
    while (now_ms() < until) {
      if (read_small_in(dir, "freezer.state", state, sizeof state) > 0 && std::strncmp(state, "FROZEN", 6) == 0) break;
      pause_ms(1);
    }
    return true;
  }

  void thaw() {
    Path dir;
    if (const Targets::Group* freezer = group_of("freezer"); freezer && dir.set(freezer->dir))
      write_value_in(dir, "freezer.state", "THAWED");
  }

  // Rule 1: true when any directory listed a task.
  bool kill_pass() {
    bool listed = false;
    for (int g = 0; g < targets_.count; ++g) {
      const Targets::Group& group = targets_.groups[g];
      walk_tree(group.dir, false, [&](Path& dir) { listed = kill_tasks_in(dir, group) || listed; });
    }
    return listed;
  }

  // The group whose counters cover the whole tree: v2's one group, v1's
  // pids group (a v1 run without one has none).
  const Targets::Group* counting_group() const {
    if (targets_.count == 0) return nullptr;
    return targets_.v2 ? &targets_.groups[0] : group_of("pids");
  }

  // Rule 2, once no cgroup.procs lists a task: the kernel's own counts of
  // the tree say nothing is left either (when `report`, what they say
  // otherwise is a residual). Without counters, cgroup.procs are the proof.
  bool counted_empty(bool report) {
    const Targets::Group* counting = counting_group();
    if (!counting) return true;
    Path dir;
    if (!dir.set(counting->dir)) return false;
    char text[256];
    bool empty = true;
    // pids.current is hierarchical, and still counts exited tasks their
    // parent has not reaped. A v2 group without the pids controller has
    // none; a group that is gone has nothing in it.
    long n = read_small_in(dir, "pids.current", text, sizeof text);
    if (n != -ENOENT && (n < 0 || leading_number(text) != 0)) {
      empty = false;
      if (report) observer_.residual({Residual::Kind::kUnreaped, counting->dir, n < 0 ? -1 : leading_number(text)});
    }
    if (targets_.v2) {
      n = read_small_in(dir, "cgroup.events", text, sizeof text);
      if (n != -ENOENT && (n < 0 || keyed_value(text, "populated") != 0)) {
        empty = false;
        if (report) observer_.residual({Residual::Kind::kPopulated, counting->dir, 0});
      }
    }
    return empty;
  }

  // Each group's own directory, once, no retry: true when all are gone.
  bool remove_roots() {
    bool removed = true;
    for (int g = 0; g < targets_.count; ++g) {
      const long result = syscall4(SYS_unlinkat, AT_FDCWD, long(targets_.groups[g].dir), AT_REMOVEDIR);
      removed = removed && (result == 0 || result == -ENOENT);
    }
    return removed;
  }

  // Rule 5: true when every directory is gone.
  bool remove_all() {
    bool removed = true;
    for (int g = 0; g < targets_.count; ++g) {
      walk_tree(targets_.groups[g].dir, true, [&](Path& dir) {
        for (;;) {
          const long result = syscall4(SYS_unlinkat, AT_FDCWD, long(dir.text), AT_REMOVEDIR);
          if (result == 0 || result == -ENOENT) return;
          // A group that just emptied may still be busy for a moment.
          if (result != -EBUSY || past_deadline()) {
            removed = false;
            observer_.residual({Residual::Kind::kNotRemoved, dir.text, -result});
            return;
          }
          pause_ms(2);
        }
      });
    }
    return removed;
  }

 private:
  const Targets::Group* group_of(const char* controller) const {
    for (int g = 0; g < targets_.count; ++g)
      if (std::strcmp(targets_.groups[g].controller, controller) == 0) return &targets_.groups[g];
    return nullptr;
  }

  // Every task `dir`'s cgroup.procs lists; true when it listed any.
  bool kill_tasks_in(Path& dir, const Targets::Group& group) {
    const size_t mark = dir.length;
    const long fd = dir.push("cgroup.procs") ? open_file(dir.text, O_RDONLY) : -ENAMETOOLONG;
    dir.pop(mark);
    if (fd < 0) return false;
    bool listed = false;
    long pid = 0;
    bool in_number = false;
    const auto one = [&] {
      listed = true;
      observer_.residual({Residual::Kind::kTask, dir.text, pid});
      if (signal_if_ours(pid, group, dir.text + std::strlen(group.dir))) observer_.signalled(pid_t(pid));
      pid = 0;
      in_number = false;
    };
    char buffer[1024];
    for (;;) {
      const long n = syscall4(SYS_read, fd, long(buffer), sizeof buffer);
      if (n == -EINTR) continue;
      if (n <= 0) break;
      for (long i = 0; i < n; ++i) {
        if (buffer[i] >= '0' && buffer[i] <= '9') {
          pid = pid * 10 + (buffer[i] - '0');
          in_number = true;
        } else if (in_number) {
          one();
        }
      }
    }
    if (in_number) one();
    close_fd(fd);
    return listed;
  }

  // Signals `pid` only if it is still a member of the group's directory
  // `below` it: the pidfd pins the process, /proc/<pid>/cgroup is read after
  // it is pinned, and a process that exited meanwhile is not signalled at
  // all (its pidfd refers to the dead one, never to a process that reused
  // the number).
  bool signal_if_ours(long pid, const Targets::Group& group, const char* below) {
    const long pidfd = syscall4(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) return false;  // gone (ESRCH)
    char file[48] = "/proc/";
    std::strcpy(append_number(file + 6, static_cast<unsigned long>(pid)), "/cgroup");
    char text[4096];
    const long n = read_small(file, text, sizeof text);
    // A file that filled the buffer may hide the line that matters: not ours.
    const bool ours = n >= 0 && size_t(n) < sizeof text - 1 && member_of(text, targets_, group, below);
    const bool sent = ours && syscall4(SYS_pidfd_send_signal, pidfd, SIGKILL, 0, 0) == 0;
    close_fd(pidfd);
    return sent;
  }

  const Targets& targets_;
  Observer& observer_;
  const long deadline_ms_;
};

}  // namespace

bool Targets::add(std::string_view dir, std::string_view hierarchy, std::string_view name) {
  if (count >= kMaxGroups || dir.size() >= kPathBytes || hierarchy.size() >= kPathBytes ||
      name.size() >= sizeof groups[0].controller)
    return false;
  Group& group = groups[count++];
  std::memcpy(group.dir, dir.data(), dir.size());
  group.dir[dir.size()] = 0;
  std::memcpy(group.hierarchy_path, hierarchy.data(), hierarchy.size());
  group.hierarchy_path[hierarchy.size()] = 0;
  std::memcpy(group.controller, name.data(), name.size());
  group.controller[name.size()] = 0;
  return true;
}

bool empty_and_remove(const Targets& targets, long timeout_ms, Observer& observer) {
  Sweep sweep(targets, observer, now_ms() + timeout_ms);
  // The usual end of a run: the command has exited and been reaped, and the
  // kernel counts no task in the tree. Removing each group is then the
  // proof for the other hierarchies: the kernel refuses (EBUSY) to remove a
  // group that holds a task or a subgroup, and what it refuses goes through
  // the passes below.
  if (sweep.counting_group() && sweep.counted_empty(false) && sweep.remove_roots()) return true;
  bool stopped = false, frozen = false, empty = false;
  for (;;) {
    observer.pass_begins();
    const bool listed = sweep.kill_pass();
    if (frozen) {
      sweep.thaw();
      frozen = false;
    }
    observer.pass_done();
    if (!listed && sweep.counted_empty(true)) {
      empty = true;
      break;
    }
    if (sweep.past_deadline()) break;
    // Something is left: stop it from forking, once, before the next pass.
    if (!stopped) {
      stopped = true;
      frozen = sweep.stop_forks();
      continue;
    }
    pause_ms(2);
  }
  const bool removed = sweep.remove_all();
  return empty && removed;
}

void kill_listed(const Targets& targets, Observer& observer) {
  Sweep sweep(targets, observer, now_ms());
  // Nothing runs, by the kernel's count: no pass (the usual end of a run;
  // the sweep that follows walks every group anyway).
  if (!sweep.counting_group() || !sweep.counted_empty(false)) sweep.kill_pass();
}

void each_directory(const char* root, void (*visit)(const char* dir, void* context), void* context) {
  walk_tree(root, false, [&](Path& dir) { visit(dir.text, context); });
}

}  // namespace aasm::cgroup::sweep
