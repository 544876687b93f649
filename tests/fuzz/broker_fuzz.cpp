// libFuzzer target for the egress broker (supervisor/egress_broker.h): the
// bytes a confined command may send to 127.0.0.1:3128, over a real loopback
// connection, to a broker whose plan allows no host (so nothing is ever
// resolved or connected). Whatever the bytes, HTTP or SOCKS5, the broker
// must not crash, hang or leak, and must never answer that a connection
// was established.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "plan/host_pattern.h"
#include "supervisor/egress_broker.h"
#include "supervisor/socks5.h"

namespace {

sockaddr_in g_address{};

aasm::egress::Broker& broker() {
  static aasm::egress::Broker* instance = [] {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_address.sin_family = AF_INET;
    g_address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof g_address;
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&g_address), length) != 0 ||
        ::listen(listener, 16) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&g_address), &length) != 0)
      std::abort();
    aasm::plan::Egress rules;  // no allow-list entry, any_name false: every host refused
    rules.deny.push_back(*aasm::plan::parse_host_pattern("*.denied.test"));
    return new aasm::egress::Broker(listener, rules);
  }();
  return *instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 2 * aasm::egress::kMaxHead) return 0;
  aasm::egress::Broker& b = broker();
  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&g_address), sizeof g_address) != 0) std::abort();
  b.accept_one();
  for (size_t sent = 0; sent < size;) {
    const ssize_t n = ::send(client, data + sent, size - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the broker answered and closed before reading it all
    sent += size_t(n);
  }
  ::shutdown(client, SHUT_WR);
  std::string answer;
  char buffer[4096];
  for (;;) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) std::abort();  // the broker hangs on a closed request
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, size_t(n));
  }
  ::close(client);
  // Nothing is allowed: never "200 Connection established", never SOCKS5's
  // reply 0 (succeeded) after its method choice.
  if (answer.rfind("HTTP/1.1 200", 0) == 0) std::abort();
  const std::string chosen{char(aasm::egress::socks5::kVersion), 0};
  if (answer.rfind(chosen, 0) == 0 && answer.size() >= 4 && answer[2] == char(aasm::egress::socks5::kVersion) &&
      answer[3] == char(aasm::egress::socks5::Reply::kSucceeded))
    std::abort();
  return 0;
}
