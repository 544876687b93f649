// `aasmc export --format oci`: the syscall filter of a policy as an OCI
// runtime-spec linux.seccomp object (what runc, crun, containerd, CRI-O and
// Kubernetes' seccompProfile type Localhost read), and the Kubernetes
// securityContext that uses it. The answers are those of the native plan
// (middle/syscall_semantics.h), as disjoint per-call argument regions
// (backend/syscall_regions.h); what the profile cannot hold is refused, and
// what the format cannot carry at all is listed (backend/negotiate.h, from
// backend/backends.def). docs/backends.md.
#pragma once

#include <llvm/Support/Error.h>

#include <nlohmann/json.hpp>

#include <string>

#include "middle/ir.h"

namespace aasmc {

// The linux.seccomp object for `ir`'s targets (ir lowered: socket rules
// included). Errors: a call whose rules the profile cannot hold, or whose
// answers differ between the targets (export one with --arch).
llvm::Expected<nlohmann::ordered_json> oci_seccomp_profile(const PolicyIR& ir);

// The container's securityContext: the profile as a Localhost profile at
// `localhost_profile` (relative to the kubelet's seccomp directory), no
// privilege escalation, every capability dropped but those the policy keeps.
nlohmann::ordered_json kubernetes_security_context(const PolicyIR& ir, const std::string& localhost_profile);

}  // namespace aasmc
