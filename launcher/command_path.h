// Finding the command to exec, before anything is confined.
#pragma once

#include <string>

#include "base/result.h"

namespace aasm {


// The path execve should get: `name` itself when it contains '/', else the
// first executable match along $PATH (execvp's rules).
Result<std::string> find_command(const std::string& name, int& lookup_errno);

}  // namespace aasm
