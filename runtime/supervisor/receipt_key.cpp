#include "supervisor/receipt_key.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/directories.h"
#include "crypto/hmac.h"

namespace aasm {
namespace {

constexpr size_t kKeyBytes = 32;

Error key_error(const std::string& path, const std::string& why) {
  return make_error("receipt key '" + path + "': " + why);
}

// The whole key file, refused unless it is a regular file of this user's
// that no one else can read, of at least kKeyBytes bytes.
Result<std::vector<uint8_t>> read_key(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return key_error(path, std::strerror(errno));
  struct stat st {};
  std::vector<uint8_t> bytes;
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != ::geteuid()) why = "not owned by this user";
  else if (st.st_mode & 077) why = "readable or writable by others (chmod 600 it)";
  else if (st.st_size < off_t(kKeyBytes) || st.st_size > 4096) why = "not between 32 and 4096 bytes";
  if (why.empty()) {
    bytes.resize(size_t(st.st_size));
    if (::read(fd, bytes.data(), bytes.size()) != ssize_t(bytes.size())) why = "short read";
  }
  ::close(fd);
  if (!why.empty()) return key_error(path, why);
  return bytes;
}

// 32 random bytes in a new file beside `path`, linked into place: a key
// another launch made first wins, and no reader sees half a key.
Status create_key(const std::string& path) {
  const std::string directory = path.substr(0, path.rfind('/'));
  if (Status made = make_private_directories(directory); !made) return key_error(path, made.error().message);
  uint8_t key[kKeyBytes];
  if (::getrandom(key, sizeof key, 0) != ssize_t(sizeof key)) return key_error(path, std::strerror(errno));
  std::string temp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);  // mode 0600
  if (fd < 0) return key_error(path, std::strerror(errno));
  const bool written = ::write(fd, key, sizeof key) == ssize_t(sizeof key) && ::fsync(fd) == 0;
  ::close(fd);
  const int linked = written ? ::link(temp.c_str(), path.c_str()) : -1;
  const int saved = errno;
  ::unlink(temp.c_str());
  if (!written || (linked != 0 && saved != EEXIST)) return key_error(path, std::strerror(saved));
  return Ok{};
}

}  // namespace

Result<std::string> host_key_path() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state && state[0] == '/') return std::string(state) + "/aasm/receipt.key";
  if (::geteuid() == 0) return std::string("/var/lib/aasm/receipt.key");
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.local/state/aasm/receipt.key";
  return make_error("receipt key: no place for this host's key (XDG_STATE_HOME and HOME unset); pass --receipt-key-file");
}

Result<ReceiptKey> load_receipt_key(const std::optional<std::string>& key_file) {
  if (key_file) {
    Result<std::vector<uint8_t>> bytes = read_key(*key_file);
    if (!bytes) return bytes.error();
    return ReceiptKey{std::move(*bytes), "caller"};
  }
  Result<std::string> path = host_key_path();
  if (!path) return path.error();
  struct stat st {};
  if (::lstat(path->c_str(), &st) != 0) {
    if (errno != ENOENT) return key_error(*path, std::strerror(errno));
    if (Status created = create_key(*path); !created) return created.error();
  }
  Result<std::vector<uint8_t>> bytes = read_key(*path);
  if (!bytes) return bytes.error();
  return ReceiptKey{std::move(*bytes), "host"};
}

std::string keyed_digest(const ReceiptKey& key, const std::string& label, const std::string& value) {
  // label NUL value: no label is a prefix of another's message.
  std::string message = label;
  message += '\0';
  message += value;
  return to_hex(hmac_sha256(key.bytes, {reinterpret_cast<const uint8_t*>(message.data()), message.size()}));
}

}  // namespace aasm
