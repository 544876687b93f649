#include "base/directories.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace aasm {

Status make_private_directories(const std::string& path) {
  // Each prefix ending before a '/', then the path itself.
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string prefix = at == std::string::npos ? path : path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return make_error("cannot create '" + prefix + "': " + std::strerror(errno), errno);
    if (at == std::string::npos) return Ok{};
  }
}

}  // namespace aasm
