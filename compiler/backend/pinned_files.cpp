#include "backend/pinned_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "crypto/file_digest.h"

namespace aasmc {
namespace {

// What stat says a path is, for the message that refuses it.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::optional<aasm::plan::PinnedFile> hash_one(const PathGrant& pin, Diagnostics& diags) {
  const std::string path = pin.path.rest;
  auto refuse = [&](const std::string& why, const char* id) {
    diags.error(pin.from.loc, "filesystem.pinned: " + path + ": " + why, id, pin.from.range);
    return std::nullopt;
  };
  // As the launcher opens it: a symbolic link is followed (the pin is of the
  // content the path reaches), O_NONBLOCK so a FIFO cannot stall the compile.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      return refuse("does not exist; a pinned file is hashed when the plan is compiled, so it must exist then",
                    diag::kPinnedMissing);
    return refuse(std::string("cannot be opened: ") + std::strerror(error), diag::kPinnedUnreadable);
  }
  struct stat st {};
  std::optional<aasm::plan::PinnedFile> out;
  if (::fstat(fd, &st) != 0) {
    refuse(std::string("cannot be examined: ") + std::strerror(errno), diag::kPinnedUnreadable);
  } else if (!S_ISREG(st.st_mode)) {
    refuse(std::string("is ") + kind_of(st.st_mode) +
               ", and only a regular file is pinned; pin the files beneath it one by one",
           diag::kPinnedNotFile);
  } else if (auto digest = aasm::sha256_of_descriptor(fd); !digest) {
    refuse(digest.error().message, diag::kPinnedUnreadable);
  } else {
    out = aasm::plan::PinnedFile{path, digest->size, digest->sha256};
  }
  ::close(fd);
  return out;
}

}  // namespace

std::optional<std::vector<aasm::plan::PinnedFile>> hash_pinned_files(const FilesystemIR& fs, Diagnostics& diags) {
  std::vector<aasm::plan::PinnedFile> pinned;
  bool failed = false;
  for (const PathGrant& pin : fs.pinned) {
    if (auto file = hash_one(pin, diags)) pinned.push_back(std::move(*file));
    else failed = true;
  }
  if (failed) return std::nullopt;
  return pinned;  // the IR's order: by path
}

}  // namespace aasmc
