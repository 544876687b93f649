// The OCI runtime spec's seccomp vocabulary (config-linux.md#seccomp): the
// action names with the SECCOMP_RET_* action each stands for, and the
// argument comparisons. One table for `aasmc export --format oci`, which
// writes them, and `aasmc import --from oci`, which reads them.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <cstdint>

namespace aasmc {

struct OciAction {
  const char* name;  // "SCMP_ACT_ALLOW"
  uint32_t ret;      // its SECCOMP_RET_* action bits
};
// The first entry with a given `ret` is the name export writes for it.
llvm::ArrayRef<OciAction> oci_actions();
const OciAction* find_oci_action(llvm::StringRef name);
// The name of `answer`'s action (SECCOMP_RET_ACTION_FULL bits); every kill is
// SCMP_ACT_KILL_PROCESS, as a plan kills the process.
const char* oci_action_name(uint32_t answer);

enum class OciComparison { kNe, kLt, kLe, kEq, kGe, kGt, kMaskedEq };
struct OciComparisonName {
  OciComparison op;
  const char* name;                // "SCMP_CMP_EQ"
  const char* condition_operator;  // the `when:` language's ("=="); MASKED_EQ's is "&" then "=="
};
llvm::ArrayRef<OciComparisonName> oci_comparisons();
const OciComparisonName* find_oci_comparison(llvm::StringRef name);
const char* oci_comparison_name(OciComparison op);

}  // namespace aasmc
