// The seccomp side of network.outbound and ipc.unix_sockets: rules for what
// Landlock does not see of them (docs/seccomp.md "Network rules" and "Unix
// sockets"). How a control is enforced is this backend's decision, so it is
// made here, beside the plan's account of it; the IR only says what the
// policy requires.
#pragma once

#include <llvm/Support/Error.h>

#include <optional>
#include <string>

#include "middle/ir.h"

namespace aasmc {

// `ir` with the socket rules among its syscall rules, after the policy's own
// and before the safe defaults, as `aasmc explain` lists them (a denylist of
// nothing carries them when the policy has no syscalls node). What the
// seccomp lowering takes, and what explain and --print-ir print.
llvm::Expected<PolicyIR> with_socket_rules(PolicyIR ir);

// The plan's `lowering.network_outbound` entry: what enforces
// network.outbound beyond Landlock's TCP rights; nullopt when no socket rule
// stands in for it.
std::optional<std::string> network_outbound_lowering(const NetworkIR& network);

}  // namespace aasmc
