// Network escapes an adversarial review found (issue 10, items 1-3), each as
// an attack under the real launcher and kernel with its negative control:
// TCP Fast Open around Landlock's connect hook, socket families outside the
// allowlist, and host services behind pathname unix sockets.
//
// Safety: traffic goes to 127.0.0.1 listeners this test owns; the socket
// family ops only create a socket and close it (an AF_PACKET socket with
// protocol 0 receives nothing); the unix socket lives in this test's temp dir.
#include <sys/stat.h>
#include <sys/un.h>

#include <atomic>
#include <thread>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;

namespace {

// A peer that answers one connection: reads what the client sent, replies
// "pong" and closes. Joined at scope exit (the listener's close ends a
// wait that never got a connection).
class Responder {
 public:
  explicit Responder(Socket listener) : listener_(std::move(listener)) {
    thread_ = std::thread([this] {
      if (!listener_.readable(10000)) return;
      const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      answered_ = true;
      char buffer[16];
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 2000) == 1) (void)!::read(fd, buffer, sizeof buffer);
      (void)!::write(fd, "pong", 4);
      ::close(fd);
    });
  }
  ~Responder() { thread_.join(); }
  uint16_t port() const { return local_port(listener_); }
  // Whether a client connected (read after the probe has exited).
  bool answered() const { return answered_; }

 private:
  Socket listener_;
  std::atomic<bool> answered_{false};
  std::thread thread_;
};

// Connects to itself once so a Responder that was never reached returns.
void release(const Responder& r) {
  if (r.answered()) return;
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in a = loopback(r.port());
  (void)::connect(s.fd(), reinterpret_cast<const sockaddr*>(&a), sizeof a);
}

std::string network(const std::string& outbound, const std::string& bind = "") {
  return "  network:\n    outbound: " + outbound + "\n" + (bind.empty() ? "" : "    bind: " + bind + "\n");
}

std::string unix_sockets(const std::string& value) { return "  ipc:\n    unix_sockets: " + value + "\n"; }

// The filesystem of every plan here: the probe's libraries and binary; the
// services' temp dirs are outside it.
std::string confined() { return base_fs().yaml(); }

// Outbound open, so only the node under test constrains the run.
constexpr const char* kUnixOpen = "{allow: [\"/\"]}";

}  // namespace

// ---------------------------------------------------------------- connect() answers

// The supervisor answers a connect() Landlock would refuse with ECONNREFUSED
// (supervisor/connect_answers.h) and lets every other one through to the
// kernel: Landlock stays the enforcement beneath the answer. These attack
// the answering layer itself.

// A port nothing listens on: what it allows reaches nothing.
static uint16_t closed_port() {
  const Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(s.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  return local_port(s);
}

// A listener of the command's own, answering CONTINUE, would take connect()
// from the supervisor's, or a call the plan refuses with an errno (the
// newest filter's notification wins). The kernel allows one listener per
// filter chain: the command's is refused, under every plan with a syscall
// filter, since its main program holds the supervisor's listener
// (supervisor/listener_answers.h).
TEST_CASE("attack network: the command cannot install a seccomp listener of its own to take connect() from the supervisor") {
  TempDir dir;
  const Socket allowed = tcp_listener(), other = tcp_listener();
  const std::string plan = compile_spec(dir, "allow", confined() + network("{allow: [\"" + tcp(local_port(allowed)) + "\"]}"));
  CHECK_RUN(probe(plan, {"tcp-connect-own-listener", str(local_port(other))}), 1, "EBUSY\n");
  CHECK_FALSE(other.readable());
  // Without a network node: the listener is there for the errno answers.
  CHECK_RUN(probe(compile_spec(dir, "open", confined()), {"tcp-connect-own-listener", str(local_port(other))}), 1,
            "EBUSY\n");
  CHECK_FALSE(other.readable());

  SUBCASE("control: without the launcher the probe's listener continues connect()") {
    CHECK_RUN(run({binary("AASM_PROBE"), "tcp-connect-own-listener", str(local_port(other))}), 0, "OK\n");
    CHECK(accept_one(other));
  }
}

TEST_CASE("attack network: racing the address past the supervisor's connect() answer never reaches a refused port") {
  TempDir dir;
  const uint16_t allowed = closed_port();
  const Socket refused = tcp_listener();
  const std::string race[] = {"tcp-connect-race", str(allowed), str(local_port(refused)), "3000"};
  const std::string plan = compile_spec(dir, "allow", confined() + network("{allow: [\"" + tcp(allowed) + "\"]}"));
  const Run r = probe(plan, {race[0], race[1], race[2], race[3]});
  CHECK(r.exit_code == 1);
  CHECK((r.out == "ECONNREFUSED\n" || r.out == "EACCES\n"));
  CHECK_FALSE(refused.readable());

  SUBCASE("control: without a network node the flipping address reaches the refused port") {
    CHECK_RUN(probe(compile_spec(dir, "open", confined()), {race[0], race[1], race[2], race[3]}), 0, "OK\n");
    CHECK(accept_one(refused));
  }
}

// ---------------------------------------------------------------- TCP Fast Open

TEST_CASE("attack network: TCP Fast Open (sendto MSG_FASTOPEN) under outbound: none is EACCES") {
  TempDir dir;
  Responder peer(tcp_listener());
  const std::string plan = compile_spec(dir, "none", confined() + network("none"));
  CHECK_RUN(probe(plan, {"tcp-fastopen", str(peer.port())}), 1, "EACCES\n");
  // The hook TFO walked around: Landlock's EACCES, answered ECONNREFUSED by the supervisor.
  CHECK_RUN(probe(plan, {"tcp-connect", str(peer.port())}), 1, "ECONNREFUSED\n");
  CHECK_FALSE(peer.answered());

  SUBCASE("control: without a network node the Fast Open client gets the reply") {
    CHECK_RUN(probe(compile_spec(dir, "open", confined()), {"tcp-fastopen", str(peer.port())}), 0, "OK\n");
    CHECK(peer.answered());
  }
  release(peer);
}

TEST_CASE("attack network: TCP Fast Open to a port outside outbound.allow is EACCES") {
  TempDir dir;
  Responder allowed(tcp_listener()), other(tcp_listener());
  const std::string plan =
      compile_spec(dir, "allow", confined() + network("{allow: [\"" + tcp(allowed.port()) + "\"]}"));
  CHECK_RUN(probe(plan, {"tcp-fastopen", str(other.port())}), 1, "EACCES\n");
  CHECK_FALSE(other.answered());

  SUBCASE("control: plain connect() to the allowed port gets through the same plan") {
    CHECK_RUN(probe(plan, {"tcp-connect", str(allowed.port())}), 0, "OK\n");
  }
  SUBCASE("control: without a network node the Fast Open client reaches the other port") {
    CHECK_RUN(probe(compile_spec(dir, "open", confined()), {"tcp-fastopen", str(other.port())}), 0, "OK\n");
    CHECK(other.answered());
  }
  release(allowed);
  release(other);
}

TEST_CASE("attack network: setsockopt TCP_FASTOPEN_CONNECT under a constrained outbound is EACCES") {
  TempDir dir;
  CHECK_RUN(probe(compile_spec(dir, "none", confined() + network("none")), {"tcp-fastopen-connect"}), 1, "EACCES\n");
  CHECK_RUN(probe(compile_spec(dir, "allow", confined() + network("{allow: [\"tcp:443\"]}")), {"tcp-fastopen-connect"}),
            1, "EACCES\n");

  SUBCASE("control: without a network node the option is set") {
    CHECK_RUN(probe(compile_spec(dir, "open", confined()), {"tcp-fastopen-connect"}), 0, "OK\n");
  }
}

// ---------------------------------------------------------------- socket families

TEST_CASE("attack network: socket families outside AF_UNIX/AF_INET/AF_INET6 are EACCES under outbound: none") {
  TempDir dir;
  // AF_PACKET needs CAP_NET_RAW, which both plans keep, so only the rule
  // stands between the command and the socket.
  const std::string raw = "  isolation:\n    linux_capabilities: [CAP_NET_RAW]\n";
  const std::string none = compile_spec(dir, "none", confined() + network("none") + raw);
  const std::string open = compile_spec(dir, "open", confined() + raw);
  for (const char* family : {"vsock", "netlink", "packet", "alg"}) {
    CAPTURE(family);
    CHECK_RUN(probe(none, {"socket", family}), 1, "EACCES\n");
    // Control: the kernel's own answer without the rule. AF_ALG may be
    // compiled out (EAFNOSUPPORT, as on the development host); what matters
    // is that the call got past the filter to the kernel.
    const Run control = probe(open, {"socket", family});
    if (std::string(family) == "alg") CHECK(control.out != "EACCES\n");
    else CHECK_RUN(control, 0, "OK\n");
  }
}

TEST_CASE("attack network: outbound: none with bind: none refuses inet sockets at socket()") {
  TempDir dir;
  const std::string both = compile_spec(dir, "both", confined() + network("none", "none"));
  // EAFNOSUPPORT: final for curl and wget, which retry an EACCES.
  CHECK_RUN(probe(both, {"socket", "inet"}), 1, "EAFNOSUPPORT\n");
  CHECK_RUN(probe(both, {"socket", "inet6"}), 1, "EAFNOSUPPORT\n");

  SUBCASE("control: outbound none alone keeps TCP sockets (a server may still bind)") {
    CHECK_RUN(probe(compile_spec(dir, "outbound", confined() + network("none")), {"socket", "inet"}), 0, "OK\n");
  }
}

// ---------------------------------------------------------------- pathname unix sockets

TEST_CASE("attack network: connect() to a 0600 host socket outside the allowed trees is EACCES") {
  TempDir dir;
  UnixService service(dir);
  SUBCASE("ipc.unix_sockets absent, filesystem confined: refused by default") {
    CHECK_RUN(probe(compile_spec(dir, "default", confined()), {"unix-connect", service.path()}), 1, "EACCES\n");
  }
  SUBCASE("ipc.unix_sockets: deny") {
    CHECK_RUN(probe(compile_spec(dir, "deny", confined() + unix_sockets("deny")), {"unix-connect", service.path()}), 1,
              "EACCES\n");
  }
  SUBCASE("control: unix_sockets {allow: [\"/\"]} connects and reads the service's greeting") {
    CHECK_RUN(probe(compile_spec(dir, "slash", confined() + unix_sockets(kUnixOpen)), {"unix-connect", service.path()}),
              0, "OK\n");
  }
  SUBCASE("control: without filesystem confinement (no unix_sockets node) it connects") {
    const std::string seccomp_only = compile_spec(dir, "unconfined", "  syscalls:\n    deny: [\"@mount\"]\n");
    CHECK_RUN(probe(seccomp_only, {"unix-connect", service.path()}), 0, "OK\n");
  }
}

TEST_CASE("attack network: under unix_sockets: deny a datagram socketpair is EACCES, stream pairs stay") {
  TempDir dir;
  const std::string deny = compile_spec(dir, "deny", confined() + unix_sockets("deny"));
  CHECK_RUN(probe(deny, {"socketpair", "dgram"}), 1, "EACCES\n");
  CHECK_RUN(probe(deny, {"socketpair", "stream"}), 0, "OK\n");
  CHECK_RUN(probe(deny, {"socketpair", "seqpacket"}), 0, "OK\n");
  CHECK_RUN(probe(deny, {"socket", "unix"}), 1, "EACCES\n");

  SUBCASE("control: with {allow: [\"/\"]} the datagram pair is made") {
    CHECK_RUN(probe(compile_spec(dir, "slash", confined() + unix_sockets(kUnixOpen)), {"socketpair", "dgram"}), 0, "OK\n");
  }
}

TEST_CASE("attack network: a unix socket allow-list needs Landlock ABI 9; refused below, stricter when degraded") {
  TempDir dir;
  UnixService service(dir);
  const std::string allow = "{allow: [\"" + dir.path() + "\"]}";
  const Run refused = probe(compile_spec(dir, "allow", confined() + unix_sockets(allow)), {"unix-connect", service.path()});
  if (refused.exit_code != 125) {
    // A host with RESOLVE_UNIX (ABI 9) enforces the list: the service is in it.
    CHECK_RUN(refused, 0, "OK\n");
    return;
  }
  CHECK(refused.out.empty());
  CHECK(refused.err.find("ipc") != std::string::npos);
  CHECK(refused.err.find("needs Landlock ABI 9") != std::string::npos);
  CHECK(refused.err.find("Linux 7.1") != std::string::npos);

  const std::string degraded = compile_spec(
      dir, "degraded", confined() + unix_sockets(allow) + "  isolation:\n    degraded: [ipc]\n");
  const Run run = probe(degraded, {"unix-connect", service.path()});
  CHECK_RUN(run, 1, "EACCES\n");
  CHECK(run.err.find("every pathname socket is refused") != std::string::npos);

  SUBCASE("control: the stream socketpair still works in the degraded run") {
    CHECK_RUN(probe(degraded, {"socketpair", "stream"}), 0, "OK\n");
  }
}
