// What this host can give the launcher's run cgroup, found without creating
// anything: which hierarchies are mounted (v2, and v1 per controller), where
// the launcher's own cgroup lies in each (/proc/self/cgroup through
// /proc/self/mountinfo), whether it may create groups there, which v2
// controllers are delegated to its children, and whether the host has swap.
// The run's groups themselves, their limits and their end are cgroup.h's;
// describe_host_support() (declared there) reports this for --dry-run.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace aasm::cgroup {

// The controllers a run may ask for, and freezer, which v1 cleanup uses to
// stop a tree from forking while it is being killed where no pids
// hierarchy is usable.
inline constexpr const char* kMemory = "memory";
inline constexpr const char* kPids = "pids";
inline constexpr const char* kCpu = "cpu";
inline constexpr const char* kFreezer = "freezer";

// One cgroup hierarchy as this process sees it.
struct Hierarchy {
  bool v2 = false;
  std::vector<std::string> controllers;  // v1: bound to this hierarchy; v2: delegated to our children
  std::string mount_point;
  std::string mount_root;   // the hierarchy path mounted there (not "/" inside some containers)
  std::string own_path;     // the launcher's cgroup, as /proc/self/cgroup names it
  std::string own_dir;      // the same as a directory; empty when it is not reachable
  std::string problem;      // why own_dir is empty or unusable

  bool has(const std::string& controller) const;
  bool usable() const { return !own_dir.empty() && problem.empty(); }
};

struct Host {
  std::vector<Hierarchy> v1;
  std::optional<Hierarchy> v2;
  std::string problem;  // /proc/self/cgroup or mountinfo unreadable

  const Hierarchy* v1_for(const std::string& controller) const;
};

Host discover_host();

// Why `controller` cannot be had on v2, v1 or either, for a refusal.
std::string why_unavailable(const Host& host, const std::string& controller, bool v2_side = true, bool v1_side = true);

// Whether /proc/swaps lists a swap area (true when it cannot be read: the
// worst case).
bool host_has_swap();

// Small readers of cgroupfs and /proc files, shared with cgroup.cpp.
std::string errno_text(int error);
std::optional<std::string> read_file(const std::string& path, int* error = nullptr);
bool exists(const std::string& path);
std::string trim(std::string text);
std::vector<std::string> split(const std::string& text, char separator);

}  // namespace aasm::cgroup
