#include "supervisor/explain_tracer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <cstddef>
#include <string>

#include "kernel/landlock_uapi.h"

namespace aasm::explain {
namespace {

namespace fs = landlock::fs;

// What a traced call asks of Landlock, which decides how its arguments are
// read and which right it needed.
enum class Shape : uint8_t {
  kOpen,        // path, flags: read_file/read_dir, write_file, make_reg (O_CREAT), truncate (O_TRUNC)
  kOpenHow,     // openat2: path, struct open_how
  kCreate,      // creat: path
  kMakeDir,     // path
  kMakeNode,    // path, mode: make_reg/char/block/fifo/sock
  kUnlink,      // path, flags (AT_REMOVEDIR): remove_file or remove_dir
  kRemoveDir,   // path
  kRename,      // old path, new path: refer, remove and make
  kLink,        // old path, new path: refer, make_reg
  kSymlink,     // target (not resolved), new path: make_sym
  kTruncate,    // path
  kTruncateFd,  // descriptor
  kExecute,     // path
  kIoctl,       // descriptor: ioctl_dev
  kConnect,     // socket, address: connect_tcp, or the abstract unix socket scope
  kBind,        // socket, address: bind_tcp
  kSignal,      // the signal scope
};

constexpr int kNone = -1;
constexpr int kCwd = -2;  // the path is relative to the working directory (no dirfd argument)

// The calls --explain watches, one row each, with where their arguments
// are. The rights each needed come from kernel/landlock_rights.def through
// landlock_uapi.h (right_for below).
struct TracedCall {
  const char* name;
  long nr;
  Shape shape;
  int dirfd = kCwd, path = kNone;    // the path the right applies to
  int dirfd2 = kCwd, path2 = kNone;  // a second path (rename/link: the new one, which is reported)
  int flags = kNone;                 // open flags, mknod mode, unlinkat flags, open_how
  int fd = kNone;                    // a descriptor the right applies to
};

constexpr TracedCall kTracedCalls[] = {
#ifdef SYS_open
    {"open", SYS_open, Shape::kOpen, kCwd, 0, kCwd, kNone, 1},
    {"creat", SYS_creat, Shape::kCreate, kCwd, 0},
    {"mkdir", SYS_mkdir, Shape::kMakeDir, kCwd, 0},
    {"mknod", SYS_mknod, Shape::kMakeNode, kCwd, 0, kCwd, kNone, 1},
    {"unlink", SYS_unlink, Shape::kUnlink, kCwd, 0},
    {"rmdir", SYS_rmdir, Shape::kRemoveDir, kCwd, 0},
    {"rename", SYS_rename, Shape::kRename, kCwd, 0, kCwd, 1},
    {"link", SYS_link, Shape::kLink, kCwd, 0, kCwd, 1},
    {"symlink", SYS_symlink, Shape::kSymlink, kCwd, kNone, kCwd, 1},
#endif
    {"openat", SYS_openat, Shape::kOpen, 0, 1, kCwd, kNone, 2},
    {"openat2", SYS_openat2, Shape::kOpenHow, 0, 1, kCwd, kNone, 2},
    {"mkdirat", SYS_mkdirat, Shape::kMakeDir, 0, 1},
    {"mknodat", SYS_mknodat, Shape::kMakeNode, 0, 1, kCwd, kNone, 2},
    {"unlinkat", SYS_unlinkat, Shape::kUnlink, 0, 1, kCwd, kNone, 2},
    {"renameat", SYS_renameat, Shape::kRename, 0, 1, 2, 3},
    {"renameat2", SYS_renameat2, Shape::kRename, 0, 1, 2, 3},
    {"linkat", SYS_linkat, Shape::kLink, 0, 1, 2, 3},
    {"symlinkat", SYS_symlinkat, Shape::kSymlink, kCwd, kNone, 1, 2},
    {"truncate", SYS_truncate, Shape::kTruncate, kCwd, 0},
    {"ftruncate", SYS_ftruncate, Shape::kTruncateFd, kCwd, kNone, kCwd, kNone, kNone, 0},
    {"execve", SYS_execve, Shape::kExecute, kCwd, 0},
    {"execveat", SYS_execveat, Shape::kExecute, 0, 1},
    {"ioctl", SYS_ioctl, Shape::kIoctl, kCwd, kNone, kCwd, kNone, kNone, 0},
    {"connect", SYS_connect, Shape::kConnect, kCwd, kNone, kCwd, kNone, kNone, 0},
    {"bind", SYS_bind, Shape::kBind, kCwd, kNone, kCwd, kNone, kNone, 0},
    {"kill", SYS_kill, Shape::kSignal},
    {"tkill", SYS_tkill, Shape::kSignal},
    {"tgkill", SYS_tgkill, Shape::kSignal},
};
constexpr uint32_t kRows = sizeof kTracedCalls / sizeof kTracedCalls[0];

// ---------------------------------------------------------------- the caller

// The NUL-terminated string at `address` in `tid`, read a page at most at a
// time (a string may end just before an unmapped page); "" when unreadable.
std::string read_string(pid_t tid, uint64_t address) {
  std::string text;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  while (text.size() < PATH_MAX) {
    char chunk[4096];
    const size_t wanted = size_t(std::min<uint64_t>(sizeof chunk, page - address % page));
    iovec local{chunk, wanted}, remote{reinterpret_cast<void*>(address), wanted};
    const ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n <= 0) break;
    const size_t end = std::string_view(chunk, size_t(n)).find('\0');
    text.append(chunk, end == std::string_view::npos ? size_t(n) : end);
    if (end != std::string_view::npos) break;
    address += uint64_t(n);
  }
  return text;
}

bool read_memory(pid_t tid, uint64_t address, void* into, size_t size) {
  iovec local{into, size}, remote{reinterpret_cast<void*>(address), size};
  return ::process_vm_readv(tid, &local, 1, &remote, 1, 0) == ssize_t(size);
}

// What /proc/TID/<link> names ("cwd", "fd/3"), as the tracee's mount
// namespace shows it to us.
std::string proc_link(pid_t tid, const std::string& link) {
  char target[PATH_MAX];
  const std::string at = "/proc/" + std::to_string(tid) + "/" + link;
  const ssize_t n = ::readlink(at.c_str(), target, sizeof target);
  return n > 0 ? std::string(target, size_t(n)) : std::string();
}

// The absolute path a (dirfd, path) pair names, lexically: the caller's
// working directory or directory descriptor, then the path.
std::string resolve(pid_t tid, const uint64_t args[6], int dirfd_arg, int path_arg) {
  std::string path = read_string(tid, args[path_arg]);
  if (!path.empty() && path.front() == '/') return path;
  const int dirfd = dirfd_arg == kCwd ? AT_FDCWD : int(args[dirfd_arg]);
  std::string base = dirfd == AT_FDCWD ? proc_link(tid, "cwd") : proc_link(tid, "fd/" + std::to_string(dirfd));
  if (path.empty()) return base;  // AT_EMPTY_PATH: the descriptor itself
  if (base.empty() || base.back() != '/') base += '/';
  return base + path;
}

// Whether the tracee sees our mounts (not beneath a filesystem view).
bool same_mounts(pid_t tid) {
  struct stat mine, theirs;
  const std::string at = "/proc/" + std::to_string(tid) + "/ns/mnt";
  return ::stat("/proc/self/ns/mnt", &mine) == 0 && ::stat(at.c_str(), &theirs) == 0 && mine.st_ino == theirs.st_ino &&
         mine.st_dev == theirs.st_dev;
}

// Landlock checks the file a path resolves to, so the rule that allows it
// must name the symlinks' target, not the link (/usr/share/locale/
// locale.alias is /etc/locale.alias on Debian; /usr/bin/cc leads to the
// compiler through /etc/alternatives): the directories resolved, and the
// last component too where the call follows it. Only where the tracee
// shares our mounts, and never beneath /proc (its self is not the tracee's).
std::string real_path(pid_t tid, const std::string& path, bool follow_last) {
  if (path.size() < 2 || path[0] != '/' || path.rfind("/proc/", 0) == 0 || !same_mounts(tid)) return path;
  char buffer[PATH_MAX];
  if (follow_last && ::realpath(path.c_str(), buffer)) return buffer;
  const size_t slash = path.find_last_of('/');
  if (!::realpath(slash == 0 ? "/" : path.substr(0, slash).c_str(), buffer)) return path;
  const std::string parent = buffer;
  return (parent == "/" ? "" : parent) + path.substr(slash);
}

// The type of what `path` names for the caller, seen through its root;
// nothing when it does not exist.
std::optional<mode_t> type_for(pid_t tid, const std::string& path) {
  struct stat st;
  const std::string at = "/proc/" + std::to_string(tid) + "/root" + path;
  if (::stat(at.c_str(), &st) != 0) return std::nullopt;
  return st.st_mode & S_IFMT;
}

uint64_t open_rights(uint64_t flags, std::optional<mode_t> type) {
  uint64_t rights = 0;
  const uint64_t mode = flags & O_ACCMODE;
  const bool directory = (flags & O_DIRECTORY) || type == S_IFDIR;
  if (mode == O_RDONLY || mode == O_RDWR) rights |= directory ? fs::kReadDir : fs::kReadFile;
  if (mode == O_WRONLY || mode == O_RDWR) rights |= fs::kWriteFile;
  if ((flags & O_CREAT) && !type) rights |= fs::kMakeReg;
  if (flags & O_TRUNC) rights |= fs::kTruncate;
  return rights;
}

uint64_t node_rights(uint64_t mode) {
  switch (mode & S_IFMT) {
    case S_IFCHR: return fs::kMakeChar;
    case S_IFBLK: return fs::kMakeBlock;
    case S_IFIFO: return fs::kMakeFifo;
    case S_IFSOCK: return fs::kMakeSock;
    default: return fs::kMakeReg;
  }
}

// A socket address's TCP port, or for an abstract unix socket its name
// ("@name"); nothing for anything else.
struct Peer {
  std::optional<uint16_t> port;
  std::string abstract_name;
};

Peer read_peer(pid_t tid, uint64_t address, uint64_t length) {
  Peer peer;
  sockaddr_storage storage{};
  const size_t size = size_t(std::min<uint64_t>(length, sizeof storage));
  if (size < sizeof(sa_family_t) || !read_memory(tid, address, &storage, size)) return peer;
  if ((storage.ss_family == AF_INET && size >= sizeof(sockaddr_in)) || (storage.ss_family == AF_INET6 && size >= sizeof(sockaddr_in6)))
    peer.port = ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);  // the same offset in both
  const size_t name_at = offsetof(sockaddr_un, sun_path);
  if (storage.ss_family == AF_UNIX && size > name_at + 1 && reinterpret_cast<const sockaddr_un*>(&storage)->sun_path[0] == '\0')
    peer.abstract_name = "@" + std::string(reinterpret_cast<const char*>(&storage) + name_at + 1, size - name_at - 1);
  return peer;
}

// The denial the failed call stands for, when the ruleset applied handles
// what the call needed; nothing when Landlock cannot have refused it.
std::optional<denials::Denial> landlock_denial(pid_t tid, const TracedCall& row, const uint64_t args[6], int error,
                                               const plan::LandlockRuleset& ruleset) {
  denials::Denial d;
  d.witness = denials::Witness::kTracer;
  d.syscall = int(row.nr);
  d.error = error;
  d.layer = denials::Layer::kLandlockFs;
  const auto path_of = [&](int dirfd, int path) { return resolve(tid, args, dirfd, path); };
  const uint64_t flags = row.flags == kNone ? 0 : args[row.flags];
  switch (row.shape) {
    case Shape::kOpen:
    case Shape::kOpenHow: {
      d.path = path_of(row.dirfd, row.path);
      uint64_t open_flags = flags;
      if (row.shape == Shape::kOpenHow && !read_memory(tid, flags, &open_flags, sizeof open_flags)) return std::nullopt;
      d.rights = open_rights(open_flags, type_for(tid, d.path));
      break;
    }
    case Shape::kCreate:
      d.path = path_of(row.dirfd, row.path);
      d.rights = open_rights(O_WRONLY | O_CREAT | O_TRUNC, type_for(tid, d.path));
      break;
    case Shape::kMakeDir: d.path = path_of(row.dirfd, row.path), d.rights = fs::kMakeDir; break;
    case Shape::kMakeNode: d.path = path_of(row.dirfd, row.path), d.rights = node_rights(flags); break;
    case Shape::kUnlink:
      d.path = path_of(row.dirfd, row.path);
      d.rights = (flags & AT_REMOVEDIR) ? fs::kRemoveDir : fs::kRemoveFile;
      break;
    case Shape::kRemoveDir: d.path = path_of(row.dirfd, row.path), d.rights = fs::kRemoveDir; break;
    case Shape::kRename:
    case Shape::kLink:
      d.path = path_of(row.dirfd2, row.path2);
      d.arguments = "from " + path_of(row.dirfd, row.path);
      d.rights = fs::kRefer | fs::kMakeReg | (row.shape == Shape::kRename ? fs::kRemoveFile : 0);
      break;
    case Shape::kSymlink: d.path = path_of(row.dirfd2, row.path2), d.rights = fs::kMakeSym; break;
    case Shape::kTruncate: d.path = path_of(row.dirfd, row.path), d.rights = fs::kTruncate; break;
    case Shape::kTruncateFd: d.path = proc_link(tid, "fd/" + std::to_string(int(args[row.fd]))), d.rights = fs::kTruncate; break;
    case Shape::kExecute: d.path = path_of(row.dirfd, row.path), d.rights = fs::kExecute; break;
    case Shape::kIoctl: d.path = proc_link(tid, "fd/" + std::to_string(int(args[row.fd]))), d.rights = fs::kIoctlDev; break;
    case Shape::kConnect:
    case Shape::kBind: {
      const Peer peer = read_peer(tid, args[1], args[2]);
      if (peer.port) {
        d.layer = denials::Layer::kLandlockNet;
        d.port = *peer.port;
        d.rights = row.shape == Shape::kConnect ? landlock::net::kConnectTcp : landlock::net::kBindTcp;
        return (ruleset.handled_net & d.rights) ? std::optional(d) : std::nullopt;
      }
      if (row.shape == Shape::kBind || peer.abstract_name.empty()) return std::nullopt;
      d.layer = denials::Layer::kLandlockScope;
      d.path = peer.abstract_name;
      d.rights = landlock::scope::kAbstractUnixSocket;
      return (ruleset.scoped & d.rights) ? std::optional(d) : std::nullopt;
    }
    case Shape::kSignal:
      d.layer = denials::Layer::kLandlockScope;
      d.rights = landlock::scope::kSignal;
      d.arguments = "pid " + std::to_string(int(args[0]));
      return (ruleset.scoped & d.rights) ? std::optional(d) : std::nullopt;
  }
  d.rights &= ruleset.handled_fs;
  if (!d.rights) return std::nullopt;
  const bool follows = row.shape == Shape::kOpen || row.shape == Shape::kOpenHow || row.shape == Shape::kTruncate ||
                       row.shape == Shape::kExecute;
  if (row.shape != Shape::kTruncateFd && row.shape != Shape::kIoctl) d.path = real_path(tid, d.path, follows);
  return d;
}

}  // namespace

unsigned trace_options() {
  return PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
         PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
}

seccomp::PreparedFilter trace_filter(uint32_t audit_arch) {
  seccomp::PreparedFilter filter;
  std::vector<sock_filter>& p = filter.instructions;
  // Another architecture's calls pass: the plan's filters answer them.
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 1, 0));
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (uint32_t row = 0; row < kRows; ++row) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(kTracedCalls[row].nr), 0, 1));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | row));
  }
  p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return filter;
}

Tracer::Tracer(pid_t command, const plan::LandlockRuleset& effective, denials::Log& log)
    : command_(command), effective_(effective), log_(log) {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  signal_fd_ = ::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
}

Tracer::~Tracer() {
  if (signal_fd_ >= 0) ::close(signal_fd_);
}

bool Tracer::handle_pending(int budget) {
  signalfd_siginfo info;
  while (::read(signal_fd_, &info, sizeof info) == ssize_t(sizeof info)) {
  }
  for (; budget > 0; --budget) {
    int status = 0;
    const pid_t tid = ::waitpid(-1, &status, WNOHANG | __WALL);
    if (tid <= 0) return false;
    on_stop(tid, status);
  }
  return true;
}

void Tracer::resume(pid_t tid, int signal) {
  // Between a traced call's entry and exit: on to its exit stop.
  const auto how = in_call_.count(tid) ? PTRACE_SYSCALL : PTRACE_CONT;
  ::ptrace(how, tid, nullptr, reinterpret_cast<void*>(long(signal)));
}

void Tracer::on_stop(pid_t tid, int status) {
  if (!WIFSTOPPED(status)) {  // it ended
    in_call_.erase(tid);
    if (tid == command_) command_status_ = status;
    return;
  }
  const int signal = WSTOPSIG(status);
  const int event = status >> 16;
  if (event == PTRACE_EVENT_SECCOMP) {
    __ptrace_syscall_info info{};
    if (::ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) > 0 &&
        info.op == PTRACE_SYSCALL_INFO_SECCOMP && info.seccomp.ret_data < kRows) {
      Call& call = in_call_[tid];
      call.row = info.seccomp.ret_data;
      std::copy(std::begin(info.seccomp.args), std::end(info.seccomp.args), call.args);
    }
    resume(tid, 0);
    return;
  }
  if (signal == (SIGTRAP | 0x80)) {  // a syscall stop: the traced call's exit
    if (auto found = in_call_.find(tid); found != in_call_.end()) {
      const Call call = found->second;
      in_call_.erase(found);
      on_call_exit(tid, call);
    }
    resume(tid, 0);
    return;
  }
  if (event == PTRACE_EVENT_STOP && (signal == SIGSTOP || signal == SIGTSTP || signal == SIGTTIN || signal == SIGTTOU)) {
    ::ptrace(PTRACE_LISTEN, tid, nullptr, nullptr);  // a group stop: stays stopped, as untraced
    return;
  }
  if (event == PTRACE_EVENT_EXEC) {
    // A thread that execs takes its leader's id: what it was in, it still is.
    unsigned long former = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &former) == 0 && pid_t(former) != tid) {
      if (auto found = in_call_.find(pid_t(former)); found != in_call_.end()) {
        in_call_[tid] = found->second;
        in_call_.erase(found);
      }
    }
  }
  // Fork, clone, exec and a new task's first stop go on; a signal is delivered.
  resume(tid, event == 0 ? signal : 0);
}

void Tracer::on_call_exit(pid_t tid, const Call& call) {
  __ptrace_syscall_info info{};
  if (::ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) <= 0 ||
      info.op != PTRACE_SYSCALL_INFO_EXIT || !info.exit.is_error)
    return;
  const int error = int(-info.exit.rval);
  if (error != EACCES && error != EPERM) return;
  if (std::optional<denials::Denial> d = landlock_denial(tid, kTracedCalls[call.row], call.args, error, effective_))
    log_.add(std::move(*d));
}

}  // namespace aasm::explain
