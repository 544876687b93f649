#include "kernel/rlimits.h"

#include <sys/resource.h>

#include <cerrno>

namespace aasm::rlimits {
namespace {

int set(int resource, uint64_t value) {
  const rlimit limit{rlim_t(value), rlim_t(value)};
  return ::setrlimit(resource, &limit) == 0 ? 0 : errno;
}

}  // namespace

int apply(const plan::ProcessSettings* settings, TreeLimits tree) {
  if (int error = set(RLIMIT_CORE, 0)) return error;
  if (!settings) return 0;
  if (settings->open_files)
    if (int error = set(RLIMIT_NOFILE, *settings->open_files)) return error;
  if (settings->file_size)
    if (int error = set(RLIMIT_FSIZE, *settings->file_size)) return error;
  if (tree == TreeLimits::kPerProcessStandIns) {
    if (settings->memory)
      if (int error = set(RLIMIT_AS, *settings->memory)) return error;
    if (settings->pids)
      if (int error = set(RLIMIT_NPROC, *settings->pids)) return error;
  }
  return 0;
}

}  // namespace aasm::rlimits
