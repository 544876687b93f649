#include "kernel/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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
#define AASM_NAMESPACE(id, name, bit, clone_flag) \
  if (namespaces & plan::kNamespace##id) flags |= clone_flag;
#include "plan/namespaces.def"
  return flags;
}

int finish_in_child(uint32_t namespaces, uid_t uid, gid_t gid) {
  if (namespaces & plan::kNamespaceUser)
    if (int error = map_own_ids(uid, gid)) return error;
  if ((namespaces & plan::kNamespaceMount) && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return errno;
  return 0;
}

}  // namespace aasm::namespaces
