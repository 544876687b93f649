#include "command_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace aasm {
namespace {

int check_executable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EACCES;
  return ::access(path.c_str(), X_OK) == 0 ? 0 : errno;
}

}  // namespace

Result<std::string> find_command(const std::string& name) {
  if (name.empty()) return make_error("the command name is empty", ENOENT);
  if (name.find('/') != std::string::npos) {
    const int error = check_executable(name);
    if (error == 0) return name;
    return make_error("cannot execute '" + name + "': " + std::strerror(error), error);
  }
  const char* env_path = std::getenv("PATH");
  const std::string search = env_path && *env_path ? env_path : "/usr/local/bin:/usr/bin:/bin";
  int first_failure = ENOENT;
  size_t start = 0;
  while (start <= search.size()) {
    size_t end = search.find(':', start);
    if (end == std::string::npos) end = search.size();
    const std::string dir = end == start ? "." : search.substr(start, end - start);
    const std::string candidate = dir + "/" + name;
    const int error = check_executable(candidate);
    if (error == 0) return candidate;
    if (error != ENOENT && error != ENOTDIR && first_failure == ENOENT) first_failure = error;
    start = end + 1;
  }
  if (first_failure == ENOENT) return make_error("command not found: '" + name + "'", ENOENT);
  return make_error("cannot execute '" + name + "': " + std::strerror(first_failure), first_failure);
}

}  // namespace aasm
