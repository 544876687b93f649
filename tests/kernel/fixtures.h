// Pieces the Landlock and attack tests share: the filesystem node that
// confines the probe, sockets on 127.0.0.1 the test owns, and a unix
// socket service.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include <atomic>
#include <cstddef>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace aasm::ktest {

// The filesystem node every plan here has: the probe's libraries and
// binary (read and execute), plus the given trees.
struct Fs {
  std::vector<std::string> read, write, execute;
  std::string yaml() const {
    std::vector<std::string> r = {"/usr", "/etc", probe_dir()}, x = {"/usr", probe_dir()};
    r.insert(r.end(), read.begin(), read.end());
    x.insert(x.end(), execute.begin(), execute.end());
    return "  filesystem:\n"
           "    read: {allow: " + flow_list(r) + "}\n"
           "    write: {allow: " + flow_list(write) + "}\n"
           "    execute: {allow: " + flow_list(x) + "}\n";
  }
};

// A place in a policy's YAML text: 1-based line and column, as
// diagnostics and the plan's provenance give them.
struct Place {
  long line = 0;
  long col = 0;
};

// The place of the first `token` in `text` at or after the first `after`:
// the line:col a test expects, computed from the YAML it wrote.
inline Place place_of(const std::string& text, const std::string& token, const std::string& after = "") {
  const size_t from = after.empty() ? 0 : text.find(after);
  REQUIRE(from != std::string::npos);
  const size_t at = text.find(token, from);
  REQUIRE(at != std::string::npos);
  const size_t line_start = text.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
  return {long(std::count(text.begin(), text.begin() + long(at), '\n') + 1), long(at - line_start + 1)};
}

inline void sleep_ms(long ms) {
  const timespec ts{ms / 1000, (ms % 1000) * 1000000};
  ::nanosleep(&ts, nullptr);
}

// A socket the test owns, closed at scope exit.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) { REQUIRE_MESSAGE(fd_ >= 0, "socket: ", std::strerror(errno)); }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(Socket&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  // Whether a connection (or datagram) is waiting, within `ms`.
  bool readable(int ms = 0) const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
  }

 private:
  int fd_;
};

// A root-only (0600, unless `mode` says otherwise) pathname stream socket
// in a directory of its own, outside every allow-list: the stand-in for
// docker.sock. A thread greets each connection with "hello" until the
// socket closes.
class UnixService {
 public:
  explicit UnixService(const TempDir& dir, mode_t mode = 0600) : path_(dir / "service.sock") {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strcpy(a.sun_path, path_.c_str());
    REQUIRE(::bind(socket_.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::chmod(path_.c_str(), mode) == 0);
    REQUIRE(::listen(socket_.fd(), 8) == 0);
    thread_ = std::thread([this] {
      while (!stop_) {
        if (!socket_.readable(100)) continue;
        const int fd = ::accept4(socket_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        (void)!::write(fd, "hello", 5);
        ::close(fd);
      }
    });
  }
  ~UnixService() {
    stop_ = true;
    thread_.join();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Socket socket_{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

inline sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

inline uint16_t local_port(const Socket& s) {
  sockaddr_in a{};
  socklen_t length = sizeof a;
  REQUIRE(::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&a), &length) == 0);
  return ntohs(a.sin_port);
}

// A socket of `type` bound to 127.0.0.1 on a port the kernel chose.
inline Socket bound_loopback(int type) {
  Socket s(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  const sockaddr_in a = loopback(0);
  REQUIRE(::bind(s.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0);
  return s;
}

// A TCP listener on 127.0.0.1.
inline Socket tcp_listener() {
  Socket s = bound_loopback(SOCK_STREAM);
  REQUIRE(::listen(s.fd(), 4) == 0);
  return s;
}

// Accepts the connection the probe made (it has exited; the connection
// waits in the backlog). True when there was one.
inline bool accept_one(const Socket& listener) {
  if (!listener.readable(1000)) return false;
  const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// A free TCP port on 127.0.0.1 (bound to port 0, then released).
inline uint16_t free_tcp_port() {
  Socket s = bound_loopback(SOCK_STREAM);
  return local_port(s);
}

inline std::string tcp(uint16_t port) { return "tcp:" + std::to_string(port); }
inline std::string str(uint16_t port) { return std::to_string(port); }

// The base filesystem node and nothing else of the trees.
inline Fs base_fs() { return Fs{}; }

// The trees of the filesystem tests: in/ read-only, rw/ readable and
// writable, secret/ in no allow-list.
struct Trees {
  TempDir dir;
  const std::string in = dir / "in";
  const std::string rw = dir / "rw";
  const std::string secret = dir / "secret";

  Trees() {
    for (const std::string& d : {in, rw, rw + "/sub", secret}) make_dir(d);
    write_file(in + "/file", "inside\n");
    write_file(rw + "/file", "writable\n");
    write_file(rw + "/sub/file", "moved\n");
    write_file(secret + "/file", "outside\n");
  }

  Fs fs() const { return Fs{{in, rw}, {rw}, {}}; }
  std::string plan(const std::string& name = "trees") const { return compile_spec(dir, name, fs().yaml()); }
  // Every tree readable, writable and executable: the controls' plan.
  std::string open_plan() const { return compile_spec(dir, "open", Fs{{dir.path()}, {dir.path()}, {dir.path()}}.yaml()); }
};

// An abstract unix stream socket the test listens on, named uniquely.
struct AbstractListener {
  std::string name;
  Socket socket{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  AbstractListener() {
    static std::atomic<int> counter{0};
    name = "aasm-kt-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name.data(), name.size());
    const socklen_t length = socklen_t(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    REQUIRE(::bind(socket.fd(), reinterpret_cast<const sockaddr*>(&a), length) == 0);
    REQUIRE(::listen(socket.fd(), 4) == 0);
  }
};

}  // namespace aasm::ktest
