// The AUDIT_ARCH value of the architecture this binary runs as.
#pragma once

#include "plan/format.h"

namespace aasm {

#if defined(__x86_64__)
inline constexpr uint32_t kNativeAuditArch = plan::kAuditArchX86_64;
#elif defined(__aarch64__)
inline constexpr uint32_t kNativeAuditArch = plan::kAuditArchAarch64;
#else
#error "aasm supports x86_64 and aarch64 hosts"
#endif

}  // namespace aasm
