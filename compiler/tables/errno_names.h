// errno names a policy may use in `errno:ENAME` actions (Linux values, the
// same on x86_64 and aarch64).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>

namespace aasmc {

int errno_value(llvm::StringRef name);  // 0 when unknown
std::string errno_name(int value);      // the number itself when the table has no name
llvm::ArrayRef<llvm::StringRef> errno_names();

}  // namespace aasmc
