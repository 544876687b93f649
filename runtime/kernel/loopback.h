// The loopback device of a fresh network namespace, for the broker of
// network.outbound.hosts (supervisor/egress_broker.h). A new namespace has
// `lo` down: nothing, not even 127.0.0.1, is reachable until it is up.
// Both calls are for the child, in its new namespace, while it still holds
// CAP_NET_ADMIN there: raw system calls, no allocation (kernel/spawn.h).
#pragma once

#include <cstdint>

namespace aasm::loopback {

// Sets `lo` up (SIOCSIFFLAGS). Returns 0 or errno.
int bring_up();

// A TCP socket listening on 127.0.0.1:port, close-on-exec. Returns the
// descriptor or -errno.
int listen_on(uint16_t port);

}  // namespace aasm::loopback
