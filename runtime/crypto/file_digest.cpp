#include "crypto/file_digest.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace aasm {

Result<FileDigest> sha256_of_descriptor(int fd) {
  // 1 MiB: few system calls per file, and one allocation the launcher makes
  // before anything runs (docs/benchmarks.md measures the cost per MiB).
  constexpr size_t kChunk = 1u << 20;
  std::vector<uint8_t> buffer(kChunk);
  Sha256 hash;
  FileDigest digest;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), off_t(digest.size));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      return make_error(std::string("cannot read: ") + std::strerror(error), error);
    }
    if (n == 0) break;
    hash.update(std::span<const uint8_t>(buffer.data(), size_t(n)));
    digest.size += uint64_t(n);
  }
  digest.sha256 = hash.finish();
  return digest;
}

}  // namespace aasm
