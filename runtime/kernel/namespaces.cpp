#include "kernel/namespaces.h"

#include <sched.h>
#include <sys/mount.h>

#include <cerrno>

#include "plan/plan.h"

namespace aasm::namespaces {

int enter(uint32_t namespaces) {
  int flags = 0;
  if (namespaces & plan::kNamespacePid) flags |= CLONE_NEWPID;
  if (namespaces & plan::kNamespaceIpc) flags |= CLONE_NEWIPC;
  if (namespaces & plan::kNamespaceUts) flags |= CLONE_NEWUTS;
  if (namespaces & plan::kNamespaceNet) flags |= CLONE_NEWNET;
  if (namespaces & plan::kNamespaceMount) flags |= CLONE_NEWNS;
  if (flags == 0) return 0;
  if (::unshare(flags) != 0) return errno;
  if ((flags & CLONE_NEWNS) && ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  return 0;
}

}  // namespace aasm::namespaces
