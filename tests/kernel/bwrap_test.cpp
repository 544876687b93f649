// The bubblewrap backend (docs/backends.md, "Bubblewrap"): plans compiled
// with `aasmc compile --backend bwrap`, run by the real aasm-launch through
// the host's real bwrap (Debian's, not setuid). Each refusal has its
// control: the same command under an allow-everything plan, or on a host
// without the fault, succeeds. The real-work suite's git and make steps run
// under a bwrap plan in real_work_test.cpp.
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cstring>

#include "harness.h"

using namespace aasm::ktest;

namespace {

const char* const kNode = "/usr/bin/node";

// The domains bwrap carries only partly, listed in isolation.degraded by a
// run-tier document: without it the compile is refused (one AASM0140 each).
const char* const kBwrapGaps =
    "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: bwrap-gaps, tier: run}\nspec:\n"
    "  isolation:\n    degraded: [file_read, file_write, file_execute, network_outbound, network_bind, ipc]\n";

// An allow-everything plan for bwrap (the control): a filter that refuses
// nothing the tests do, no filesystem, network or ipc constraint.
const char* const kAllowAll =
    "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: allow-all, tier: org}\nspec:\n"
    "  syscalls:\n    deny: [\"@mount\"]\n  ipc:\n    signals: allow\n    abstract_unix_sockets: allow\n";

std::string compile_bwrap(const TempDir& dir, const std::vector<std::string>& sources, const std::string& name) {
  std::vector<std::string> argv = {binary("AASMC"), "compile"};
  argv.insert(argv.end(), sources.begin(), sources.end());
  for (const std::string& a : {std::string("-o"), dir / (name + ".bin"), std::string("--backend"), std::string("bwrap")})
    argv.push_back(a);
  const Run r = run(argv);
  INFO("aasmc: ", r.err);
  REQUIRE(r.exit_code == 0);
  return dir / (name + ".bin");
}

// The allow-everything bwrap plan, compiled in `dir`.
std::string allow_all_plan(const TempDir& dir) {
  write_file(dir / "allow-all.yaml", kAllowAll);
  return compile_bwrap(dir, {dir / "allow-all.yaml"}, "allow-all");
}

// A TCP listener on 127.0.0.1, closed at scope exit.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int port = 0;
  Listener() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof a;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &size) == 0);
    port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
};

// node reads its input, writes its result to out/, tries to write into the
// launch directory and into a host directory outside it, and connects to a
// loopback listener; one line says how each went (an errno code where it failed).
const char* const kReplayScript = R"js(const fs = require('fs'), net = require('net');
const out = ['read:' + fs.readFileSync('input.txt', 'utf8').trim()];
const attempt = (name, path) => {
  try { fs.writeFileSync(path, 'x'); out.push(name + ':ok'); } catch (e) { out.push(name + ':' + e.code); }
};
attempt('out', 'out/result.txt');
attempt('cwd', 'planted.txt');
attempt('host', process.argv[3] + '/planted.txt');
const s = net.connect({host: '127.0.0.1', port: Number(process.argv[2])});
s.on('connect', () => { out.push('connect:ok'); console.log(out.join(' ')); s.destroy(); });
s.on('error', (e) => { out.push('connect:' + e.code); console.log(out.join(' ')); });
)js";

}  // namespace

// The allow-everything plan is the control.
TEST_CASE("bwrap backend: the replay profile runs node, reading allowed, no host path writable, connect refused") {
  if (!have_bwrap()) return;
  if (::access(kNode, X_OK) != 0) {
    MESSAGE("skipped: ", kNode, " is absent (./run deps installs nodejs)");
    return;
  }
  TempDir dir;
  TempDir host("/var/tmp");  // outside every granted tree
  const std::string ws = dir / "ws";
  make_dir(ws);
  make_dir(ws + "/out");
  write_file(ws + "/input.txt", "hello\n");
  write_file(ws + "/run.js", kReplayScript);
  write_file(dir / "gaps.yaml", kBwrapGaps);
  const std::string replay = compile_bwrap(dir, {binary("AASM_PROFILES") + "/replay.yaml", dir / "gaps.yaml"}, "replay");
  const std::string allow_all = allow_all_plan(dir);
  Listener listener;
  const auto node = [&](const std::string& plan, const std::string& receipt) {
    return run({binary("AASM_LAUNCH"), "--receipt", receipt, plan, "--", "node", "run.js", std::to_string(listener.port),
                host.path()},
               ws);
  };

  const Run confined = node(replay, dir / "replay.receipt.json");
  INFO("stderr: ", confined.err);
  // The launch directory is bound read-only (EROFS); the host directory is
  // not in bwrap's root at all (ENOENT); socket() is refused by the plan's
  // socket rules before any connect (EAFNOSUPPORT, as without bwrap).
  CHECK_RUN(confined, 0, "read:hello out:ok cwd:EROFS host:ENOENT connect:EAFNOSUPPORT\n");
  CHECK(read_file(ws + "/out/result.txt") == "x");
  CHECK_FALSE(exists(ws + "/planted.txt"));
  CHECK_FALSE(exists(host / "planted.txt"));
  const std::string receipt = read_file(dir / "replay.receipt.json");
  CHECK(contains(receipt, "\"backend\":\"bwrap\""));
  CHECK(contains(receipt, "\"domain\":\"file_write\",\"planned\":\"enforce, may degrade\""));
  CHECK(contains(receipt, "\"achieved\":\"partial\""));

  // The control: the same node under an allow-everything bwrap plan.
  ::unlink((ws + "/out/result.txt").c_str());
  const Run open = node(allow_all, dir / "allow-all.receipt.json");
  INFO("stderr: ", open.err);
  CHECK_RUN(open, 0, "read:hello out:ok cwd:ok host:ok connect:ok\n");
  CHECK(exists(ws + "/planted.txt"));
  CHECK(exists(host / "planted.txt"));
}

TEST_CASE("bwrap backend: a call the policy denies gets the policy's errno under bwrap; allowed, the kernel's answer") {
  if (!have_bwrap()) return;
  TempDir dir;
  write_file(dir / "deny.yaml",
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: deny, tier: org}\nspec:\n"
             "  syscalls:\n    deny: [\"@mount\", getppid]\n    default: \"errno:EXDEV\"\n"
             "  ipc:\n    signals: allow\n    abstract_unix_sockets: allow\n");
  const std::string deny = compile_bwrap(dir, {dir / "deny.yaml"}, "deny");
  const std::string allow = allow_all_plan(dir);
  CHECK_RUN(probe(deny, {"getppid"}), 1, "EXDEV\n");
  CHECK_RUN(probe(allow, {"getppid"}), 0, "OK\n");
}

// Without the fault it runs (the control).
TEST_CASE("bwrap backend: no user namespaces (fault injected) is refused before the command runs, naming it") {
  if (!have_bwrap()) return;
  TempDir dir;
  const std::string plan = allow_all_plan(dir);
  const std::string marker = dir / "ran";
  const std::vector<std::string> command = {binary("AASM_LAUNCH"), plan, "--", "/bin/sh", "-c", "echo ran > " + marker};
  for (const char* fault : {"clone_newuser=EPERM", "clone_newuser=ENOSPC"}) {
    CAPTURE(fault);
    std::vector<std::string> argv = {probe_dir() + "/aasm-fault", fault};
    argv.insert(argv.end(), command.begin(), command.end());
    const Run refused = run(argv);
    CHECK(refused.exit_code == 125);
    CHECK(refused.out.empty());
    CHECK(refused.err.rfind("aasm-launch: error: namespaces: bwrap: user namespaces: this host refused one (", 0) == 0);
    CHECK(contains(refused.err, std::string(fault).ends_with("EPERM") ? "Operation not permitted" : "No space left on device"));
    CHECK(contains(refused.err, "bwrap --unshare-user needs one"));
    CHECK(contains(refused.err, "enable unprivileged user namespaces"));
    CHECK_FALSE(contains(refused.err, "or launch as root"));  // root needs one too under bwrap
    CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
    CHECK_FALSE(exists(marker));
    // The dry run refuses alike.
    const Run dry = run({probe_dir() + "/aasm-fault", fault, binary("AASM_LAUNCH"), "--dry-run", plan});
    CHECK(dry.exit_code == 125);
    CHECK(contains(dry.out, "verdict: the launch would be refused: namespaces: bwrap: user namespaces"));
  }
  // The control: the same launch without the fault.
  CHECK_RUN(run(command), 0, "");
  CHECK(read_file(marker) == "ran\n");
}

TEST_CASE("bwrap backend: a setuid bwrap is refused before the command runs; the same copy without setuid runs it") {
  if (!have_bwrap()) return;
  TempDir dir;
  const std::string plan = allow_all_plan(dir);
  const std::string copy = dir / "bwrap";
  REQUIRE(run({"/usr/bin/cp", kBwrap, copy}).exit_code == 0);
  const std::string marker = dir / "ran";
  const auto launch_with = [&](const std::string& bwrap) {
    return run({binary("AASM_LAUNCH"), "--bwrap", bwrap, plan, "--", "/bin/sh", "-c", "echo ran > " + marker});
  };
  REQUIRE(::chmod(copy.c_str(), 04755) == 0);
  const Run refused = launch_with(copy);
  CHECK(refused.exit_code == 125);
  CHECK(refused.err == "aasm-launch: error: namespaces: bwrap: " + copy +
                           " is setuid; a setuid bwrap runs its setup with its owner's privileges, outside what the "
                           "plan confines; use a bwrap without the setuid bit (chmod u-s, or Debian's bubblewrap, which "
                           "has none) where the host allows user namespaces\n");
  CHECK_FALSE(exists(marker));
  // --explain has nothing to trace under bwrap: refused, not ignored.
  const Run explain = run({binary("AASM_LAUNCH"), "--explain", plan, "--", "/bin/sh", "-c", "echo ran > " + marker});
  CHECK(explain.exit_code == 125);
  CHECK(contains(explain.err, "a bwrap plan has no Landlock ruleset"));
  // A path that is no bwrap at all is refused too, naming the remedy.
  const Run missing = launch_with(dir / "no-such-bwrap");
  CHECK(missing.exit_code == 125);
  CHECK(contains(missing.err, "is not an executable file here"));
  // The control: the same copy without the setuid bit.
  REQUIRE(::chmod(copy.c_str(), 0755) == 0);
  CHECK_RUN(launch_with(copy), 0, "");
  CHECK(read_file(marker) == "ran\n");
}

TEST_CASE("bwrap backend: an unprivileged launcher runs a bwrap plan, the launch directory read-only to it") {
  if (!have_bwrap()) return;
  TempDir dir("/var/tmp");
  ::chmod(dir.path().c_str(), 0755);
  const std::string ws = dir / "ws";
  make_dir(ws);
  make_dir(ws + "/out");
  write_file(dir / "p.yaml",
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: p, tier: org}\nspec:\n"
             "  filesystem:\n    read: {allow: [\"/usr\", \"${CWD}\"]}\n    write: {allow: [\"${CWD}/out\"]}\n"
             "  syscalls:\n    deny: [\"@mount\"]\n  isolation:\n    degraded: [file_read, file_write, ipc]\n");
  const std::string plan = compile_bwrap(dir, {dir / "p.yaml"}, "p");
  REQUIRE(run({"/usr/bin/chown", "-R", "65534:65534", dir.path()}).exit_code == 0);
  const auto as_nobody = [&](const std::string& script, bool sandboxed) {
    std::vector<std::string> argv;
    run_as(65534, argv);
    argv.insert(argv.end(), {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + ws});
    if (sandboxed) argv.insert(argv.end(), {binary("AASM_LAUNCH"), plan, "--"});
    argv.insert(argv.end(), {"/bin/sh", "-c", script});
    return run(argv, ws);
  };
  const Run r = as_nobody("id -u; echo a > out/a && cat out/a; echo b > b || echo refused", true);
  INFO(r.err);
  CHECK_RUN(r, 0, "65534\na\nrefused\n");
  CHECK(contains(r.err, "Read-only file system"));
  CHECK_FALSE(exists(ws + "/b"));
  // The control: the same user writes there outside the sandbox.
  CHECK_RUN(as_nobody("echo b > b && cat b", false), 0, "b\n");
}

TEST_CASE("bwrap backend: a protected path stays read-only inside its writable tree; the tree around it is writable") {
  if (!have_bwrap()) return;
  TempDir dir;
  const std::string ws = dir / "ws";
  make_dir(ws);
  make_dir(ws + "/.git");
  write_file(ws + "/.git/config", "[core]\n");
  write_file(dir / "p.yaml",
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: p, tier: org}\nspec:\n"
             "  filesystem:\n    read: {allow: [\"/usr\", \"${CWD}\"]}\n    write: {allow: [\"${CWD}\"]}\n"
             "    readonly: [\"${CWD}/.git/config\"]\n"
             "  syscalls:\n    deny: [\"@mount\"]\n"
             "  isolation:\n    filesystem_view: true\n    degraded: [file_read, file_write, ipc, filesystem_view]\n");
  const std::string plan = compile_bwrap(dir, {dir / "p.yaml"}, "p");
  const Run r = run({binary("AASM_LAUNCH"), plan, "--", "/bin/sh", "-c",
                     "echo x >> .git/config || echo protected; echo y > notes && cat notes"},
                    ws);
  INFO(r.err);
  CHECK_RUN(r, 0, "protected\ny\n");
  CHECK(contains(r.err, "Read-only file system"));
  CHECK(read_file(ws + "/.git/config") == "[core]\n");
  // The control: without the protection the same append goes through.
  const Run open = run({binary("AASM_LAUNCH"), allow_all_plan(dir), "--", "/bin/sh", "-c", "echo x >> .git/config"}, ws);
  CHECK_RUN(open, 0, "");
  CHECK(read_file(ws + "/.git/config") == "[core]\nx\n");
}
