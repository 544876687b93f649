// The denial behind the launcher's own execve of the command failing with
// EACCES under a ruleset that handles `execute` (issue 14): Landlock checks
// the right on the command's file and again on the interpreter the kernel
// opens for it (the ELF header's PT_INTERP, or a #! line's program), and
// either refusal comes back as a bare EACCES from execve, before the command
// exists to be traced. The supervisor, which saw the exec fail, names the
// file no rule grants `execute` to, so the report joins it to the policy
// line like any other refusal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "supervisor/denials.h"
#include "supervisor/path_binding.h"

namespace aasm {

// The first file of the exec of `executable` (the command, then its
// interpreter) that none of `granted` (the ruleset's rules as bound, each
// with its file's identity) grants `execute` beneath, as a Landlock
// filesystem denial of that right on its real path (links resolved, as the
// kernel resolves them before Landlock looks): witness kLauncher, errno
// EACCES. nullopt when every file of the exec is granted: then something
// else refused it (a mode bit, a noexec mount), not Landlock.
std::optional<denials::Denial> exec_refusal(const std::string& executable, const std::vector<BoundPath>& granted);

// The interpreter the kernel opens to run `file`: its ELF PT_INTERP, or the
// program of its #! line; "" for none (a static ELF) or an unreadable file.
std::string exec_interpreter(const std::string& file);

}  // namespace aasm
