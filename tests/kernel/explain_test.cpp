// aasm-launch --explain (supervisor/explain_tracer.h) under the real kernel:
// each class of Landlock denial the tracer can see produces its record,
// printed by the --denials report (supervisor/denial_report.h) with the
// witness "tracer". Every case checks that the command still got the
// kernel's answer (the tracer changes no call), and has a control: the same
// op under a plan that permits it succeeds and lists nothing.
//
// Safety: paths in the test's temp dirs, TCP on 127.0.0.1 only, abstract
// socket names and signalled pids the test owns.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;

namespace {

// aasm-launch --explain PLAN -- aasm-probe ARGS...
Run explain(const std::string& plan, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "30", binary("AASM_LAUNCH"), "--explain", "--denials=full", plan, "--",
                                   binary("AASM_PROBE")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}


// The report's line of one denial seen once, and who saw it.
std::string line_for(const std::string& rights, const std::string& what, const std::string& error,
                     const std::string& witness = "tracer") {
  return "  " + rights + (what.empty() ? "" : " " + what) + " -> " + error + "  x1\n    seen by: " + witness;
}

// The op got `error` from the kernel, and the report lists it once.
void check_explained(const Run& r, const std::string& error, const std::string& line) {
  INFO("stderr: ", r.err);
  CHECK_RUN(r, 1, error + "\n");
  CHECK(contains(r.err, line));
}

void check_nothing_explained(const Run& r) {
  INFO("stderr: ", r.err);
  CHECK_RUN(r, 0, "OK\n");
  CHECK_FALSE(contains(r.err, "aasm-launch: denials:"));
}

}  // namespace

TEST_CASE("explain: Landlock read, write, make_reg, truncate and execute denials are traced with path and right") {
  Trees t;
  const std::string plan = t.plan();
  write_file(t.in + "/probe-copy", read_file(binary("AASM_PROBE")), 0755);
  check_explained(explain(plan, {"read", t.secret + "/file"}), "EACCES",
                  line_for("read_file", t.secret + "/file", "EACCES"));
  check_explained(explain(plan, {"write", t.in + "/file"}), "EACCES",
                  line_for("write_file,truncate", t.in + "/file", "EACCES"));
  check_explained(explain(plan, {"create", t.in + "/new"}), "EACCES",
                  line_for("read_file,make_reg", t.in + "/new", "EACCES"));
  check_explained(explain(plan, {"truncate", t.in + "/file"}), "EACCES",
                  line_for("truncate", t.in + "/file", "EACCES"));
  check_explained(explain(plan, {"exec", t.in + "/probe-copy", "exit", "0"}), "EACCES",
                  line_for("execute", t.in + "/probe-copy", "EACCES"));
  CHECK_FALSE(exists(t.in + "/new"));
  CHECK(read_file(t.in + "/file") == "inside\n");

  SUBCASE("control: where the plan allows them the same ops succeed and nothing is listed") {
    const std::string open = t.open_plan();
    check_nothing_explained(explain(open, {"read", t.secret + "/file"}));
    check_nothing_explained(explain(open, {"create", t.in + "/new"}));
    check_nothing_explained(explain(open, {"truncate", t.in + "/file"}));
    check_nothing_explained(explain(open, {"exec", t.in + "/probe-copy", "ok"}));
    check_nothing_explained(explain(open, {"write", t.in + "/file"}));
    CHECK(read_file(t.in + "/file") == "x");
  }
}

TEST_CASE("explain: a relative path is resolved against the caller's working directory") {
  Trees t;
  const Run r = run({binary("AASM_LAUNCH"), "--explain", "--denials=full", t.plan(), "--", binary("AASM_PROBE"), "read", "file"},
                    t.secret);
  // Resolved, and written as the report writes paths beneath the launch directory.
  check_explained(r, "EACCES", line_for("read_file", "${CWD}/file", "EACCES"));

  SUBCASE("control: under a plan that allows it the read succeeds") {
    check_nothing_explained(run({binary("AASM_LAUNCH"), "--explain", t.open_plan(), "--", binary("AASM_PROBE"), "read", "file"},
                                t.secret));
  }
}

TEST_CASE("explain: a TCP bind denial is traced with its port; a refused connect is listed from the supervisor's answer") {
  TempDir dir;
  const uint16_t port = free_tcp_port();
  const Socket listener = tcp_listener();
  const std::string other = str(local_port(listener));
  const std::string plan =
      // A bind allow-list: under `none` seccomp refuses bind() before Landlock sees it.
      compile_spec(dir, "net", base_fs().yaml() + "  network:\n    bind: {allow: [\"tcp:1\"]}\n    outbound: {allow: [\"tcp:1\"]}\n");
  check_explained(explain(plan, {"tcp-bind", str(port)}), "EACCES",
                  line_for("bind_tcp", "port " + str(port), "EACCES"));
  const Run refused = explain(plan, {"tcp-connect", other});
  CHECK_RUN(refused, 1, "ECONNREFUSED\n");
  CHECK(contains(refused.err, line_for("connect_tcp", "port " + other, "ECONNREFUSED", "listener")));
  CHECK_FALSE(listener.readable());

  SUBCASE("control: without a network node both succeed and nothing is listed") {
    const std::string open = compile_spec(dir, "open", base_fs().yaml());
    check_nothing_explained(explain(open, {"tcp-bind", str(port)}));
    check_nothing_explained(explain(open, {"tcp-connect", other}));
    CHECK(accept_one(listener));
  }
}

TEST_CASE("explain: scope denials (abstract unix socket, signal) are traced") {
  TempDir dir;
  AbstractListener listener;
  Sentinel sentinel;
  const std::string scoped = compile_spec(dir, "scoped",
                                          base_fs().yaml() +
                                              "  ipc:\n    abstract_unix_sockets: deny\n    signals: deny\n"
                                              "    unix_sockets: {allow: [\"/\"]}\n");
  check_explained(explain(scoped, {"abstract-connect", listener.name}), "EPERM",
                  line_for("abstract_unix_socket", "@" + listener.name, "EPERM"));
  check_explained(explain(scoped, {"kill", sentinel.id(), "0"}), "EPERM",
                  line_for("signal", "", "EPERM") + " (landlock_scope)\n    arguments: pid " + sentinel.id());
  CHECK(sentinel.alive());

  SUBCASE("control: without the scopes both succeed and nothing is listed") {
    const std::string open = compile_spec(dir, "open", base_fs().yaml() +
                                                           "  ipc:\n    signals: allow\n    unix_sockets: {allow: [\"/\"]}\n");
    check_nothing_explained(explain(open, {"abstract-connect", listener.name}));
    check_nothing_explained(explain(open, {"kill", sentinel.id(), "0"}));
  }
}

TEST_CASE("explain: without --explain nothing is traced or listed") {
  Trees t;
  const Run r = probe(t.plan(), {"read", t.secret + "/file"});
  CHECK_RUN(r, 1, "EACCES\n");
  CHECK_FALSE(contains(r.err, "-> EACCES"));  // no denial listed: only the note that they are unseen
}

// Landlock checks the file a symlink leads to: the record names the target,
// the path a rule must grant (a rule on the link's path would be beneath a
// granted tree already, and the report could name no edit).
TEST_CASE("explain: a read through a symlink is recorded at the symlink's target") {
  Trees t;
  REQUIRE(::symlink((t.secret + "/file").c_str(), (t.in + "/link").c_str()) == 0);
  check_explained(explain(t.plan(), {"read", t.in + "/link"}), "EACCES", line_for("read_file", t.secret + "/file", "EACCES"));

  SUBCASE("control: where the plan allows the target the read through the link succeeds") {
    check_nothing_explained(explain(t.open_plan(), {"read", t.in + "/link"}));
  }
}

// The observation never allows, with the tracer as the observer: a refused
// open stops at the tracer's seccomp stop; with the supervisor stopped it
// waits there, and with the supervisor killed the kernel kills the traced
// command (PTRACE_O_EXITKILL), so the open never completes. The file is
// never made (Landlock refuses it whatever the tracer does).
TEST_CASE("explain: killing the supervisor while a refused call waits at the tracer's stop never lets it through") {
  Trees t;
  const std::string marker = t.secret + "/made-while-traced";
  const std::string go = t.dir / "go";
  // Builtins only until `go` exists (stat is not traced), then the open.
  const std::string script = "until [ -e " + go + " ]; do :; done; : > " + marker;
  const auto start = [&](const std::string& plan) {
    const pid_t launcher = ::fork();
    REQUIRE(launcher >= 0);
    if (launcher == 0) {
      const std::string launch = binary("AASM_LAUNCH");
      const char* argv[] = {launch.c_str(), "--explain", plan.c_str(), "--", "/bin/sh", "-c", script.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), environ);
      _exit(127);
    }
    return launcher;
  };
  // A /proc file, "" when its process is gone meanwhile.
  const auto proc_text = [](const std::string& path) { return read_proc_file(path).value_or(""); };
  // The shell's pid (its command line is /bin/sh -c SCRIPT) and its state letter.
  const auto shell = [&]() -> std::pair<pid_t, char> {
    DIR* proc = ::opendir("/proc");
    std::pair<pid_t, char> found{-1, '?'};
    while (dirent* entry = proc ? ::readdir(proc) : nullptr) {
      const pid_t pid = pid_t(std::atol(entry->d_name));
      if (pid <= 0) continue;
      const std::string cmdline = proc_text("/proc/" + std::string(entry->d_name) + "/cmdline");
      if (cmdline.rfind(std::string("/bin/sh\0-c\0", 11) + script, 0) != 0) continue;
      const std::string stat = proc_text("/proc/" + std::string(entry->d_name) + "/stat");
      const size_t paren = stat.rfind(')');
      found = {pid, paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?'};
    }
    if (proc) ::closedir(proc);
    return found;
  };

  const pid_t launcher = start(t.plan());
  pid_t traced = -1;
  for (int i = 0; i < 500 && traced < 0; ++i, sleep_ms(10)) traced = shell().first;  // looping on `go`
  ReapOnExit reaper(launcher);
  REQUIRE(traced > 0);
  REQUIRE(::kill(launcher, SIGSTOP) == 0);
  write_file(go, "");
  char state = '?';
  for (int i = 0; i < 500 && state != 't'; ++i, sleep_ms(10)) state = shell().second;
  CHECK(state == 't');  // stopped at the open, for a tracer that does not come
  CHECK_FALSE(exists(marker));
  REQUIRE(::kill(launcher, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  reaper.release();
  for (int i = 0; i < 500 && ::kill(traced, 0) == 0; ++i) sleep_ms(10);
  CHECK(::kill(traced, 0) != 0);
  CHECK_FALSE(exists(marker));

  SUBCASE("control: under a plan that allows the write the same command makes the file") {
    const pid_t allowed = start(t.open_plan());
    REQUIRE(::waitpid(allowed, &status, 0) == allowed);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(exists(marker));
  }
}
