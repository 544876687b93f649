#include "tables/errno_names.h"

#include <cerrno>
#include <vector>

namespace aasmc {
namespace {

struct ErrnoEntry {
  llvm::StringRef name;
  int value;
};

// Taken from <cerrno> so the values are the C library's, not retyped. Each
// name has one value; aliases (EWOULDBLOCK, ENOTSUP) are left out so a value
// prints back as one name.
constexpr ErrnoEntry kErrnos[] = {
    {"EPERM", EPERM},
    {"ENOENT", ENOENT},
    {"ESRCH", ESRCH},
    {"EINTR", EINTR},
    {"EIO", EIO},
    {"ENXIO", ENXIO},
    {"E2BIG", E2BIG},
    {"ENOEXEC", ENOEXEC},
    {"EBADF", EBADF},
    {"ECHILD", ECHILD},
    {"EAGAIN", EAGAIN},
    {"ENOMEM", ENOMEM},
    {"EACCES", EACCES},
    {"EFAULT", EFAULT},
    {"EBUSY", EBUSY},
    {"EEXIST", EEXIST},
    {"EXDEV", EXDEV},
    {"ENODEV", ENODEV},
    {"ENOTDIR", ENOTDIR},
    {"EISDIR", EISDIR},
    {"EINVAL", EINVAL},
    {"ENFILE", ENFILE},
    {"EMFILE", EMFILE},
    {"ENOTTY", ENOTTY},
    {"ETXTBSY", ETXTBSY},
    {"EFBIG", EFBIG},
    {"ENOSPC", ENOSPC},
    {"ESPIPE", ESPIPE},
    {"EROFS", EROFS},
    {"EMLINK", EMLINK},
    {"EPIPE", EPIPE},
    {"EDOM", EDOM},
    {"ERANGE", ERANGE},
    {"EDEADLK", EDEADLK},
    {"ENAMETOOLONG", ENAMETOOLONG},
    {"ENOLCK", ENOLCK},
    {"ENOSYS", ENOSYS},
    {"ENOTEMPTY", ENOTEMPTY},
    {"ELOOP", ELOOP},
    {"ENOMSG", ENOMSG},
    {"ENODATA", ENODATA},
    {"ETIME", ETIME},
    {"EPROTO", EPROTO},
    {"EOVERFLOW", EOVERFLOW},
    {"EILSEQ", EILSEQ},
    {"ENOTSOCK", ENOTSOCK},
    {"EDESTADDRREQ", EDESTADDRREQ},
    {"EMSGSIZE", EMSGSIZE},
    {"EPROTOTYPE", EPROTOTYPE},
    {"ENOPROTOOPT", ENOPROTOOPT},
    {"EPROTONOSUPPORT", EPROTONOSUPPORT},
    {"ESOCKTNOSUPPORT", ESOCKTNOSUPPORT},
    {"EOPNOTSUPP", EOPNOTSUPP},
    {"EPFNOSUPPORT", EPFNOSUPPORT},
    {"EAFNOSUPPORT", EAFNOSUPPORT},
    {"EADDRINUSE", EADDRINUSE},
    {"EADDRNOTAVAIL", EADDRNOTAVAIL},
    {"ENETDOWN", ENETDOWN},
    {"ENETUNREACH", ENETUNREACH},
    {"ENETRESET", ENETRESET},
    {"ECONNABORTED", ECONNABORTED},
    {"ECONNRESET", ECONNRESET},
    {"ENOBUFS", ENOBUFS},
    {"EISCONN", EISCONN},
    {"ENOTCONN", ENOTCONN},
    {"ETIMEDOUT", ETIMEDOUT},
    {"ECONNREFUSED", ECONNREFUSED},
    {"EHOSTDOWN", EHOSTDOWN},
    {"EHOSTUNREACH", EHOSTUNREACH},
    {"EALREADY", EALREADY},
    {"EINPROGRESS", EINPROGRESS},
    {"ECANCELED", ECANCELED},
    {"EKEYREJECTED", EKEYREJECTED},
};

}  // namespace

int errno_value(llvm::StringRef name) {
  for (const ErrnoEntry& entry : kErrnos)
    if (entry.name == name) return entry.value;
  return 0;
}

std::string errno_name(int value) {
  for (const ErrnoEntry& entry : kErrnos)
    if (entry.value == value) return entry.name.str();
  return std::to_string(value);  // a number the table does not name
}

llvm::ArrayRef<llvm::StringRef> errno_names() {
  static const std::vector<llvm::StringRef> names = [] {
    std::vector<llvm::StringRef> out;
    for (const ErrnoEntry& entry : kErrnos) out.push_back(entry.name);
    return out;
  }();
  return names;
}

}  // namespace aasmc
