#include "kernel/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "plan/plan.h"

namespace aasm::namespaces {
namespace {

int write_proc_file(const char* path, const char* text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const size_t length = std::strlen(text);
  const ssize_t written = ::write(fd, text, length);
  const int error = written == ssize_t(length) ? 0 : (written < 0 ? errno : EIO);
  ::close(fd);
  return error;
}

int map_own_ids(uid_t uid, gid_t gid) {
  char line[64];
  std::snprintf(line, sizeof line, "%u %u 1\n", unsigned(uid), unsigned(uid));
  if (int error = write_proc_file("/proc/self/uid_map", line)) return error;
  if (int error = write_proc_file("/proc/self/setgroups", "deny")) return error;
  std::snprintf(line, sizeof line, "%u %u 1\n", unsigned(gid), unsigned(gid));
  return write_proc_file("/proc/self/gid_map", line);
}

}  // namespace

int clone_flags(uint32_t namespaces) {
  int flags = 0;
  if (namespaces & plan::kNamespaceUser) flags |= CLONE_NEWUSER;
  if (namespaces & plan::kNamespacePid) flags |= CLONE_NEWPID;
  if (namespaces & plan::kNamespaceIpc) flags |= CLONE_NEWIPC;
  if (namespaces & plan::kNamespaceUts) flags |= CLONE_NEWUTS;
  if (namespaces & plan::kNamespaceNet) flags |= CLONE_NEWNET;
  if (namespaces & plan::kNamespaceMount) flags |= CLONE_NEWNS;
  return flags;
}

std::string names(uint32_t namespaces) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {plan::kNamespaceUser, "user"}, {plan::kNamespacePid, "pid"},   {plan::kNamespaceIpc, "ipc"},
      {plan::kNamespaceUts, "uts"},   {plan::kNamespaceNet, "net"},   {plan::kNamespaceMount, "mount"}};
  std::string out;
  for (const auto& [bit, name] : kNames)
    if (namespaces & bit) out += std::string(out.empty() ? "" : ", ") + name;
  return out;
}

int finish_in_child(uint32_t namespaces, uid_t uid, gid_t gid) {
  if (namespaces & plan::kNamespaceUser)
    if (int error = map_own_ids(uid, gid)) return error;
  if ((namespaces & plan::kNamespaceMount) && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno;
  return 0;
}

}  // namespace aasm::namespaces
