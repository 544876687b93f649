// Fresh namespaces for the process tree (isolation.namespaces).
#pragma once

#include <cstdint>

namespace aasm::namespaces {

// unshare(2) of the plan's namespaces (plan::kNamespace* bits). With a new
// mount namespace, every mount becomes private, so nothing the tree mounts
// propagates back to the host. A new PID namespace applies to the caller's
// next child: the caller forks after this. Needs CAP_SYS_ADMIN, so it runs
// before the capabilities are dropped. Returns 0 or errno. Async-signal-safe.
int enter(uint32_t namespaces);

}  // namespace aasm::namespaces
