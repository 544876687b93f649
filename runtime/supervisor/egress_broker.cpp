#include "supervisor/egress_broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

#include "supervisor/socket_io.h"
#include "supervisor/socks5.h"

namespace aasm::egress {
namespace {

constexpr int kHeadTimeoutMs = 30'000;     // a client that never finishes its request head
constexpr int kConnectTimeoutMs = 15'000;  // an upstream that never answers the SYN
constexpr size_t kRelayBuffer = 1024 * 1024;  // a pipe of this size: fewer splices per MiB

std::string proxy_url() { return "http://127.0.0.1:" + std::to_string(plan::kBrokerPort); }

void answer(int client, const char* status, const std::string& why) {
  write_all(client, std::string("HTTP/1.1 ") + status + "\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\naasm: " +
                        why + "\n");
}

// The request head (through the blank line) and whatever came after it in
// the same reads; false when the client closed, stalled or sent more than
// kMaxHead without a blank line.
bool read_head(int client, std::string& head, std::string& rest) {
  std::string buffer;
  char chunk[4096];
  while (buffer.size() < kMaxHead) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, kHeadTimeoutMs) <= 0) return false;
    const ssize_t n = ::recv(client, chunk, sizeof chunk, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(chunk, size_t(n));
    if (const size_t end = buffer.find("\r\n\r\n"); end != std::string::npos) {
      head = buffer.substr(0, end + 4);
      rest = buffer.substr(end + 4);
      return head.size() <= kMaxHead;
    }
  }
  return false;
}

struct Request {
  bool tunnel = false;       // CONNECT
  std::string authority;     // host[:port] as the client wrote it
  std::string upstream_head; // plain HTTP: the head to send on, in origin form
};

// The request line and, for plain HTTP, the head rewritten for the origin:
// origin-form target, the client's Host, Connection and Proxy-* headers
// replaced, one request per connection.
Result<Request> parse_request(const std::string& head) {
  const size_t line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
  if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 7, "HTTP/1.") != 0)
    return make_error("not an HTTP/1 request line");
  const std::string method = line.substr(0, sp1), target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  Request request;
  if (method == "CONNECT") {
    request.tunnel = true;
    request.authority = target;
    return request;
  }
  constexpr std::string_view kHttp = "http://";
  if (target.size() < kHttp.size() || !std::equal(kHttp.begin(), kHttp.end(), target.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      }))
    return make_error(target.rfind("https://", 0) == 0
                          ? "an https:// URL goes through CONNECT, not a plain proxy request"
                          : "a proxy request names an absolute http:// URL or uses CONNECT");
  const size_t path = target.find_first_of("/?", kHttp.size());
  request.authority = target.substr(kHttp.size(), path == std::string::npos ? std::string::npos : path - kHttp.size());
  if (request.authority.find('@') != std::string::npos) return make_error("a URL with user information");
  std::string origin = path == std::string::npos ? "/" : target.substr(path);
  if (origin.front() == '?') origin.insert(0, "/");
  std::string out = method + " " + origin + line.substr(sp2) + "\r\nHost: " + request.authority + "\r\n";
  size_t at = line_end + 2;
  while (at < head.size()) {
    const size_t end = head.find("\r\n", at);
    const std::string header = head.substr(at, end - at);
    at = end + 2;
    if (header.empty()) break;
    std::string name = header.substr(0, header.find(':'));
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (name == "host" || name == "connection" || name == "keep-alive" || name == "proxy-connection" ||
        name.rfind("proxy-", 0) == 0)
      continue;
    out += header + "\r\n";
  }
  request.upstream_head = out + "Connection: close\r\n\r\n";
  return request;
}

// An address a name beneath a *.suffix may not lead to: the host's own
// loopback, the link-local range (cloud metadata at 169.254.169.254), the
// unspecified address. A DNS answer is whatever the name's owner says.
bool host_local(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    const uint32_t a = ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr);
    return (a >> 24) == 127 || (a >> 16) == 0xA9FE || a == 0;
  }
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a)) {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    std::memcpy(&v4.sin_addr, &a.s6_addr[12], 4);
    return host_local(reinterpret_cast<const sockaddr*>(&v4));
  }
  return IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_LINKLOCAL(&a) || IN6_IS_ADDR_UNSPECIFIED(&a);
}

int connect_within(const sockaddr* address, socklen_t length, std::string& failure) {
  const int fd = ::socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    failure = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int error = ::connect(fd, address, length) == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    socklen_t size = sizeof error;
    error = ::poll(&p, 1, kConnectTimeoutMs) <= 0 ? ETIMEDOUT
            : ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0 ? errno
                                                                          : error;
  }
  if (error) {
    failure = std::string("connect: ") + std::strerror(error);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, 0);  // blocking again: the relay polls
  return fd;
}

// The first address of the request's host that connects, or -1 with why.
int connect_upstream(const plan::HostRequest& request, bool may_reach_host_local, std::string& failure) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = request.address ? AI_NUMERICHOST : 0;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(request.port);
  if (const int error = ::getaddrinfo(request.host.c_str(), port.c_str(), &hints, &found); error != 0) {
    failure = std::string("cannot resolve: ") + ::gai_strerror(error);
    return -1;
  }
  int fd = -1;
  failure = "resolves only to the host's own addresses (loopback, link-local), which a *.suffix pattern does not reach";
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next)
    if (may_reach_host_local || !host_local(a->ai_addr)) fd = connect_within(a->ai_addr, a->ai_addrlen, failure);
  ::freeaddrinfo(found);
  return fd;
}

// One direction, from `from` to `to`, until `from` ends or either fails;
// then `to` is shut for writing, so its peer sees the end. The bytes go
// through a pipe by splice(2), never through this process's memory; without
// SPLICE_F_MORE, which held segments back and cost a 100 MiB download a
// further 10% here (docs/egress.md). What it carried.
uint64_t pump(int from, int to) {
  int pipe_fds[2];
  uint64_t carried = 0;
  if (::pipe2(pipe_fds, O_CLOEXEC) == 0) {
    ::fcntl(pipe_fds[1], F_SETPIPE_SZ, int(kRelayBuffer));
    for (;;) {
      const ssize_t in = ::splice(from, nullptr, pipe_fds[1], nullptr, kRelayBuffer, SPLICE_F_MOVE);
      if (in < 0 && errno == EINTR) continue;
      if (in <= 0) break;
      ssize_t left = in;
      while (left > 0) {
        const ssize_t out = ::splice(pipe_fds[0], nullptr, to, nullptr, size_t(left), SPLICE_F_MOVE);
        if (out < 0 && errno == EINTR) continue;
        if (out <= 0) break;
        left -= out;
      }
      carried += uint64_t(in - left);
      if (left > 0) break;
    }
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
  }
  ::shutdown(to, SHUT_WR);
  return carried;
}

// Bytes both ways, each on a thread of its own, until both have ended;
// what each way carried (sent: client to upstream).
std::pair<uint64_t, uint64_t> relay(int client, int upstream) {
  uint64_t sent = 0;
  std::thread up([&] { sent = pump(client, upstream); });
  const uint64_t received = pump(upstream, client);
  up.join();
  return {sent, received};
}

// How a client asked: the reply to each outcome is the dialect's.
enum class Dialect { kHttpTunnel, kHttpForward, kSocks5 };
enum class Outcome { kEstablished, kRefused, kUnreachable };

// A request read and checked for form, not yet against the plan.
struct Opening {
  Dialect dialect;
  plan::HostRequest target;
  std::string to_upstream;  // plain HTTP: the rewritten head and what followed it
};

// An established plain HTTP request answers nothing: the origin does.
bool answer(int client, Dialect dialect, Outcome outcome, const std::string& why) {
  if (dialect == Dialect::kSocks5)
    return write_all(client, socks5::reply(outcome == Outcome::kEstablished ? socks5::Reply::kSucceeded
                                           : outcome == Outcome::kRefused   ? socks5::Reply::kNotAllowed
                                                                            : socks5::Reply::kHostUnreachable));
  switch (outcome) {
    case Outcome::kEstablished:
      return dialect == Dialect::kHttpForward || write_all(client, "HTTP/1.1 200 Connection established\r\n\r\n");
    case Outcome::kRefused: answer(client, "403 Forbidden", why); return false;
    case Outcome::kUnreachable: answer(client, "502 Bad Gateway", why); return false;
  }
  return false;
}

// Whether the client's first byte, once it comes, is SOCKS5's version.
bool speaks_socks5(int client) {
  pollfd p{client, POLLIN, 0};
  uint8_t first = 0;
  return ::poll(&p, 1, kHeadTimeoutMs) == 1 && ::recv(client, &first, 1, MSG_PEEK) == 1 && first == socks5::kVersion;
}

// HTTP/1: CONNECT or an absolute http:// URL; malformed ones answered 400.
std::optional<Opening> open_http(int client) {
  std::string head, rest;
  if (!read_head(client, head, rest)) return answer(client, "400 Bad Request", "no complete request head"), std::nullopt;
  Result<Request> request = parse_request(head);
  if (!request) return answer(client, "400 Bad Request", request.error().message), std::nullopt;
  Result<plan::HostRequest> target = plan::parse_host_request(request->authority, request->tunnel ? 443 : 80);
  if (!target) return answer(client, "400 Bad Request", target.error().message), std::nullopt;
  return Opening{request->tunnel ? Dialect::kHttpTunnel : Dialect::kHttpForward, *target,
                 request->tunnel ? rest : request->upstream_head + rest};
}

// SOCKS5 CONNECT (socks5.h); a malformed one answered as SOCKS5 answers.
std::optional<Opening> open_socks5(int client) {
  Result<std::string> authority = socks5::read_connect(client, kHeadTimeoutMs);
  if (!authority) return std::nullopt;
  Result<plan::HostRequest> target = plan::parse_host_request(*authority, 0);
  if (!target) return write_all(client, socks5::reply(socks5::Reply::kGeneralFailure)), std::nullopt;
  return Opening{Dialect::kSocks5, *target, ""};
}

}  // namespace

Verdict decide(const plan::Egress& rules, const plan::HostRequest& request) {
  const std::string what = (request.address ? "address " : "") + plan::host_port_text(request.host, request.port);
  for (const plan::HostPattern& denied : rules.deny)
    if (plan::host_matches(denied, request, /*unwritten_port_is_any=*/true))
      return {false, false, what + " is refused by network.outbound.hosts.deny (" + plan::host_pattern_text(denied) + ")"};
  for (const plan::HostPattern& allowed : rules.allow)
    if (plan::host_matches(allowed, request))
      return {true, allowed.kind != plan::HostPattern::Kind::kSuffix, ""};
  if (rules.any_name && !request.address) return {true, false, ""};
  return {false, false,
          what + (request.address ? " is an address that network.outbound.hosts does not list"
                                  : " is not in network.outbound.hosts")};
}

std::vector<std::pair<std::string, std::string>> proxy_environment() {
  const std::string url = proxy_url();
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
    out.emplace_back(name, url);
  for (const char* name : {"NO_PROXY", "no_proxy"}) out.emplace_back(name, "localhost,127.0.0.1,::1");
  return out;
}

Broker::Broker(int listen_fd, plan::Egress rules) : listen_fd_(listen_fd), rules_(std::move(rules)) {}

Broker::~Broker() { stop(); }

void Broker::stop() {
  std::unique_lock lock(mutex_);
  if (!stopping_) {
    stopping_ = true;
    for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
  }
  ended_.wait(lock, [this] { return serving_ == 0; });
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
}

bool Broker::track(int fd) {
  std::lock_guard lock(mutex_);
  if (stopping_) return false;
  open_.insert(fd);
  return true;
}

void Broker::untrack(int fd) {
  std::lock_guard lock(mutex_);
  open_.erase(fd);
}

void Broker::accept_one() {
  const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (client < 0) return;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(client);
      return;
    }
    ++serving_;
    open_.insert(client);
  }
  std::thread([this, client] {
    serve(client);
    std::lock_guard lock(mutex_);
    open_.erase(client);
    ::close(client);
    --serving_;
    ended_.notify_all();
  }).detach();
}

void Broker::serve(int client) {
  const std::optional<Opening> opening = speaks_socks5(client) ? open_socks5(client) : open_http(client);
  if (!opening) return;
  const plan::HostRequest& target = opening->target;
  const Verdict verdict = decide(rules_, target);
  if (!verdict.allowed) {
    tally(target, false, verdict.why, 0, 0, false);
    answer(client, opening->dialect, Outcome::kRefused, verdict.why);
    return;
  }
  std::string failure;
  const int upstream = connect_upstream(target, verdict.by_exact_pattern, failure);
  if (upstream < 0) {
    tally(target, true, failure, 0, 0, false);
    answer(client, opening->dialect, Outcome::kUnreachable, plan::host_port_text(target.host, target.port) + ": " + failure);
    return;
  }
  if (!track(upstream)) {
    ::close(upstream);
    return;
  }
  const bool started = answer(client, opening->dialect, Outcome::kEstablished, "") &&
                       write_all(upstream, opening->to_upstream);
  const auto [sent, received] = started ? relay(client, upstream) : std::pair<uint64_t, uint64_t>{0, 0};
  untrack(upstream);
  ::close(upstream);
  tally(target, true, "", sent + opening->to_upstream.size(), received, true);
}

void Broker::tally(const plan::HostRequest& request, bool allowed, const std::string& why, uint64_t sent,
                   uint64_t received, bool connected) {
  std::lock_guard lock(mutex_);
  HostTally& t = tallies_[{allowed, request.host, request.port}];
  t.host = request.host;
  t.port = request.port;
  t.allowed = allowed;
  if (!connected || !allowed) t.why = why;
  t.connections += 1;
  t.bytes_sent += sent;
  t.bytes_received += received;
}

std::vector<HostTally> Broker::tallies() const {
  std::lock_guard lock(mutex_);
  std::vector<HostTally> out;
  for (const auto& [key, t] : tallies_) out.push_back(t);
  return out;
}

}  // namespace aasm::egress
