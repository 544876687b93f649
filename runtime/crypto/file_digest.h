// The SHA-256 of a file's content read through an open descriptor: the one
// hashing of pinned files (filesystem.pinned), which the compiler records and
// the launcher checks, so both read the same bytes the same way.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "crypto/sha256.h"

namespace aasm {

struct FileDigest {
  uint64_t size = 0;
  Sha256Digest sha256{};
  bool operator==(const FileDigest&) const = default;
};

// Reads `fd` from offset 0 to its end with pread(2), so the descriptor's own
// offset is left as it was (the launcher may exec it next). The error's code
// is the errno of the failed read.
Result<FileDigest> sha256_of_descriptor(int fd);

}  // namespace aasm
