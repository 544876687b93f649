// The broker of network.outbound.hosts (docs/egress.md): the command runs in
// a network namespace of its own with loopback only, where the child made
// the broker's listening socket (127.0.0.1:kBrokerPort) before it confined
// itself; the supervisor serves that socket from the host's namespace. It
// speaks HTTP CONNECT, plain HTTP proxying and SOCKS5 CONNECT (socks5.h) on
// the one port, resolves names itself, and
// connects only where the plan's patterns allow: one client connection, one
// upstream connection, to the one checked host, so nothing sent on it can
// reach a second host. It holds no other privilege than the supervisor's
// place on the host's network; it parses only a request's head (at most
// kMaxHead bytes), and relays the rest as bytes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/result.h"
#include "plan/plan.h"

namespace aasm::egress {

inline constexpr size_t kMaxHead = 16 * 1024;

// The broker's verdict on one request, before any name is resolved.
struct Verdict {
  bool allowed = false;
  bool by_exact_pattern = false;  // a name or an address written out, not a *.suffix
  std::string why;                // the refusal: what the request is, and which list refused it
};
Verdict decide(const plan::Egress& rules, const plan::HostRequest& request);

// The variables that point the command's HTTP clients at the broker, upper
// and lower case (curl reads only lowercase http_proxy), and NO_PROXY for
// its own loopback, where nothing of the host's is.
std::vector<std::pair<std::string, std::string>> proxy_environment();

// What the broker did for one host and port, for the report and the receipt.
struct HostTally {
  std::string host;  // as the client named it, canonical (plan/host_pattern.h)
  uint16_t port = 0;
  bool allowed = false;
  std::string why;   // refused: why; allowed and failed: the last failure ("" when every connection went through)
  uint64_t connections = 0, bytes_sent = 0, bytes_received = 0;
};

// The supervision loop polls listen_fd() and calls accept_one() when it is
// readable (supervise.h), so a run that never connects starts no thread;
// each connection is served on a thread of its own.
class Broker {
 public:
  // Takes `listen_fd` over (closed by stop).
  Broker(int listen_fd, plan::Egress rules);
  ~Broker();
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  int listen_fd() const { return listen_fd_; }
  // Accepts one waiting connection and serves it on a thread of its own.
  void accept_one();
  // No new connection; every open one is shut down; returns once every
  // thread has ended. The command's end calls it: nothing is left open.
  void stop();
  // Sorted by (allowed, host, port): refused ones first.
  std::vector<HostTally> tallies() const;

 private:
  void serve(int client);
  void tally(const plan::HostRequest& request, bool allowed, const std::string& why, uint64_t sent, uint64_t received,
             bool connected);
  bool track(int fd);
  void untrack(int fd);

  int listen_fd_;
  const plan::Egress rules_;
  mutable std::mutex mutex_;
  std::condition_variable ended_;
  bool stopping_ = false;
  size_t serving_ = 0;
  std::set<int> open_;  // every socket of a connection being served, to shut down at stop
  std::map<std::tuple<bool, std::string, uint16_t>, HostTally> tallies_;
};

}  // namespace aasm::egress
