#include "tables/oci_names.h"

#include <linux/seccomp.h>

namespace aasmc {

llvm::ArrayRef<OciAction> oci_actions() {
  static const OciAction kActions[] = {
      {"SCMP_ACT_ALLOW", SECCOMP_RET_ALLOW},
      {"SCMP_ACT_ERRNO", SECCOMP_RET_ERRNO},
      {"SCMP_ACT_KILL_PROCESS", SECCOMP_RET_KILL_PROCESS},
      {"SCMP_ACT_LOG", SECCOMP_RET_LOG},
      {"SCMP_ACT_KILL_THREAD", SECCOMP_RET_KILL_THREAD},
      {"SCMP_ACT_KILL", SECCOMP_RET_KILL_THREAD},  // libseccomp's older name of KILL_THREAD
      {"SCMP_ACT_TRAP", SECCOMP_RET_TRAP},
      {"SCMP_ACT_TRACE", SECCOMP_RET_TRACE},
      {"SCMP_ACT_NOTIFY", SECCOMP_RET_USER_NOTIF},
  };
  return kActions;
}

const OciAction* find_oci_action(llvm::StringRef name) {
  for (const OciAction& action : oci_actions())
    if (name == action.name) return &action;
  return nullptr;
}

const char* oci_action_name(uint32_t answer) {
  const uint32_t action = answer & SECCOMP_RET_ACTION_FULL;
  for (const OciAction& entry : oci_actions())
    if (entry.ret == action && action != SECCOMP_RET_KILL_THREAD) return entry.name;
  return "SCMP_ACT_KILL_PROCESS";
}

llvm::ArrayRef<OciComparisonName> oci_comparisons() {
  static const OciComparisonName kComparisons[] = {
      {OciComparison::kNe, "SCMP_CMP_NE", "!="},        {OciComparison::kLt, "SCMP_CMP_LT", "<"},
      {OciComparison::kLe, "SCMP_CMP_LE", "<="},        {OciComparison::kEq, "SCMP_CMP_EQ", "=="},
      {OciComparison::kGe, "SCMP_CMP_GE", ">="},        {OciComparison::kGt, "SCMP_CMP_GT", ">"},
      {OciComparison::kMaskedEq, "SCMP_CMP_MASKED_EQ", "&"},
  };
  return kComparisons;
}

const OciComparisonName* find_oci_comparison(llvm::StringRef name) {
  for (const OciComparisonName& entry : oci_comparisons())
    if (name == entry.name) return &entry;
  return nullptr;
}

const char* oci_comparison_name(OciComparison op) {
  for (const OciComparisonName& entry : oci_comparisons())
    if (entry.op == op) return entry.name;
  return "";
}

}  // namespace aasmc
