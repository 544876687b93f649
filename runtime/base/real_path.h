// A path with every symbolic link and `.`/`..` resolved (realpath(3)).
#pragma once

#include <string>

namespace aasm {

// "" when the path cannot be resolved (missing, unreadable on the way).
std::string real_path(const std::string& path);

}  // namespace aasm
