// `network.bind: none` means no endpoint of the command's can be reached by
// name (issue 30): each way to obtain a listening or receiving socket,
// attacked under the real launcher and kernel, with a peer outside the run
// that tries to reach it; each with the same probe under a plan without a
// bind node as its negative control, where the peer gets through. Then the
// sweep of every socket family, type and protocol under the outbound rules
// of coding-agent-web (tcp:443 and udp).
//
// Safety: the probe's endpoints and the peer live on this host's loopback;
// the sweep only creates sockets and closes them, and every family outside
// unix/inet/inet6 is refused by the filter before the kernel looks it up (so
// no module is loaded; the controls create only families already loaded).
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;

namespace {

// Outbound as coding-agent-web has it; `bind` as the case asks ("" for no
// bind node: the control).
std::string spec(const TempDir& dir, const std::string& bind, const std::string& extra = "") {
  Fs fs;
  fs.read = {dir.path()};
  fs.write = {dir.path()};
  return fs.yaml() + "  network:\n    outbound: {allow: [\"tcp:443\", \"udp\"]}\n" +
         (bind.empty() ? "" : "    bind: " + bind + "\n") + "  ipc:\n    unix_sockets: deny\n" + extra;
}

struct Served {
  Run run;
  bool reached = false;  // the peer outside found the port and sent its byte
};

// Runs `serve HOW PORTFILE` under `plan` while this process, outside the
// run, waits for the port and sends one byte to it (a TCP connection or a
// datagram to 127.0.0.1, or [::1] for the inet6 case).
Served serve(const TempDir& dir, const std::string& plan, const std::string& how) {
  const std::string portfile = dir / ("port-" + how);
  ::unlink(portfile.c_str());
  Served served;
  std::thread command([&] { served.run = probe(plan, {"serve", how, portfile}); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  uint16_t port = 0;
  while (!port && std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(portfile);
    unsigned value = 0;
    if (in >> value) port = uint16_t(value);
    else std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (port) {
    const bool udp = how.rfind("udp", 0) == 0, v6 = how == "listen6-unbound";
    Socket peer(::socket(v6 ? AF_INET6 : AF_INET, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0));
    sockaddr_in6 six{};
    six.sin6_family = AF_INET6;
    six.sin6_port = htons(port);
    six.sin6_addr = in6addr_loopback;
    const sockaddr_in four = loopback(port);
    const sockaddr* to = v6 ? reinterpret_cast<const sockaddr*>(&six) : reinterpret_cast<const sockaddr*>(&four);
    const socklen_t length = v6 ? sizeof six : sizeof four;
    served.reached = udp ? ::sendto(peer.fd(), "x", 1, 0, to, length) == 1
                         : ::connect(peer.fd(), to, length) == 0 && ::write(peer.fd(), "x", 1) == 1;
  }
  command.join();
  return served;
}

}  // namespace

namespace {

// The probe, served `how` under `plan`: refused with EACCES at its call and
// never reached by the peer outside; or, with `served`, reached.
void check_serve(const TempDir& dir, const std::string& plan, const std::string& how, bool served) {
  CAPTURE(how);
  const Served r = serve(dir, plan, how);
  if (served) CHECK_RUN(r.run, 0, "RECEIVED\n");
  else CHECK_RUN(r.run, 1, "EACCES\n");
  CHECK(r.reached == served);
  // The report names the policy line that refused it.
  if (!served) CHECK(contains(r.run.err, "network.bind"));
}

// Each way of `hows` refused under bind: none; the control, without a bind
// node, serves each to the peer outside.
void check_refused_only_under_none(const std::vector<std::string>& hows) {
  TempDir dir;
  const std::string none = compile_spec(dir, "none", spec(dir, "none"));
  for (const std::string& how : hows) check_serve(dir, none, how, false);
  SUBCASE("control: without a bind node each is served and a peer outside reaches it") {
    const std::string open = compile_spec(dir, "open", spec(dir, ""));
    for (const std::string& how : hows) check_serve(dir, open, how, true);
  }
}

}  // namespace

// Without the rules, the kernel binds the socket to an ephemeral port in
// listen() and Landlock's bind hook never runs.
TEST_CASE("attack bind: listen() on a socket never bound does not serve under bind: none (IPv4 and IPv6)") {
  check_refused_only_under_none({"listen-unbound", "listen6-unbound"});
}

TEST_CASE("attack bind: a UDP server cannot bind under bind: none, though outbound allows udp") {
  check_refused_only_under_none({"udp-bind"});
}

TEST_CASE("attack bind: a TCP bind is refused under bind: none before Landlock's check") {
  check_refused_only_under_none({"tcp-bind"});
}

// What `udp` permits, as docs/threat-model.md says: not a server's port,
// but the ephemeral port a datagram socket's first sendto() takes receives
// whatever is sent to it, from anyone, as for any UDP client.
TEST_CASE("attack bind: residual: a UDP socket's first sendto() takes an ephemeral port that receives under bind: none") {
  TempDir dir;
  const Served residual = serve(dir, compile_spec(dir, "none", spec(dir, "none")), "udp-sent");
  CHECK_RUN(residual.run, 0, "RECEIVED\n");
  CHECK(residual.reached);

  SUBCASE("control: without udp in outbound no datagram socket is made to send from") {
    Fs fs;
    fs.read = {dir.path()};
    fs.write = {dir.path()};
    const std::string tcp_only = fs.yaml() + "  network:\n    outbound: {allow: [\"tcp:443\"]}\n    bind: none\n";
    const Served refused = serve(dir, compile_spec(dir, "tcp", tcp_only), "udp-sent");
    CHECK_RUN(refused.run, 1, "EACCES\n");
    CHECK_FALSE(refused.reached);
  }
}

// A listening socket the command inherits (its standard input here: the
// launcher closes every other descriptor) with a connection waiting.
TEST_CASE("attack bind: accept() on an inherited listening socket is EACCES under bind: none") {
  TempDir dir;
  const Socket listener = tcp_listener();
  Socket client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in at = loopback(local_port(listener));
  REQUIRE(::connect(client.fd(), reinterpret_cast<const sockaddr*>(&at), sizeof at) == 0);
  const auto accept_inherited = [&](const std::string& plan) {
    const std::string launcher = binary("AASM_LAUNCH"), probe_path = binary("AASM_PROBE");
    return run_forked([&] {
      if (::dup2(listener.fd(), STDIN_FILENO) != STDIN_FILENO) return 99;
      ::execl(launcher.c_str(), launcher.c_str(), plan.c_str(), "--", probe_path.c_str(), "accept-stdin", nullptr);
      return 98;
    });
  };
  CHECK_RUN(accept_inherited(compile_spec(dir, "none", spec(dir, "none"))), 1, "EACCES\n");

  SUBCASE("control: without a bind node the inherited listener hands over the waiting connection") {
    CHECK_RUN(accept_inherited(compile_spec(dir, "open", spec(dir, ""))), 0, "OK\n");
  }
}

TEST_CASE("attack bind: udp means UDP: UDP-Lite, ICMP echo and other datagram protocols are EACCES") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "udp", spec(dir, "none"));
  const std::string inet = str(AF_INET), inet6 = str(AF_INET6), dgram = str(SOCK_DGRAM);
  for (const std::string& family : {inet, inet6}) {
    CAPTURE(family);
    CHECK_RUN(probe(plan, {"socket-raw", family, dgram, str(IPPROTO_UDPLITE)}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"socket-raw", family, dgram, family == inet ? str(IPPROTO_ICMP) : str(IPPROTO_ICMPV6)}), 1,
              "EACCES\n");
    CHECK_RUN(probe(plan, {"socket-raw", family, dgram, "0"}), 0, "OK\n");
    CHECK_RUN(probe(plan, {"socket-raw", family, dgram, str(IPPROTO_UDP)}), 0, "OK\n");
  }

  SUBCASE("control: without a network node the kernel makes the UDP-Lite socket") {
    Fs fs;
    CHECK_RUN(probe(compile_spec(dir, "open", fs.yaml()), {"socket-raw", inet, dgram, str(IPPROTO_UDPLITE)}), 0, "OK\n");
  }
}

// Every family the kernel numbers (0-45), every socket type, and the
// protocols that matter to inet (TCP, UDP, UDP-Lite, SCTP, ICMP, MPTCP, raw):
// under coding-agent-web's outbound rules only TCP streams and UDP datagrams
// over inet and inet6 are made; every other combination gets the rules'
// EACCES, never the kernel's own answer (which would mean the filter let it
// through to the family's code).
TEST_CASE("attack bind: the socket sweep makes only TCP streams and UDP datagrams under coding-agent-web's rules") {
  TempDir dir;
  const int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET};
  const int protocols[] = {0, IPPROTO_ICMP, IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6, IPPROTO_SCTP,
                           IPPROTO_UDPLITE, IPPROTO_RAW, 262 /* IPPROTO_MPTCP */};
  // One launch for the lot: a shell loop of probes would take minutes.
  std::string script = "set -u\n";
  std::set<std::string> expected_open;
  for (int family = 0; family <= 45; ++family)
    for (int type : types)
      for (int protocol : protocols) {
        const std::string key = str(family) + " " + str(type) + " " + str(protocol);
        script += "r=$(\"$1\" socket-raw " + key + ") || true; echo \"" + key + " $r\"\n";
        const bool inet = family == AF_INET || family == AF_INET6;
        if (inet && ((type == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP)) ||
                     (type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP))))
          expected_open.insert(key);
      }
  Fs fs;
  fs.read = {dir.path()};
  fs.write = {dir.path()};
  const std::string script_path = dir / "sweep.sh";
  write_file(script_path, script, 0755);
  // /usr, where sh is, is readable and executable in every Fs.
  const Run sweep = launch(compile_spec(dir, "web", spec(dir, "none")), {"/bin/sh", script_path, binary("AASM_PROBE")});
  REQUIRE(sweep.exit_code == 0);
  std::set<std::string> opened;
  size_t lines = 0;
  std::istringstream out(sweep.out);
  for (std::string line; std::getline(out, line); ++lines) {
    const size_t last = line.rfind(' ');
    const std::string key = line.substr(0, last), answer = line.substr(last + 1);
    CAPTURE(line);
    if (answer == "OK") opened.insert(key);
    else CHECK(answer == "EACCES");
  }
  CHECK(lines == 46 * std::size(types) * std::size(protocols));
  CHECK(opened == expected_open);

  SUBCASE("control: without a network node the loaded families answer for themselves") {
    // inet, inet6, netlink: loaded on every host that runs these tests (unix
    // sockets are refused where the filesystem is confined, by ipc's default).
    std::string loaded = "set -u\n";
    for (const int family : {AF_INET, AF_INET6, AF_NETLINK})
      for (const int type : {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW})
        loaded += "\"$1\" socket-raw " + str(family) + " " + str(type) + " 0 || true\n";
    write_file(script_path, loaded, 0755);
    const Run control = launch(compile_spec(dir, "open", fs.yaml()), {"/bin/sh", script_path, binary("AASM_PROBE")});
    // TCP, UDP (both families), netlink raw and datagram: made; the rest are
    // the families' own refusals (EPROTONOSUPPORT, ESOCKTNOSUPPORT).
    size_t made_here = 0;
    std::istringstream lines_out(control.out);
    for (std::string line; std::getline(lines_out, line);) made_here += line == "OK";
    CHECK(made_here == 6);
    CHECK_FALSE(contains(control.out, "EACCES"));
  }
}
