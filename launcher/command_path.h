// Finding the command to exec, before anything is confined.
#pragma once

#include <string>

#include "base/result.h"

namespace aasm {

// The path execve should get: `name` itself when it contains '/', else the
// first executable match along $PATH (execvp's rules). The error's code is
// the errno that decides the exit status: ENOENT (127) or another (126).
Result<std::string> find_command(const std::string& name);

}  // namespace aasm
