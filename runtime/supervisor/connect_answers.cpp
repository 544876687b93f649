#include "supervisor/connect_answers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <fcntl.h>

#include <cerrno>

#include "kernel/landlock_uapi.h"
#include "kernel/seccomp_notify.h"

namespace aasm {
namespace {

// pidfd_open(2) of one thread (Linux 6.9); the headers of older hosts lack it.
constexpr unsigned kPidfdThread = O_EXCL;

// The caller's descriptor `fd`, duplicated here (pidfd_getfd(2), Linux 5.6),
// or -1. The notification names a thread, which may not lead its group.
int caller_descriptor(pid_t tid, int fd) {
  int pidfd = int(::syscall(SYS_pidfd_open, tid, kPidfdThread));
  if (pidfd < 0) pidfd = int(::syscall(SYS_pidfd_open, tid, 0));
  if (pidfd < 0) return -1;
  const int copy = int(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  ::close(pidfd);
  return copy;
}

int socket_option(int socket, int name) {
  int value = -1;
  socklen_t size = sizeof value;
  return ::getsockopt(socket, SOL_SOCKET, name, &value, &size) == 0 ? value : -1;
}

}  // namespace

std::optional<ConnectAnswers> ConnectAnswers::for_ruleset(const plan::LandlockRuleset& effective) {
  if (!(effective.handled_net & landlock::net::kConnectTcp)) return std::nullopt;
  ConnectAnswers answers;
  for (const plan::LandlockNetRule& rule : effective.net_rules)
    if (rule.access & landlock::net::kConnectTcp) answers.allowed_ports_.push_back(rule.port);
  std::sort(answers.allowed_ports_.begin(), answers.allowed_ports_.end());
  return answers;
}

namespace {

// The address's family and port, where it is an inet one.
std::optional<std::pair<int, uint16_t>> inet_address_of(const seccomp_notif& call) {
  const uint64_t address = call.data.args[1];
  const uint64_t length = call.data.args[2];
  sockaddr_in6 peer{};  // the larger of the two; family and port lie at the same offsets in both
  const size_t wanted = std::min<uint64_t>(length, sizeof peer);
  if (wanted < sizeof(sockaddr_in)) return std::nullopt;  // the kernel's EINVAL, not ours
  iovec local{&peer, wanted}, remote{reinterpret_cast<void*>(address), wanted};
  if (::process_vm_readv(pid_t(call.pid), &local, 1, &remote, 1, 0) != ssize_t(wanted)) return std::nullopt;
  if (peer.sin6_family != AF_INET && peer.sin6_family != AF_INET6) return std::nullopt;
  if (peer.sin6_family == AF_INET6 && wanted < sizeof(sockaddr_in6)) return std::nullopt;
  return std::pair<int, uint16_t>{peer.sin6_family, ntohs(peer.sin6_port)};
}

bool is_tcp_socket(const seccomp_notif& call, int family) {
  const int socket = caller_descriptor(pid_t(call.pid), int(call.data.args[0]));
  if (socket < 0) return false;
  const bool tcp = socket_option(socket, SO_DOMAIN) == family && socket_option(socket, SO_PROTOCOL) == IPPROTO_TCP;
  ::close(socket);
  return tcp;
}

}  // namespace

std::optional<uint16_t> tcp_port_named(const seccomp_notif& call) {
  const auto address = inet_address_of(call);
  if (!address || !is_tcp_socket(call, address->first)) return std::nullopt;
  return address->second;
}

// Refused only what Landlock refuses: a TCP socket connecting, with an
// address of its own family, to a port outside the allow-list. Anything
// unreadable or unusual goes on to the kernel, which answers it as it would.
std::optional<uint16_t> ConnectAnswers::refused_port(const seccomp_notif& call) const {
  const auto address = inet_address_of(call);
  if (!address || std::binary_search(allowed_ports_.begin(), allowed_ports_.end(), address->second))
    return std::nullopt;
  if (!is_tcp_socket(call, address->first)) return std::nullopt;
  return address->second;
}

void ConnectAnswers::answer(int listener, const seccomp_notif& call, denials::Log* denials) {
  const std::optional<uint16_t> port = refused_port(call);
  if (port && seccomp::still_waiting(listener, call.id)) {
    seccomp::answer_error(listener, call.id, ECONNREFUSED);
    ++refused_[*port];
    if (denials) {
      denials::Denial d;
      d.layer = denials::Layer::kLandlockNet;
      d.witness = denials::Witness::kListener;
      d.syscall = int(call.data.nr);
      d.error = ECONNREFUSED;
      d.rights = landlock::net::kConnectTcp;
      d.port = *port;
      denials->add(std::move(d));
    }
    return;
  }
  seccomp::answer_continue(listener, call.id);
}

std::vector<std::string> ConnectAnswers::summary() const {
  std::vector<std::string> lines;
  for (const auto& [port, count] : refused_)
    lines.push_back("network: " + std::to_string(count) + " connect() call(s) to tcp port " + std::to_string(port) +
                    " answered ECONNREFUSED by the supervisor (network.outbound does not allow it; Landlock would "
                    "have answered EACCES)");
  return lines;
}

}  // namespace aasm
