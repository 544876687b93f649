// aasm-launch's exit codes (docs/cli.md). Anything else is the command's own.
#pragma once

#include <cerrno>

namespace aasm::exit_code {

inline constexpr int kDeadline = 124;        // the run passed resources.wall_clock (as timeout(1))
inline constexpr int kLauncherError = 125;   // bad CLI, bad plan, host cannot enforce the plan
inline constexpr int kCannotExecute = 126;   // found but not executable (or exec denied)
inline constexpr int kNotFound = 127;        // the command does not exist
inline constexpr int kSignalBase = 128;      // 128+N: the command was killed by signal N

// The status for a command that could not be run: looked up or exec'd,
// `error` is the errno of the failure.
inline int of_exec_failure(int error) { return error == ENOENT ? kNotFound : kCannotExecute; }

}  // namespace aasm::exit_code
