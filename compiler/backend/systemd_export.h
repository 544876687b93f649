// `aasmc export --format systemd`: a policy as the sandboxing properties of
// a systemd service ([Service] lines): the syscall filter by name, the write
// allow-list as a read-only root with writable trees, the network as a
// private namespace, the ceilings as cgroup and rlimit properties. What
// systemd's properties cannot hold is left out, never approximated wider
// than the format forces; the export lists it (backend/backends.def's rows,
// and per call in `gaps`). docs/backends.md.
#pragma once

#include <llvm/Support/Error.h>

#include <string>
#include <utility>
#include <vector>

#include "middle/ir.h"

namespace aasmc {

struct SystemdUnit {
  std::vector<std::pair<std::string, std::string>> properties;  // in the order written
  std::vector<std::string> gaps;  // what was left out or answered differently, one line each
  std::string text() const;       // "[Service]\nKey=value\n..."
};

llvm::Expected<SystemdUnit> systemd_unit(const PolicyIR& ir);

}  // namespace aasmc
