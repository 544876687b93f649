// errno names a policy may use in `errno:ENAME` actions (Linux values, the
// same on x86_64 and aarch64).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

namespace aasmc {

int errno_value(llvm::StringRef name);  // 0 when unknown
const char* errno_name(int value);      // "E?" when unknown
llvm::ArrayRef<llvm::StringRef> errno_names();

}  // namespace aasmc
