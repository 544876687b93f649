// aasm-launch --explain (supervisor/explain_tracer.h) under the real kernel:
// each class of Landlock denial the tracer can see produces its record,
// listed in the run's events ("explain: Landlock refused ..." on stderr and
// in the receipt) until the --denials report (issue 14, lane A) shows them
// with their policy lines. Every case checks that the command still got the
// kernel's answer (the tracer changes no call), and has a control: the same
// op under a plan that permits it succeeds and lists nothing.
//
// Safety: paths in the test's temp dirs, TCP on 127.0.0.1 only, abstract
// socket names and signalled pids the test owns.
#include <unistd.h>

#include "fixtures.h"
#include "harness.h"

using namespace aasm::ktest;

namespace {

// aasm-launch --explain PLAN -- aasm-probe ARGS...
Run explain(const std::string& plan, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "30", binary("AASM_LAUNCH"), "--explain", plan, "--",
                                   binary("AASM_PROBE")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}


std::string line_for(const std::string& call, const std::string& what, const std::string& rights, const std::string& error) {
  return "explain: Landlock refused " + call + " " + what + ": needs " + rights + "; " + error + ", 1 time(s), seen by the tracer";
}

// The op got `error` from the kernel, and the tracer listed it once.
void check_explained(const Run& r, const std::string& error, const std::string& line) {
  INFO("stderr: ", r.err);
  CHECK_RUN(r, 1, error + "\n");
  CHECK(contains(r.err, "aasm-launch: note: " + line + "\n"));
}

void check_nothing_explained(const Run& r) {
  INFO("stderr: ", r.err);
  CHECK_RUN(r, 0, "OK\n");
  CHECK_FALSE(contains(r.err, "explain:"));
}

}  // namespace

TEST_CASE("explain: Landlock read, write, make_reg, truncate and execute denials are traced with path and right") {
  Trees t;
  const std::string plan = t.plan();
  write_file(t.in + "/probe-copy", read_file(binary("AASM_PROBE")), 0755);
  check_explained(explain(plan, {"read", t.secret + "/file"}), "EACCES",
                  line_for("openat", t.secret + "/file", "read_file", "EACCES"));
  check_explained(explain(plan, {"write", t.in + "/file"}), "EACCES",
                  line_for("openat", t.in + "/file", "write_file, truncate", "EACCES"));
  check_explained(explain(plan, {"create", t.in + "/new"}), "EACCES",
                  line_for("openat", t.in + "/new", "read_file, make_reg", "EACCES"));
  check_explained(explain(plan, {"truncate", t.in + "/file"}), "EACCES",
                  line_for("truncate", t.in + "/file", "truncate", "EACCES"));
  check_explained(explain(plan, {"exec", t.in + "/probe-copy", "exit", "0"}), "EACCES",
                  line_for("execve", t.in + "/probe-copy", "execute", "EACCES"));
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
  const Run r = run({binary("AASM_LAUNCH"), "--explain", t.plan(), "--", binary("AASM_PROBE"), "read", "file"}, t.secret);
  check_explained(r, "EACCES", line_for("openat", t.secret + "/file", "read_file", "EACCES"));

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
      compile_spec(dir, "net", base_fs().yaml() + "  network:\n    bind: none\n    outbound: {allow: [\"tcp:1\"]}\n");
  check_explained(explain(plan, {"tcp-bind", str(port)}), "EACCES",
                  line_for("bind", "tcp port " + str(port), "bind_tcp", "EACCES"));
  const Run refused = explain(plan, {"tcp-connect", other});
  CHECK_RUN(refused, 1, "ECONNREFUSED\n");
  CHECK(contains(refused.err, "explain: Landlock refused connect tcp port " + other +
                                  ": needs connect_tcp; ECONNREFUSED, 1 time(s), seen by the supervisor\n"));
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
                  line_for("connect", "@" + listener.name, "abstract_unix_socket", "EPERM"));
  check_explained(explain(scoped, {"kill", sentinel.id(), "0"}), "EPERM",
                  "explain: Landlock refused kill (pid " + sentinel.id() + "): needs signal; EPERM, 1 time(s), seen by the tracer");
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
  CHECK_FALSE(contains(r.err, "explain:"));
}
