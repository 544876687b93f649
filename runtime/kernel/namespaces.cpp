#include "kernel/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernel/spawn.h"
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

struct Ids {
  uid_t uid;
  gid_t gid;
};

// The namespaces a view without CAP_SYS_ADMIN is built in.
constexpr uint32_t kProbed = plan::kNamespaceUser | plan::kNamespaceMount | plan::kNamespacePid;

int set_up_probed(void* argument) {
  spawn::await_supervisor();
  const Ids& ids = *static_cast<const Ids*>(argument);
  return finish_in_child(kProbed, ids.uid, ids.gid);
}

// The sysctls that forbid unprivileged user namespaces, each with the value
// that does: mainline's count, Debian's older switch, Ubuntu's AppArmor one.
struct Restriction {
  const char* sysctl;
  long forbidding;
};
constexpr Restriction kRestrictions[] = {
    {"user.max_user_namespaces", 0},
    {"kernel.unprivileged_userns_clone", 0},
    {"kernel.apparmor_restrict_unprivileged_userns", 1},
};

// A sysctl's value, or -1 where the kernel has none by that name.
long read_sysctl(const char* name) {
  std::string path = std::string("/proc/sys/") + name;
  for (char& c : path)
    if (c == '.') c = '/';
  FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return -1;
  long value = -1;
  if (std::fscanf(f, "%ld", &value) != 1) value = -1;
  std::fclose(f);
  return value;
}

}  // namespace

#define AASM_USER_NAMESPACE_SETTINGS                                                                          \
  "enable unprivileged user namespaces (sysctl user.max_user_namespaces above 0; "                              \
  "kernel.unprivileged_userns_clone = 1 where the kernel has it, as Debian's did; "                             \
  "kernel.apparmor_restrict_unprivileged_userns = 0, or an AppArmor profile for aasm-launch with the userns rule, " \
  "on Ubuntu 23.10 and later; in a container, a seccomp profile that allows clone with CLONE_NEWUSER)"
const char* const kUserNamespaceSettings = AASM_USER_NAMESPACE_SETTINGS;
const char* const kUserNamespaceRemedy = AASM_USER_NAMESPACE_SETTINGS ", or launch as root";
#undef AASM_USER_NAMESPACE_SETTINGS

int try_user_namespace(uid_t uid, gid_t gid) {
  Ids ids{uid, gid};
  const pid_t pid = spawn::start({clone_flags(kProbed)}, set_up_probed, &ids, [] { return true; });
  if (pid < 0) return -pid;
  int status = 0;
  while (::waitpid(pid, &status, __WALL) < 0)
    if (errno != EINTR) return errno;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return EIO;  // killed: nothing to say why, but not a namespace to rely on
}

std::string user_namespace_restriction() {
  for (const Restriction& r : kRestrictions)
    if (read_sysctl(r.sysctl) == r.forbidding) return std::string(r.sysctl) + " = " + std::to_string(r.forbidding);
  return "";
}

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
