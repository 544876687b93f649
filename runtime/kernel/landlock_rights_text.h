// Landlock rights by name, for every report (aasmc show / explain, --dry-run,
// doctor, receipts): the names are landlock_rights.def's, the kernel's own,
// so no output shows a mask a reader has to decode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel/landlock_uapi.h"

namespace aasm::landlock {

// Each right set in `rights`, lowest bit first; a bit the table does not
// describe as "bit17" (a newer plan on an older build must still show it).
std::vector<std::string> rights_names(uint64_t rights, RightKind kind);

// The same joined: "read_file,read_dir", or "none".
std::string rights_list_text(uint64_t rights, RightKind kind = RightKind::kFs);

// All three parts: "fs read_file,read_dir; net none; scopes none".
std::string landlock_rights_text(uint64_t fs, uint64_t net, uint64_t scopes);

}  // namespace aasm::landlock
