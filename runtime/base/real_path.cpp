#include "base/real_path.h"

#include <cstdlib>

namespace aasm {

std::string real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return "";
  std::string out(resolved);
  std::free(resolved);
  return out;
}

}  // namespace aasm
