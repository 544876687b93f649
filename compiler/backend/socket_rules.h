// The seccomp side of network.outbound, network.bind and ipc.unix_sockets: rules for what
// Landlock does not see of them (docs/seccomp.md "Network rules" and "Unix
// sockets"). How a control is enforced is this backend's decision, so it is
// made here, beside the plan's account of it; the IR only says what the
// policy requires.
#pragma once

#include <llvm/Support/Error.h>

#include <optional>
#include <string>
#include <vector>

#include "middle/ir.h"

namespace aasmc {

// `ir` with the socket rules among its syscall rules, after the policy's own
// and before the safe defaults, as `aasmc explain` lists them (a denylist of
// nothing carries them when the policy has no syscalls node). What the
// seccomp lowering takes, and what explain and --print-ir print.
llvm::Expected<PolicyIR> with_socket_rules(PolicyIR ir);

// Those rules alone, each with the node that asks for it, for the plan's
// provenance.
struct SocketRuleIR {
  const char* node;  // "network.outbound", "network.bind" or "ipc.unix_sockets"
  SyscallRuleIR rule;
};
llvm::Expected<std::vector<SocketRuleIR>> socket_rules_of(const PolicyIR& ir);

// The plan's `lowering.network_outbound` entry: what enforces
// network.outbound beyond Landlock's TCP rights; nullopt when no socket rule
// stands in for it.
std::optional<std::string> network_outbound_lowering(const NetworkIR& network);

// The plan's `lowering.network_bind` entry: what enforces network.bind and
// what of it nothing checks; nullopt without a bind node.
std::optional<std::string> network_bind_lowering(const NetworkIR& network);

}  // namespace aasmc
