#include "supervisor/cgroup_host.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "supervisor/cgroup.h"

namespace aasm::cgroup {

std::string errno_text(int error) { return std::string(strerrorname_np(error) ? strerrorname_np(error) : "?") + " (" + std::strerror(error) + ")"; }

std::optional<std::string> read_file(const std::string& path, int* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = errno;
    return std::nullopt;
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error) *error = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    text.append(buffer, size_t(n));
    if (text.size() > (1u << 24)) break;  // a cgroup file is never this large
  }
  ::close(fd);
  return text;
}

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

namespace {

// mountinfo escapes blanks in paths as octal (\040).
std::string unescape_mount_path(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size()) {
      const std::string octal = text.substr(i + 1, 3);
      if (octal.size() == 3 && std::all_of(octal.begin(), octal.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(char(std::strtol(octal.c_str(), nullptr, 8)));
        i += 3;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

void locate_own_dir(Hierarchy& h) {
  if (h.own_path.empty()) {
    h.problem = "the launcher's cgroup in this hierarchy is not listed in /proc/self/cgroup";
    return;
  }
  const std::string& root = h.mount_root;
  std::string relative;
  if (root == "/") {
    relative = h.own_path == "/" ? "" : h.own_path;
  } else if (h.own_path == root) {
    relative = "";
  } else if (h.own_path.compare(0, root.size() + 1, root + "/") == 0) {
    relative = h.own_path.substr(root.size());
  } else {
    h.problem = "the launcher's cgroup " + h.own_path + " lies outside the part of the hierarchy mounted at " +
                h.mount_point + " (" + root + ")";
    return;
  }
  h.own_dir = h.mount_point + relative;
  if (::access(h.own_dir.c_str(), W_OK) != 0)
    h.problem = "the launcher may not create groups in its own cgroup " + h.own_dir + ": " + errno_text(errno);
}

}  // namespace

bool Hierarchy::has(const std::string& controller) const {
  return std::find(controllers.begin(), controllers.end(), controller) != controllers.end();
}

const Hierarchy* Host::v1_for(const std::string& controller) const {
  for (const Hierarchy& h : v1)
    if (h.has(controller)) return &h;
  return nullptr;
}

Host discover_host() {
  Host host;
  // hierarchy id:controllers:path, "0::path" being v2.
  int error = 0;
  auto self = read_file("/proc/self/cgroup", &error);
  if (!self) {
    host.problem = "cannot read /proc/self/cgroup: " + errno_text(error);
    return host;
  }
  struct Membership { std::vector<std::string> controllers; std::string path; bool v2; };
  std::vector<Membership> memberships;
  for (const std::string& line : split(*self, '\n')) {
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    memberships.push_back({controllers.empty() ? std::vector<std::string>{} : split(controllers, ','),
                           line.substr(second + 1), id == "0" && controllers.empty()});
  }
  auto mounts = read_file("/proc/self/mountinfo", &error);
  if (!mounts) {
    host.problem = "cannot read /proc/self/mountinfo: " + errno_text(error);
    return host;
  }
  for (const std::string& line : split(*mounts, '\n')) {
    // id parent major:minor root mount-point options [optional...] - type source super-options
    // (blanks in paths are escaped, so " - " is the separator). Most mounts
    // are not cgroups: not split at all.
    if (line.find(" - cgroup") == std::string::npos) continue;
    const std::vector<std::string> fields = split(line, ' ');
    const auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 6 || dash == fields.end() || fields.end() - dash < 4) continue;
    const std::string type = *(dash + 1);
    if (type != "cgroup" && type != "cgroup2") continue;
    Hierarchy h;
    h.v2 = type == "cgroup2";
    h.mount_root = unescape_mount_path(fields[3]);
    h.mount_point = unescape_mount_path(fields[4]);
    if (h.v2) {
      if (host.v2) continue;  // the first mount of the unified hierarchy
      for (const Membership& m : memberships)
        if (m.v2) h.own_path = m.path;
      locate_own_dir(h);
      // Delegated means: already enabled for our children. Enabling it
      // ourselves would write to a cgroup this launcher did not create.
      if (!h.own_dir.empty())
        if (auto subtree = read_file(h.own_dir + "/cgroup.subtree_control"))
          for (const std::string& c : split(trim(*subtree), ' '))
            if (!c.empty()) h.controllers.push_back(c);
      host.v2 = h;
      continue;
    }
    for (const std::string& option : split(*(dash + 3), ','))
      if (option == kMemory || option == kPids || option == kCpu || option == "cpuacct" || option == kFreezer)
        h.controllers.push_back(option);
    // cpuacct counts only beside cpu: a hierarchy of its own is never used
    // (no access(2) for it).
    if (h.controllers.empty() || h.controllers == std::vector<std::string>{"cpuacct"}) continue;
    bool seen = false;
    for (const Hierarchy& other : host.v1) seen = seen || other.controllers == h.controllers;
    if (seen) continue;  // a second mount of the same hierarchy
    for (const Membership& m : memberships)
      if (!m.v2 && std::find(m.controllers.begin(), m.controllers.end(), h.controllers.front()) != m.controllers.end())
        h.own_path = m.path;
    locate_own_dir(h);
    host.v1.push_back(h);
  }
  return host;
}

// Why `controller` cannot be had on v2, v1 or either, for a refusal.
std::string why_unavailable(const Host& host, const std::string& controller, bool v2_side, bool v1_side) {
  std::string why = controller + ": ";
  if (!v2_side) {
  } else if (host.v2) {
    if (!host.v2->usable())
      why += "cgroup v2 at " + host.v2->mount_point + ": " + host.v2->problem;
    else
      why += "cgroup v2 at " + host.v2->mount_point + " does not delegate it to the launcher's cgroup " +
             host.v2->own_dir + " (its cgroup.subtree_control does not list it)";
  } else {
    why += "no cgroup v2 hierarchy is mounted";
  }
  if (!v1_side) return why;
  if (v2_side) why += "; ";
  const Hierarchy* v1 = host.v1_for(controller);
  if (!v1)
    why += "no v1 " + controller + " hierarchy is mounted";
  else
    why += "v1 " + controller + " hierarchy at " + v1->mount_point + ": " + v1->problem;
  return why;
}

bool host_has_swap() {
  auto swaps = read_file("/proc/swaps");
  if (!swaps) return true;  // unknown: assume the worst
  // A header line, then one line per swap area.
  size_t lines = 0;
  for (const std::string& line : split(trim(*swaps), '\n'))
    if (!line.empty()) ++lines;
  return lines > 1;
}

std::string describe_host_support() {
  const Host host = discover_host();
  if (!host.problem.empty()) return "cgroups: " + host.problem + "\n";
  std::string text;
  if (host.v2) {
    const Hierarchy& h = *host.v2;
    text += "cgroup v2 at " + h.mount_point + ": launcher's cgroup " + (h.own_path.empty() ? "?" : h.own_path);
    if (!h.usable()) {
      text += " (" + h.problem + ")\n";
    } else {
      std::string delegated;
      for (const std::string& c : h.controllers) delegated += (delegated.empty() ? "" : " ") + c;
      text += " at " + h.own_dir + "; controllers delegated to its children: " +
              (delegated.empty() ? "none" : delegated) + (exists(h.own_dir + "/cgroup.kill") ? "; cgroup.kill present" : "") +
              "\n";
    }
  } else {
    text += "cgroup v2: not mounted\n";
  }
  for (const char* controller : {kMemory, kPids, kCpu, kFreezer}) {
    const Hierarchy* h = host.v1_for(controller);
    text += std::string("v1 ") + controller + ": ";
    if (!h) {
      text += "not mounted\n";
      continue;
    }
    text += "at " + h->mount_point + ", launcher's cgroup " + (h->own_path.empty() ? "?" : h->own_path);
    if (!h->usable()) {
      text += " (" + h->problem + ")\n";
      continue;
    }
    text += " at " + h->own_dir + ", groups can be created there";
    if (std::string(controller) == kMemory)
      text += exists(h->own_dir + "/memory.memsw.limit_in_bytes") ? "; swap accounted (memory.memsw.*)"
                                                                   : "; swap not accounted (no memory.memsw.*)";
    text += "\n";
  }
  text += std::string("swap: ") + (host_has_swap() ? "configured" : "none configured (/proc/swaps)") + "\n";
  return text;
}

}  // namespace aasm::cgroup
