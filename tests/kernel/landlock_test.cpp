// Landlock under the real launcher and the real kernel: filesystem rights
// (read, write, execute, truncate, refer), what Landlock does to ptrace and
// /proc, TCP ports, the seccomp socket rule that comes with network.outbound,
// and the ABI 6 scopes (abstract unix sockets, signals). Every denial is
// checked for the exact errno the kernel answers, and has a control: the
// same probe op under a plan that permits it succeeds.
//
// Safety: every probe op runs under aasm-launch with a Landlock ruleset or,
// for the ptrace and /proc controls, a seccomp filter; paths are in the
// test's temp dirs, network traffic goes to 127.0.0.1 only, abstract socket
// names and signalled pids belong to this test (sentinels killed by pid).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "fixtures.h"
#include "harness.h"

extern char** environ;

using namespace aasm::ktest;

namespace {

// A seccomp-only plan (no Landlock): a denylist of @mount, which none of
// the ops here uses, so the kernel answers every op itself.
// No Landlock domain at all: the signal scope every plan carries by default
// is lifted too (a domain of its own would already refuse ptrace).
std::string seccomp_only(const TempDir& dir) {
  return compile_spec(dir, "seccomp-only", "  syscalls:\n    deny: [\"@mount\"]\n  ipc:\n    signals: allow\n");
}





}  // namespace

// ---------------------------------------------------------------- files

TEST_CASE("landlock: read, write and execute outside the allowed trees are EACCES") {
  Trees t;
  const std::string plan = t.plan();
  CHECK_RUN(probe(plan, {"read", t.secret + "/file"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"write", t.secret + "/new"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"write", t.in + "/new"}), 1, "EACCES\n");  // readable is not writable
  CHECK_FALSE(exists(t.secret + "/new"));
  CHECK_FALSE(exists(t.in + "/new"));
  // A probe copy in in/: readable, not executable.
  write_file(t.in + "/probe-copy", read_file(binary("AASM_PROBE")), 0755);
  CHECK_RUN(probe(plan, {"exec", t.in + "/probe-copy", "exit", "0"}), 1, "EACCES\n");

  SUBCASE("control: inside the allowed trees the same ops succeed") {
    CHECK_RUN(probe(plan, {"read", t.in + "/file"}), 0, "OK\n");
    CHECK_RUN(probe(plan, {"write", t.rw + "/new"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/new") == "x");
    Fs fs = t.fs();
    fs.execute.push_back(t.in);
    // The copy ran and read the file: its output is its own.
    CHECK_RUN(probe(compile_spec(t.dir, "exec-in", fs.yaml()), {"exec", t.in + "/probe-copy", "read", t.in + "/file"}),
              0, "OK\n");
  }
}

TEST_CASE("landlock: truncate(2) and open(O_RDONLY|O_TRUNC) outside the writable tree are EACCES") {
  Trees t;
  const std::string plan = t.plan();
  // LANDLOCK_ACCESS_FS_TRUNCATE (ABI 3) is handled by `write` and granted
  // beneath rw/ only; O_TRUNC on open needs it too, even with O_RDONLY.
  CHECK_RUN(probe(plan, {"truncate", t.secret + "/file"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"truncate", t.in + "/file"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"open-trunc", t.secret + "/file"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"open-trunc", t.in + "/file"}), 1, "EACCES\n");
  CHECK(read_file(t.secret + "/file") == "outside\n");
  CHECK(read_file(t.in + "/file") == "inside\n");

  SUBCASE("control: both empty a file in the writable tree") {
    CHECK_RUN(probe(plan, {"truncate", t.rw + "/file"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/file").empty());
    write_file(t.rw + "/file", "again\n");
    CHECK_RUN(probe(plan, {"open-trunc", t.rw + "/file"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/file").empty());
  }
}

TEST_CASE("landlock: rename and link between the writable and the read-only tree are refused") {
  Trees t;
  const std::string plan = t.plan();
  // What the kernel answers (security/landlock/fs.c, current_check_refer_path):
  // a right other than REFER missing on either side is EACCES, and EACCES
  // wins over EXDEV. Into in/: MAKE_REG is missing there. Out of in/ by
  // rename: REMOVE_FILE is missing there. Out of in/ by link: nothing is
  // removed and rw/ grants MAKE_REG, so only REFER is missing (in/ does not
  // grant it): EXDEV, the answer that tells tools to fall back to copying.
  CHECK_RUN(probe(plan, {"rename", t.rw + "/file", t.in + "/moved"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"link", t.rw + "/file", t.in + "/linked"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"rename", t.in + "/file", t.rw + "/moved"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"link", t.in + "/file", t.rw + "/linked"}), 1, "EXDEV\n");
  // Out of the secret tree into the writable one: the same answers.
  CHECK_RUN(probe(plan, {"rename", t.secret + "/file", t.rw + "/moved"}), 1, "EACCES\n");
  CHECK_RUN(probe(plan, {"link", t.secret + "/file", t.rw + "/linked"}), 1, "EXDEV\n");
  CHECK(read_file(t.in + "/file") == "inside\n");
  CHECK(read_file(t.rw + "/file") == "writable\n");
  CHECK(read_file(t.secret + "/file") == "outside\n");
  for (const std::string& p : {t.in + "/moved", t.in + "/linked", t.rw + "/moved", t.rw + "/linked"}) {
    CAPTURE(p);
    CHECK_FALSE(exists(p));
  }

  SUBCASE("control: rename and link within the writable tree work, across its directories too (REFER granted)") {
    CHECK_RUN(probe(plan, {"rename", t.rw + "/file", t.rw + "/renamed"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/renamed") == "writable\n");
    CHECK_RUN(probe(plan, {"rename", t.rw + "/sub/file", t.rw + "/from-sub"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/from-sub") == "moved\n");
    CHECK_RUN(probe(plan, {"link", t.rw + "/renamed", t.rw + "/sub/linked"}), 0, "OK\n");
    CHECK(read_file(t.rw + "/sub/linked") == "writable\n");
  }
}

TEST_CASE("landlock: a symlink inside an allowed tree pointing outside does not reach outside") {
  Trees t;
  REQUIRE(::symlink((t.secret + "/file").c_str(), (t.in + "/to-secret").c_str()) == 0);
  REQUIRE(::symlink((t.in + "/file").c_str(), (t.in + "/to-in").c_str()) == 0);
  const std::string plan = t.plan();
  // Landlock checks the file the path resolves to, not the link's place.
  CHECK_RUN(probe(plan, {"read", t.in + "/to-secret"}), 1, "EACCES\n");

  SUBCASE("control: a symlink pointing inside the tree reads") {
    CHECK_RUN(probe(plan, {"read", t.in + "/to-in"}), 0, "OK\n");
  }
}

TEST_CASE("landlock: re-opening /proc/self/fd/N read-write for a read-only file is EACCES") {
  Trees t;
  Fs fs = t.fs();
  fs.read.push_back("/proc");
  const std::string plan = compile_spec(t.dir, "proc", fs.yaml());
  // The magic link resolves to the file itself, and Landlock checks that
  // path: in/ grants no WRITE_FILE, whatever the descriptor was.
  CHECK_RUN(probe(plan, {"reopen-rw", t.in + "/file"}), 1, "EACCES\n");

  SUBCASE("control: the same re-open of a file in the writable tree works") {
    CHECK_RUN(probe(plan, {"reopen-rw", t.rw + "/file"}), 0, "OK\n");
  }
}

// ---------------------------------------------------------------- processes

TEST_CASE("landlock: /proc/<supervisor>/{environ,mem} and another process's environ, as root") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the kernel suite runs as root; the answers below are root's");
  TempDir dir;
  Sentinel root_sentinel;
  Sentinel capless_sentinel(Sentinel::Caps::kNone);
  Fs fs = base_fs();
  fs.read.push_back("/proc");
  const std::string plan = compile_spec(dir, "proc", fs.yaml());

  // The command runs as root without capabilities (aasm-launch drops them
  // all), inside a Landlock domain: the supervisor, an unrelated root
  // process and an unrelated capless one are all out of reach. (With
  // CAP_SYS_PTRACE kept, Linux 6.18 let a Landlocked root command read
  // other processes' environ: measured before capabilities were dropped.)
  for (const char* file : {"environ", "mem"}) {
    CAPTURE(file);
    CHECK_RUN(probe(plan, {"read-proc", "parent", file}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"read-proc", root_sentinel.id(), file}), 1, "EACCES\n");
    CHECK_RUN(probe(plan, {"read-proc", capless_sentinel.id(), file}), 1, "EACCES\n");
  }
  CHECK(root_sentinel.alive());
  CHECK(capless_sentinel.alive());

  SUBCASE("control: without Landlock the capless sentinel's files read; the capable processes' still do not") {
    const std::string open = seccomp_only(dir);
    for (const char* file : {"environ", "mem"}) {
      CAPTURE(file);
      CHECK_RUN(probe(open, {"read-proc", capless_sentinel.id(), file}), 0, "OK\n");
      // Capabilities, not Landlock, refuse these: the supervisor and the
      // root sentinel hold capabilities the command does not.
      CHECK_RUN(probe(open, {"read-proc", "parent", file}), 1, "EACCES\n");
      CHECK_RUN(probe(open, {"read-proc", root_sentinel.id(), file}), 1, "EACCES\n");
    }
  }
}

TEST_CASE("landlock: PTRACE_ATTACH to the supervisor or another process is EPERM") {
  TempDir dir;
  Sentinel capless_sentinel(Sentinel::Caps::kNone);
  const std::string plan = compile_spec(dir, "fs", base_fs().yaml());
  CHECK_RUN(probe(plan, {"ptrace-attach-parent"}), 1, "EPERM\n");
  CHECK_RUN(probe(plan, {"ptrace-attach", capless_sentinel.id()}), 1, "EPERM\n");

  SUBCASE("control: without Landlock a capless process can be attached (no Yama here)") {
    // The probe waits for the attach stop and detaches at once.
    const Run r = probe(seccomp_only(dir), {"ptrace-attach", capless_sentinel.id()});
    INFO("stderr: ", r.err);
    CHECK_RUN(r, 0, "OK\n");
    CHECK(capless_sentinel.alive());
  }
}

TEST_CASE("landlock: ipc.signals: deny refuses signals to a process outside the sandbox with EPERM") {
  TempDir dir;
  Sentinel sentinel;
  const std::string plan = compile_spec(dir, "signals", base_fs().yaml() + "  ipc:\n    signals: deny\n");
  CHECK_RUN(probe(plan, {"kill", sentinel.id(), "0"}), 1, "EPERM\n");
  CHECK_RUN(probe(plan, {"kill", sentinel.id(), std::to_string(SIGTERM)}), 1, "EPERM\n");
  CHECK(sentinel.alive());

  SUBCASE("control: with ipc.signals: allow, signal 0 reaches the sentinel") {
    CHECK_RUN(probe(compile_spec(dir, "fs", base_fs().yaml() + "  ipc:\n    signals: allow\n"), {"kill", sentinel.id(), "0"}),
              0, "OK\n");
    CHECK(sentinel.alive());
  }
}

// A confined filesystem refuses unix socket creation unless the policy says
// otherwise (ipc.unix_sockets); these tests need the socket to reach connect().
constexpr const char* kUnixSockets = "    unix_sockets: {allow: [\"/\"]}\n";

TEST_CASE("landlock: ipc.abstract_unix_sockets: deny refuses connecting to an abstract socket outside with EPERM") {
  TempDir dir;
  AbstractListener listener;
  const std::string plan =
      compile_spec(dir, "abstract", base_fs().yaml() + "  ipc:\n    abstract_unix_sockets: deny\n" + kUnixSockets);
  CHECK_RUN(probe(plan, {"abstract-connect", listener.name}), 1, "EPERM\n");
  CHECK_FALSE(listener.socket.readable());

  SUBCASE("control: without the scope the probe connects and the test accepts") {
    CHECK_RUN(probe(compile_spec(dir, "fs", base_fs().yaml() + "  ipc:\n" + kUnixSockets), {"abstract-connect", listener.name}),
              0, "OK\n");
    CHECK(accept_one(listener.socket));
  }
}

// ---------------------------------------------------------------- network

// Landlock refuses with EACCES; the supervisor answers the call first with
// ECONNREFUSED, which tools do not retry (supervisor/connect_answers.h), and
// says so on stderr.
TEST_CASE("landlock: TCP connect to a loopback port outside outbound.allow is refused (ECONNREFUSED over Landlock's EACCES)") {
  TempDir dir;
  const Socket allowed = tcp_listener(), other = tcp_listener();
  const std::string plan = compile_spec(
      dir, "outbound", base_fs().yaml() + "  network:\n    outbound: {allow: [\"" + tcp(local_port(allowed)) + "\"]}\n");
  const Run refused = probe(plan, {"tcp-connect", str(local_port(other))});
  CHECK_RUN(refused, 1, "ECONNREFUSED\n");
  CHECK(contains(refused.err, "connect() call(s) to tcp port " + str(local_port(other)) + " answered ECONNREFUSED"));
  CHECK_FALSE(other.readable());

  SUBCASE("control: the allowed port connects and the test accepts") {
    CHECK_RUN(probe(plan, {"tcp-connect", str(local_port(allowed))}), 0, "OK\n");
    CHECK(accept_one(allowed));
  }
  SUBCASE("control: without a network node the other port connects") {
    CHECK_RUN(probe(compile_spec(dir, "fs", base_fs().yaml()), {"tcp-connect", str(local_port(other))}), 0, "OK\n");
    CHECK(accept_one(other));
  }
}

TEST_CASE("landlock: TCP bind to a port outside bind.allow is EACCES") {
  TempDir dir;
  const uint16_t allowed = free_tcp_port();
  uint16_t other = free_tcp_port();
  while (other == allowed) other = free_tcp_port();
  const std::string plan =
      compile_spec(dir, "bind", base_fs().yaml() + "  network:\n    bind: {allow: [\"" + tcp(allowed) + "\"]}\n");
  CHECK_RUN(probe(plan, {"tcp-bind", str(other)}), 1, "EACCES\n");
  // bind: none refuses every port, the one allowed above too.
  const std::string none = compile_spec(dir, "bind-none", base_fs().yaml() + "  network:\n    bind: none\n");
  CHECK_RUN(probe(none, {"tcp-bind", str(allowed)}), 1, "EACCES\n");

  SUBCASE("control: the allowed port binds") {
    CHECK_RUN(probe(plan, {"tcp-bind", str(allowed)}), 0, "OK\n");
  }
  SUBCASE("control: without a network node the other port binds") {
    CHECK_RUN(probe(compile_spec(dir, "fs", base_fs().yaml()), {"tcp-bind", str(other)}), 0, "OK\n");
  }
}

TEST_CASE("landlock + seccomp: outbound: none denies UDP and netlink sockets with EACCES at socket()") {
  TempDir dir;
  const Socket receiver = bound_loopback(SOCK_DGRAM);
  const std::string port = str(local_port(receiver));
  const std::string none = compile_spec(dir, "none", base_fs().yaml() + "  network:\n    outbound: none\n");
  CHECK_RUN(probe(none, {"udp-send", port}), 1, "EACCES\n");
  CHECK_RUN(probe(none, {"netlink-socket"}), 1, "EACCES\n");
  // An allow-list without `udp` denies the same sockets.
  const std::string tcp_only =
      compile_spec(dir, "tcp-only", base_fs().yaml() + "  network:\n    outbound: {allow: [\"tcp:1\"]}\n");
  CHECK_RUN(probe(tcp_only, {"udp-send", port}), 1, "EACCES\n");
  CHECK_RUN(probe(tcp_only, {"netlink-socket"}), 1, "EACCES\n");
  CHECK_FALSE(receiver.readable());

  SUBCASE("control: without a network node both work, and the datagram arrives") {
    const std::string open = compile_spec(dir, "fs", base_fs().yaml());
    CHECK_RUN(probe(open, {"udp-send", port}), 0, "OK\n");
    CHECK(receiver.readable(1000));
    CHECK_RUN(probe(open, {"netlink-socket"}), 0, "OK\n");
  }
  SUBCASE("control: `udp` in the allow-list allows the datagram") {
    const std::string udp =
        compile_spec(dir, "udp", base_fs().yaml() + "  network:\n    outbound: {allow: [\"tcp:1\", \"udp\"]}\n");
    CHECK_RUN(probe(udp, {"udp-send", port}), 0, "OK\n");
    CHECK(receiver.readable(1000));
  }
}
