// Fresh namespaces for the process tree (isolation.namespaces).
//
// They are created with the command's process, by the clone that starts it
// (kernel/spawn.h), not by unshare afterwards: a new PID namespace then
// makes the command itself PID 1 there, with no helper process, and a new
// user namespace owns every other namespace made in the same call, as it
// must for a launcher without root. (unshare(CLONE_NEWUSER) would also fail
// in a child that shares the supervisor's memory.)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace aasm::namespaces {

// The CLONE_NEW* flags for the plan's kNamespace* bits.
int clone_flags(uint32_t namespaces);

// In the child, right after the clone that made the namespaces: in a new
// user namespace, the id maps (the launcher's own uid and gid, mapped to
// themselves, the only mapping a process may write for itself; setgroups
// denied, as the kernel requires for that); in a new mount namespace, every
// mount made private, so nothing the tree mounts propagates back to the
// host. Returns 0 or errno. Async-signal-safe.
int finish_in_child(uint32_t namespaces, uid_t uid, gid_t gid);

// Whether this process may have a user namespace of its own with a mount
// and a PID namespace in it, as a view without CAP_SYS_ADMIN needs: a
// throwaway child is cloned into them and sets them up as finish_in_child
// does, then exits. Returns 0 or errno: the clone's (EPERM where a sysctl, a seccomp
// filter or a container forbids it, ENOSPC where the count is 0 or used
// up), or the setup's (EPERM where Ubuntu's AppArmor restriction lets the
// namespace be made but denies every capability in it).
int try_user_namespace(uid_t uid, gid_t gid);

// The host setting that explains a refused user namespace, as
// "kernel.unprivileged_userns_clone = 0", or "" when none is set to forbid
// them (a seccomp filter, a container, or an exhausted count can still).
std::string user_namespace_restriction();

// How to let an unprivileged launcher have user namespaces: every setting
// that can forbid them, and the alternative (root).
extern const char* const kUserNamespaceRemedy;
// The same settings without the alternative: where root needs a user
// namespace too (bwrap --unshare-user, launcher/bwrap_exec.h).
extern const char* const kUserNamespaceSettings;

}  // namespace aasm::namespaces
