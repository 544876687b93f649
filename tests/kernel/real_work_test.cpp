// The real-work suite: the shipped profiles (profiles/*.yaml), compiled as
// they ship, run ordinary developer work unchanged in a fresh workspace, once
// as root and once as an unprivileged user (uid/gid 65534 through setpriv,
// with a workspace and HOME it owns), and refuse, at once and with the errno
// named, what they exist to refuse. Every refusal has its control: the same
// step outside the sandbox, as the same user, succeeds.
//
// The work: git, make -j2 of a multi-file C project and its binary, python3
// (threads, subprocess, sqlite3, tempfile), python3 -m venv and pip install
// of a wheel built in the workspace (no index), node and npm test of a local
// package, pipelines of find, grep -r, sort, tar and gzip. `replay` runs node
// only, by design: the rest of its suite is that nothing else may run.
//
// Everything lives under /var/tmp, not /tmp: the coding profiles may read and
// write /tmp, so the fake home, the other user's home and the unix socket
// must lie outside it to be "outside the allowed trees".
//
// An unprivileged launcher may not create cgroups, so for the profiles with
// ceilings the test delegates one: a group per hierarchy beneath the test's
// own, owned by 65534, which the launcher joins before it drops to 65534 (the
// remedy the launcher names). Only loopback traffic, to listeners the test owns.
//
// coding-agent and coding-agent-web turn the filesystem view on
// (docs/filesystem-view.md), and the suite runs ci-build once more narrowed
// by profiles/tiers/filesystem-view.yaml, which turns it on there. With the
// view the workspace is a git repository whose hooks and config the view
// keeps read-only, and a path outside the granted trees does not exist, so
// the refusals answer ENOENT where Landlock alone answers EACCES.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "fixtures.h"

using namespace aasm::ktest;

namespace {

constexpr uid_t kNobody = 65534;
constexpr uid_t kOtherUser = 65533;
const char* const kPath = "PATH=/usr/local/bin:/usr/bin:/bin";

struct Profile {
  const char* name;
  bool builds;       // runs the development tools (replay runs node only)
  bool web;          // outbound tcp:443
  bool has_limits;   // memory/pids ceilings: needs a cgroup
  bool view;         // turns the filesystem view on
};

constexpr Profile kProfiles[] = {
    {"coding-agent", true, false, false, true},
    {"coding-agent-web", true, true, false, true},
    {"ci-build", true, false, true, false},
    {"replay", false, false, true, false},
};

std::string profile_file(const Profile& p) { return binary("AASM_PROFILES") + "/" + p.name + ".yaml"; }

// The shipped tier that turns the view on for ci-build (docs/profiles.md).
std::string view_tier_file() { return binary("AASM_PROFILES") + "/tiers/filesystem-view.yaml"; }

void chown_tree(const std::string& path, uid_t uid) {
  const Run r = run({"/usr/bin/chown", "-R", std::to_string(uid) + ":" + std::to_string(uid), path});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
}

// Groups beneath the test's own cgroup in the v1 hierarchies the launcher
// uses, owned by 65534 (the directory, cgroup.procs and tasks, as a
// delegation does), removed at scope exit once the launcher removed its own.
class DelegatedCgroup {
 public:
  explicit DelegatedCgroup(uid_t uid) {
    static int serials = 0;
    const int serial = ++serials;
    for (const char* controller : {"memory", "pids"}) {
      const std::string own = own_v1_cgroup(controller);
      if (own.empty()) continue;
      const std::string dir = own + "/aasm-real-work-" + std::to_string(::getpid()) + "-" + std::to_string(serial);
      REQUIRE_MESSAGE(::mkdir(dir.c_str(), 0755) == 0, dir, ": ", std::strerror(errno));
      dirs_.push_back(dir);
      for (const std::string& f : {dir, dir + "/cgroup.procs", dir + "/tasks"})
        REQUIRE(::chown(f.c_str(), uid, uid) == 0);
    }
    REQUIRE_MESSAGE(dirs_.size() == 2, "this test needs the v1 memory and pids hierarchies (cgroup v1 host)");
  }
  ~DelegatedCgroup() {
    // A task that has just exited can keep a v1 group busy for a moment.
    for (const std::string& dir : dirs_)
      for (int i = 0; i < 100 && ::rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) usleep(10 * 1000);
  }
  DelegatedCgroup(const DelegatedCgroup&) = delete;
  DelegatedCgroup& operator=(const DelegatedCgroup&) = delete;
  // A shell that joins every group, then execs the rest of its arguments.
  std::vector<std::string> join() const {
    std::vector<std::string> argv = {"/bin/sh", "-c",
                                     "for d in $AASM_GROUPS; do echo $$ > $d/cgroup.procs || exit 125; done; exec \"$@\"",
                                     "sh"};
    return argv;
  }
  std::string groups() const {
    std::string all;
    for (const std::string& d : dirs_) all += (all.empty() ? "" : " ") + d;
    return all;
  }

 private:
  std::vector<std::string> dirs_;
};

// One user's fresh world: base/ holds the workspace (ws/, the launch
// directory, with HOME at ws/home), the user's real home with an ssh key
// (home/), another user's home (other/), a tree outside the workspace the user
// owns (outside/), and the compiled plan. Owned by the user, so for 65534 the
// kernel's owner checks would let every refused step through: what refuses it
// is the sandbox.
struct World {
  TempDir base{"/var/tmp"};
  const std::string ws = base / "ws";
  const std::string home = base / "home";
  const std::string other = base / "other";
  const std::string outside = base / "outside";
  uid_t uid;
  bool view;  // the profile's or the tier's; the workspace is a git repository
  bool explain = false;  // the launches run under --explain
  std::string plan;

  // bwrap: compiled with --backend bwrap (docs/backends.md), with a tier
  // listing the domains bwrap carries only partly in isolation.degraded.
  World(const Profile& profile, uid_t user, bool view_tier = false, bool bwrap = false)
      : uid(user), view(profile.view || view_tier) {
    ::chmod(base.path().c_str(), 0755);
    for (const std::string& d : {ws, ws + "/home", ws + "/out", home, home + "/.ssh", other, outside}) make_dir(d);
    write_file(home + "/.ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\nfake\n", 0600);
    write_file(other + "/notes.txt", "another user's notes\n");
    plan = base / "plan.bin";
    std::vector<std::string> compile = {binary("AASMC"), "compile", profile_file(profile)};
    if (view_tier) compile.push_back(view_tier_file());
    if (bwrap) {
      write_file(base / "bwrap-gaps.yaml",
                 "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: bwrap-gaps, tier: run}\nspec:\n"
                 "  isolation:\n    degraded: [file_read, file_write, file_execute, network_outbound, network_bind, ipc]\n");
      for (const std::string& a : {base / "bwrap-gaps.yaml", std::string("--backend"), std::string("bwrap")})
        compile.push_back(a);
    }
    if (view) REQUIRE(run({"/usr/bin/git", "init", "-q", ws}).exit_code == 0);
    for (const std::string& a : {std::string("-o"), plan}) compile.push_back(a);
    const Run compiled = run(compile);
    INFO("aasmc: ", compiled.err);
    REQUIRE(compiled.exit_code == 0);
    ::chmod(plan.c_str(), 0644);
    if (uid != 0) chown_tree(base.path(), uid);
    chown_tree(other, kOtherUser);
  }

  // The environment and user every command of this world starts with.
  std::vector<std::string> as_user() const {
    std::vector<std::string> argv = {"/usr/bin/env", "-i", kPath, "HOME=" + ws + "/home", "LANG=C.UTF-8"};
    run_as(uid, argv);
    return argv;
  }
};

// Runs `command` in the workspace, outside the sandbox (the control) or
// under the world's plan, as the world's user.
Run in_world(const World& w, const std::vector<std::string>& command, bool sandboxed,
             const DelegatedCgroup* cgroup = nullptr) {
  std::vector<std::string> argv;
  if (cgroup) {
    argv = cgroup->join();
    argv.insert(argv.begin(), {"/usr/bin/env", "AASM_GROUPS=" + cgroup->groups()});
  }
  for (const std::string& a : w.as_user()) argv.push_back(a);
  if (sandboxed) {
    argv.push_back(binary("AASM_LAUNCH"));
    if (w.explain) argv.push_back("--explain");
    for (const std::string& a : {w.plan, std::string("--")}) argv.push_back(a);
  }
  argv.insert(argv.end(), command.begin(), command.end());
  return run(argv, w.ws);
}

Run sh(const World& w, const std::string& script, const DelegatedCgroup* cgroup) {
  return in_world(w, {"/bin/sh", "-euc", script}, true, cgroup);
}


// ------------------------------------------------------------- the work

const char* const kMakefile =
    "CFLAGS = -O2 -Wall\n"
    "OBJS = main.o greet.o sum.o\n"
    "hello: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n"
    "%.o: %.c greet.h\n\t$(CC) $(CFLAGS) -c $<\n";

void write_c_project(const std::string& dir) {
  make_dir(dir);
  write_file(dir + "/Makefile", kMakefile);
  write_file(dir + "/greet.h", "const char* greet(void);\nint sum(int n);\n");
  write_file(dir + "/greet.c", "#include \"greet.h\"\nconst char* greet(void) { return \"hello from make\"; }\n");
  write_file(dir + "/sum.c", "#include \"greet.h\"\nint sum(int n) { return n ? n + sum(n - 1) : 0; }\n");
  write_file(dir + "/main.c",
             "#include <stdio.h>\n#include \"greet.h\"\n"
             "int main(void) { printf(\"%s, sum=%d\\n\", greet(), sum(10)); return 0; }\n");
}

const char* const kPythonWork = R"script(import os, sqlite3, subprocess, tempfile, threading
results = []
lock = threading.Lock()
def work(i):
    with lock:
        results.append(sum(range(i * 1000)))
threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
child = subprocess.run(["echo", "from a child"], capture_output=True, text=True, check=True).stdout.strip()
with tempfile.TemporaryDirectory() as d:
    db = sqlite3.connect(os.path.join(d, "t.db"))
    db.execute("create table t (x)")
    db.executemany("insert into t values (?)", [(i,) for i in range(10)])
    db.commit()
    total = db.execute("select sum(x) from t").fetchone()[0]
    db.close()
with tempfile.NamedTemporaryFile("w+") as f:
    f.write("x")
print(f"threads={len(results)} child={child} sqlite={total}")
)script";

// A wheel written by hand (no setuptools, no index): a zip with the package
// and its dist-info, RECORD carrying each file's hash as pip checks it.
const char* const kMakeWheel = R"script(import base64, hashlib, sys, zipfile
files = {
    "tinypkg/__init__.py": "def hello():\n    return 'hello from tinypkg'\n",
    "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
    "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: aasm-real-work\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(text):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
record = "".join(f"{name},{digest(text)},{len(text.encode())}\n" for name, text in files.items())
files["tinypkg-1.0.dist-info/RECORD"] = record + "tinypkg-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1] + "/tinypkg-1.0-py3-none-any.whl", "w") as wheel:
    for name, text in files.items():
        wheel.writestr(name, text)
)script";

void write_npm_package(const std::string& dir) {
  make_dir(dir);
  write_file(dir + "/package.json",
             R"({"name": "tiny", "version": "1.0.0", "private": true, "scripts": {"test": "node test.js"}})");
  write_file(dir + "/index.js", "module.exports.add = (a, b) => a + b;\n");
  write_file(dir + "/test.js",
             "const assert = require('assert');\nconst { add } = require('./index.js');\n"
             "assert.strictEqual(add(2, 3), 5);\nconsole.log('tiny: 1 test passed');\n");
}

void git_work(const World& w, const DelegatedCgroup* cgroup) {
  write_file(w.ws + "/README", "first\n");
  const Run r = sh(w,
                   "git init -q repo && cp README repo/ && cd repo && git add README"
                   " && git -c user.name=Agent -c user.email=agent@example.invalid commit -qm first"
                   " && echo second >> README && git status --short && git diff --stat | tail -1"
                   " && git log --format=%s",
                   cgroup);
  INFO(r.err);
  CHECK_RUN(r, 0, " M README\n 1 file changed, 1 insertion(+)\nfirst\n");
}

void make_work(const World& w, const DelegatedCgroup* cgroup) {
  write_c_project(w.ws + "/c");
  if (w.uid) chown_tree(w.ws + "/c", w.uid);
  const Run r = sh(w, "cd c && make -s -j2 && ./hello", cgroup);
  CHECK_RUN(r, 0, "hello from make, sum=55\n");
}

void development_work(const World& w, const DelegatedCgroup* cgroup) {
  SUBCASE("git") { git_work(w, cgroup); }
  if (w.view) {
    SUBCASE("git in the workspace's own repository, whose hooks and config the view protects") {
      write_file(w.ws + "/notes", "first\n");
      if (w.uid) chown_tree(w.ws, w.uid);
      const Run r = sh(w,
                       "git add notes && git -c user.name=Agent -c user.email=agent@example.invalid commit -qm first"
                       " && echo second >> notes && git status --short notes && git log --format=%s"
                       " && ! git config core.hooksPath /tmp 2>/dev/null && ! (echo planted > .git/hooks/pre-commit)"
                       " 2>/dev/null && echo protected",
                       cgroup);
      INFO(r.err);
      CHECK_RUN(r, 0, " M notes\nfirst\nprotected\n");
      CHECK(!contains(read_file(w.ws + "/.git/config"), "hooksPath"));
      CHECK(!exists(w.ws + "/.git/hooks/pre-commit"));
    }
  }
  SUBCASE("make -j2 of a multi-file C project, then its binary") { make_work(w, cgroup); }
  SUBCASE("python3: threads, subprocess, sqlite3, tempfile") {
    write_file(w.ws + "/work.py", kPythonWork);
    CHECK_RUN(sh(w, "python3 work.py", cgroup), 0, "threads=4 child=from a child sqlite=45\n");
  }
  SUBCASE("python3 -m venv, pip install of a wheel built here, without an index") {
    write_file(w.ws + "/make_wheel.py", kMakeWheel);
    const Run r = sh(w,
                     "mkdir dist && python3 make_wheel.py dist && python3 -m venv venv"
                     " && venv/bin/pip install -q --disable-pip-version-check --no-index --find-links dist tinypkg"
                     " && venv/bin/python -c 'import tinypkg; print(tinypkg.hello())'",
                     cgroup);
    CHECK_RUN(r, 0, "hello from tinypkg\n");
  }
  SUBCASE("node runs a script, npm test of a local package") {
    write_npm_package(w.ws + "/pkg");
    write_file(w.ws + "/script.js", "console.log([3, 1, 2].sort().join(','), require('os').platform());\n");
    if (w.uid) chown_tree(w.ws, w.uid);
    CHECK_RUN(sh(w, "node script.js", cgroup), 0, "1,2,3 linux\n");
    const Run r = sh(w, "cd pkg && npm test --no-update-notifier --no-fund --no-audit", cgroup);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "tiny: 1 test passed"));
  }
  SUBCASE("pipelines: find, grep -r, sort, tar, gzip") {
    const Run r = sh(w,
                     "mkdir -p tree/a tree/b && for i in 1 2 3; do echo needle $i > tree/a/f$i.txt;"
                     " echo hay > tree/b/g$i.txt; done"
                     " && find tree -name '*.txt' | sort | head -2"
                     " && grep -rl needle tree | sort | wc -l"
                     " && tar cf - tree | gzip -9 > tree.tar.gz && gzip -dc tree.tar.gz | tar tf - | sort | tail -1",
                     cgroup);
    CHECK_RUN(r, 0, "tree/a/f1.txt\ntree/a/f2.txt\n3\ntree/b/g3.txt\n");
  }
}

// replay's work: node loads modules from the launch directory and leaves its
// result in out/; nothing else is writable, nothing but node runs.
void replay_work(const World& w, const DelegatedCgroup* cgroup) {
  make_dir(w.ws + "/modules");
  write_file(w.ws + "/modules/a.js", "module.exports = (xs) => xs.map((x) => x * 2);\n");
  write_file(w.ws + "/modules/b.js", "module.exports = (xs) => xs.reduce((s, x) => s + x, 0);\n");
  write_file(w.ws + "/run.js",
             "const fs = require('fs');\n"
             "const twice = require('./modules/a.js'), total = require('./modules/b.js');\n"
             "const result = total(twice([1, 2, 3]));\n"
             "fs.writeFileSync('out/result.json', JSON.stringify({result}));\n"
             "const tryit = (f) => { try { f(); return 'OK'; } catch (e) { return e.code; } };\n"
             "console.log(result, tryit(() => fs.writeFileSync('elsewhere', 'x')),\n"
             "  tryit(() => fs.writeFileSync('/tmp/aasm-replay-' + process.pid, 'x')),\n"
             "  require('child_process').spawnSync('/bin/sh', ['-c', 'true']).error.code);\n");
  if (w.uid) chown_tree(w.ws, w.uid);
  const Run r = in_world(w, {"/usr/bin/node", "run.js"}, true, cgroup);
  CHECK_RUN(r, 0, "12 EACCES EACCES EACCES\n");
  CHECK(read_file(w.ws + "/out/result.json") == "{\"result\":12}");
  CHECK(!exists(w.ws + "/elsewhere"));
}

// ------------------------------------------------------------- the refusals

// One operation per run, printing OK or the error's code: node, because it
// runs under every profile.
const char* const kCheckJs = R"script(const fs = require('fs'), net = require('net');
const [op, arg] = process.argv.slice(2);
const done = (code) => { console.log(code); process.exit(0); };
const sync = (f) => { try { f(); done('OK'); } catch (e) { done(e.code); } };
if (op === 'write') sync(() => fs.writeFileSync(arg, 'planted\n'));
if (op === 'read') sync(() => fs.readFileSync(arg));
if (op === 'list') sync(() => fs.readdirSync(arg));
if (op === 'unix' || op === 'tcp') {
  const s = op === 'unix' ? net.connect({path: arg}) : net.connect({host: '127.0.0.1', port: Number(arg)});
  s.on('connect', () => { s.destroy(); done('OK'); });
  s.on('error', (e) => done(e.code));
}
)script";

// PTRACE_SEIZE of the parent (the launcher when run under it); errno name or OK.
const char* const kPtracePy = R"script(import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE, PTRACE_DETACH = 0x4206, 17
if libc.ptrace(PTRACE_SEIZE, os.getppid(), None, None) == 0:
    libc.ptrace(PTRACE_DETACH, os.getppid(), None, None)
    print("OK")
else:
    print(errno.errorcode[ctypes.get_errno()])
)script";

class UnixListener {
 public:
  explicit UnixListener(const std::string& path) : socket_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof a.sun_path);
    std::memcpy(a.sun_path, path.c_str(), path.size());
    REQUIRE(::bind(socket_.fd(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(socket_.fd(), 4) == 0);
    ::chmod(path.c_str(), 0666);
  }
  const Socket& socket() const { return socket_; }

 private:
  Socket socket_;
};

using Clock = std::chrono::steady_clock;

// The refusals of every profile, each with its control outside the sandbox.
void refusals(const Profile& profile, const World& w, const DelegatedCgroup* cgroup) {
  // What the view leaves out does not exist; Landlock alone refuses it.
  const char* const outside = w.view ? "ENOENT" : "EACCES";
  write_file(w.ws + "/check.js", kCheckJs);
  write_file(w.ws + "/ptrace.py", kPtracePy);
  if (w.uid) chown_tree(w.ws, w.uid);
  auto check = [&](const std::vector<std::string>& args, bool sandboxed) {
    std::vector<std::string> command = {"/usr/bin/node", "check.js"};
    command.insert(command.end(), args.begin(), args.end());
    return in_world(w, command, sandboxed, cgroup);
  };
  auto refused = [&](const std::vector<std::string>& args, const char* errno_name, bool control = true) {
    CAPTURE(args);
    CHECK_RUN(check(args, true), 0, std::string(errno_name) + "\n");
    if (control) CHECK_RUN(check(args, false), 0, "OK\n");
  };

  SUBCASE("a write outside the workspace") {
    refused({"write", w.outside + "/planted"}, outside);
    CHECK(read_file(w.outside + "/planted") == "planted\n");  // the control's
  }
  SUBCASE("reading /root, ~/.ssh and another user's home") {
    refused({"list", "/root"}, outside, w.uid == 0);  // /root is 0700: nobody's control fails anyway
    refused({"read", w.home + "/.ssh/id_ed25519"}, outside);
    refused({"read", w.other + "/notes.txt"}, outside);
  }
  SUBCASE("another process's /proc/PID/environ") {
    const Sentinel other(w.uid == 0 ? Sentinel::Caps::kRoot : Sentinel::Caps::kNobody);
    usleep(100 * 1000);  // setpriv has exec'd sleep
    refused({"read", "/proc/" + other.id() + "/environ"}, outside);
  }
  SUBCASE("connect() to a unix socket outside the allowed trees") {
    const UnixListener listener(w.base / "agent.sock");
    refused({"unix", w.base / "agent.sock"}, "EACCES");
  }
  SUBCASE("ptrace of the launcher") {
    if (!profile.builds) {
      // replay runs nothing but node, which cannot call ptrace: what a
      // module would need first is another program, and that is refused.
      const Run r = in_world(w, {"/usr/bin/python3", "ptrace.py"}, true, cgroup);
      CHECK(r.exit_code == 126);
      CHECK(contains(r.err, "Permission denied"));
    } else {
      CHECK_RUN(in_world(w, {"/usr/bin/python3", "ptrace.py"}, true, cgroup), 0, "EPERM\n");
      // The control: outside the sandbox its parent (a shell of the same user) is traceable.
      CHECK_RUN(in_world(w, {"/bin/sh", "-c", "python3 ptrace.py; true"}, false), 0, "OK\n");
    }
  }
  SUBCASE("curl and wget to a loopback listener fail within 2 s") {
    const Socket listener = tcp_listener();
    const std::string url = "http://127.0.0.1:" + str(local_port(listener)) + "/";
    if (!profile.builds) {
      refused({"tcp", str(local_port(listener))}, "EAFNOSUPPORT");
      CHECK(accept_one(listener));  // the control's connection
      CHECK(!listener.readable(0));
      return;
    }
    // Under coding-agent-web, connect() to a port other than 443 is refused
    // by Landlock with EACCES, which wget would retry twenty times; the
    // supervisor answers it ECONNREFUSED first (connect_answers.h), so wget
    // runs with its defaults.
    for (const auto& tool : {std::vector<std::string>{"curl", "-sS", "-o", "/dev/null", url},
                             std::vector<std::string>{"wget", "-q", "-O-", url}}) {
      CAPTURE(tool[0]);
      const auto start = Clock::now();
      const Run r = in_world(w, tool, true, cgroup);
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      CHECK(r.signal == 0);
      CHECK(r.exit_code == (tool[0] == "curl" ? 7 : 4));
      CHECK(seconds < 2.0);
      CHECK(!listener.readable(0));  // nothing reached the listener
    }
    // The control: outside the sandbox both reach the listener (which never answers).
    const Run c = in_world(w, {"curl", "-sS", "-m", "1", "-o", "/dev/null", url}, false);
    CHECK(c.exit_code == 28);
    CHECK(accept_one(listener));
    const Run g = in_world(w, {"wget", "-q", "-T", "1", "--tries=1", "-O-", url}, false);
    CHECK(g.exit_code == 4);
    CHECK(accept_one(listener));
  }
  if (profile.web) {
    SUBCASE("coding-agent-web: port 443 is allowed (nothing listens on the loopback's)") {
      CHECK_RUN(check({"tcp", "443"}, true), 0, "ECONNREFUSED\n");
    }
  }
}

void suite(const Profile& profile, uid_t uid, bool view_tier = false, bool explain = false) {
  World w(profile, uid, view_tier);
  w.explain = explain;
  std::unique_ptr<DelegatedCgroup> cgroup;
  if (uid != 0 && profile.has_limits) cgroup = std::make_unique<DelegatedCgroup>(uid);
  SUBCASE("work") {
    if (profile.builds) development_work(w, cgroup.get());
    else replay_work(w, cgroup.get());
  }
  SUBCASE("refusals") { refusals(profile, w, cgroup.get()); }
}

}  // namespace

TEST_CASE("real work: coding-agent with the filesystem view, as root") { suite(kProfiles[0], 0); }

// The bwrap backend (docs/backends.md): ci-build compiled with --backend
// bwrap, run by aasm-launch through the host's bwrap. The control of the
// refusal: the same write outside the sandbox succeeds.
TEST_CASE("real work: ci-build under the bwrap backend, as root: git and make, nothing outside the workspace") {
  World w(kProfiles[2], 0, false, true);
  SUBCASE("git") { git_work(w, nullptr); }
  SUBCASE("make -j2 of a multi-file C project, then its binary") { make_work(w, nullptr); }
  SUBCASE("a tree outside the granted ones is absent, the home's key unreadable; the control writes it") {
    const Run r = sh(w, "echo x > " + w.outside + "/planted", nullptr);
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(contains(r.err, "Directory nonexistent"));  // not in bwrap's root: only the workspace's ancestors are
    CHECK(!exists(w.outside + "/planted"));
    const Run key = sh(w, "cat " + w.home + "/.ssh/id_ed25519", nullptr);
    CHECK(key.exit_code != 0);
    CHECK(contains(key.err, "No such file or directory"));
    CHECK_RUN(in_world(w, {"/bin/sh", "-c", "echo x > " + w.outside + "/planted"}, false), 0, "");
    CHECK(exists(w.outside + "/planted"));
  }
}
TEST_CASE("real work: coding-agent with the filesystem view, as an unprivileged user") { suite(kProfiles[0], kNobody); }
TEST_CASE("real work: coding-agent-web, as root") { suite(kProfiles[1], 0); }
TEST_CASE("real work: coding-agent-web, as an unprivileged user") { suite(kProfiles[1], kNobody); }
TEST_CASE("real work: ci-build, as root") { suite(kProfiles[2], 0); }
TEST_CASE("real work: ci-build, as an unprivileged user") { suite(kProfiles[2], kNobody); }
TEST_CASE("real work: replay, as root") { suite(kProfiles[3], 0); }
TEST_CASE("real work: replay, as an unprivileged user") { suite(kProfiles[3], kNobody); }
// The tracer changes no call's outcome: the same work passes under it.
TEST_CASE("real work: coding-agent under --explain, as root") { suite(kProfiles[0], 0, false, true); }
TEST_CASE("real work: coding-agent under --explain, as an unprivileged user") { suite(kProfiles[0], kNobody, false, true); }
TEST_CASE("real work: ci-build with the filesystem view tier, as root") { suite(kProfiles[2], 0, true); }
TEST_CASE("real work: ci-build with the filesystem view tier, as an unprivileged user") {
  suite(kProfiles[2], kNobody, true);
}

// The protected paths are optional: a workspace that is not a git repository
// launches, its .git skipped and reported. The control: with .git there, the
// same launch protects it.
void launches_without_git(const Profile& profile, bool view_tier) {
  const World w(profile, 0, view_tier);
  REQUIRE(run({"/bin/rm", "-rf", w.ws + "/.git"}).exit_code == 0);
  const Run r = in_world(w, {"/bin/sh", "-c", "echo ok > made && cat made"}, true);
  INFO(r.err);
  CHECK_RUN(r, 0, "ok\n");
  CHECK(contains(r.err, "optional path '${CWD}/.git/config' does not exist here"));
  REQUIRE(run({"/usr/bin/git", "init", "-q", w.ws}).exit_code == 0);
  CHECK_RUN(in_world(w, {"/bin/sh", "-c", "echo x >> .git/config"}, true), 2, "");
}

TEST_CASE("real work: coding-agent launches in a workspace that is not a git repository, its .git skipped and reported") {
  launches_without_git(kProfiles[0], false);
}
// The tier's optional list meets ci-build's, which never names .git.
TEST_CASE("real work: the filesystem view tier launches in a workspace that is not a git repository") {
  launches_without_git(kProfiles[2], true);
}

// git takes its configuration and hooks from the directory .git/commondir
// names (and reads .git/config.worktree): a command that writes one redirects
// the git the user runs later, outside the sandbox (found by review). Missing
// at launch, they cannot be bound read-only; the run ends naming the one the
// command made.
TEST_CASE("real work: coding-agent names a protected path the command created where it was missing at launch") {
  const World w(kProfiles[0], 0);
  const Run planted = in_world(w, {"/bin/sh", "-c", "echo ../evil > .git/commondir"}, true);
  INFO(planted.err);
  CHECK(planted.exit_code == 0);
  // Its directory exists: no note before the run, the warning after it.
  CHECK_FALSE(contains(planted.err, "optional path '${CWD}/.git/commondir'"));
  CHECK(contains(planted.err, "aasm-launch: warning: the command created '${CWD}/.git/commondir' (" + w.ws +
                                  "/.git/commondir), a protected path that was missing at launch"));
  CHECK_FALSE(contains(planted.err, "created '${CWD}/.git/config.worktree'"));
  SUBCASE("the receipt keeps it among its events") {
    REQUIRE(::unlink((w.ws + "/.git/commondir").c_str()) == 0);
    const std::string receipt = w.base / "planted-receipt.json";
    const Run again = run({binary("AASM_LAUNCH"), "--receipt", receipt, w.plan, "--", "/bin/sh", "-c",
                           "echo ../evil > .git/commondir"},
                          w.ws);
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(contains(read_file(receipt), "\"the command created '${CWD}/.git/commondir' ("));
  }
  SUBCASE("once there, it is bound read-only like the others") {
    CHECK_RUN(in_world(w, {"/bin/sh", "-c", "echo ../other > .git/commondir"}, true), 2, "");
    CHECK(read_file(w.ws + "/.git/commondir") == "../evil\n");
  }
  SUBCASE("control: a run that creates none is not warned about") {
    REQUIRE(::unlink((w.ws + "/.git/commondir").c_str()) == 0);
    const Run clean = in_world(w, {"/bin/sh", "-c", "echo ok > made"}, true);
    CHECK(clean.exit_code == 0);
    CHECK_FALSE(contains(clean.err, "warning: the command created"));
  }
}

// A command found on the host's PATH in a directory the view does not hold
// (a pyenv shim, ~/.local/bin) cannot be run inside it: 127, naming the
// file found and why (found by the first-hour replay: a bare "No such file").
TEST_CASE("real work: coding-agent names a command found on the host's PATH outside the view") {
  const World w(kProfiles[0], 0);
  const std::string shims = w.base / "shims";
  make_dir(shims);
  REQUIRE(run({"/bin/cp", "/bin/true", shims + "/mytool"}).exit_code == 0);
  const std::vector<std::string> env = {"/usr/bin/env", "-i", "PATH=" + shims + ":/usr/bin:/bin"};
  const auto launch = [&](const std::string& command) {
    std::vector<std::string> argv = env;
    for (const std::string& a : {binary("AASM_LAUNCH"), w.plan, std::string("--"), command}) argv.push_back(a);
    return run(argv, w.ws);
  };
  const Run r = launch("mytool");
  INFO(r.err);
  CHECK(r.exit_code == 127);
  CHECK(contains(r.err, "cannot execute 'mytool': execve of " + shims + "/mytool (found on the host's PATH; the "
                        "filesystem view holds only the policy's trees"));
  // Control: a command the view holds, found the same way, runs.
  CHECK_RUN(launch("true"), 0, "");
}

// A profile is the broad tier of a cascade: a user's own document narrows
// it (the meet), here to writing only ${CWD}/build.
TEST_CASE("real work: a user's tier narrows coding-agent to one writable directory") {
  const World w(kProfiles[0], 0);
  make_dir(w.ws + "/build");
  const std::string mine = w.base / "mine.yaml";
  write_file(mine,
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: mine, tier: agent}\n"
             "spec:\n  filesystem:\n    write: {allow: [\"${CWD}/build\"]}\n  resources:\n    wall_clock: 30s\n");
  const std::string narrowed = w.base / "narrowed.bin";
  const Run compiled = run({binary("AASMC"), "compile", profile_file(kProfiles[0]), mine, "-o", narrowed});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const std::string script = "echo ok > build/out && echo planted > src.c";
  const Run r = run({"/usr/bin/env", "-i", kPath, binary("AASM_LAUNCH"), narrowed, "--", "/bin/sh", "-c", script}, w.ws);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "Read-only file system"));  // the view binds ${CWD} read-only, ${CWD}/build writable
  CHECK(read_file(w.ws + "/build/out") == "ok\n");
  CHECK(!exists(w.ws + "/src.c"));
  // The control: the profile alone lets the command write anywhere in the workspace.
  CHECK_RUN(in_world(w, {"/bin/sh", "-c", script}, true), 0, "");
  CHECK(read_file(w.ws + "/src.c") == "planted\n");
}
