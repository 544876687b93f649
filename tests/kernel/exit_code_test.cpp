// aasm-launch's exit-code contract (launcher/exit_codes.h): 127 not found,
// 128+N killed by signal N, otherwise the command's own status.
#include <csignal>

#include "harness.h"
#include "sandbox.h"

using namespace aasm::ktest;

namespace {

// The base policy plus what `aasm-probe raise` needs.
std::string signal_plan(Sandbox& s) {
  Policy p = s.base();
  p.syscalls.push_back("getpid");
  p.syscalls.push_back("kill");
  return compile(s.dir, p);
}

}  // namespace

TEST_CASE("exit code: a command that does not exist is 127") {
  Sandbox s;
  const std::string plan = compile(s.dir, s.base());
  CHECK_RUN(launch(plan, {s.dir / "no-such-command"}), 127, "");
  CHECK_RUN(launch(plan, {"aasm-no-such-command-on-path"}), 127, "");
  // Control: the same plan runs a command that exists.
  CHECK_RUN(probe(plan, {"exit", "0"}), 0, "");
}

TEST_CASE("exit code: a command killed by signal N is 128+N") {
  Sandbox s;
  const std::string plan = signal_plan(s);
  CHECK_RUN(probe(plan, {"raise", std::to_string(SIGTERM)}), 128 + SIGTERM, "");
  CHECK_RUN(probe(plan, {"raise", std::to_string(SIGKILL)}), 128 + SIGKILL, "");
  // Control: signal 0 kills nothing, so the probe lives to say so.
  CHECK_RUN(probe(plan, {"raise", "0"}), 0, "OK\n");
}

TEST_CASE("exit code: `--` is no option's value: a usage error, 125, before anything runs") {
  Sandbox s;
  const std::string plan = compile(s.dir, s.base());
  for (const char* option : {"--receipt", "--receipt-fd", "--receipt-key-file", "--expect-digest", "--bwrap"}) {
    CAPTURE(option);
    const Run r = run({binary("AASM_LAUNCH"), plan, option, "--", "/bin/true"});
    CHECK(r.exit_code == 125);
    CHECK(contains(r.err, std::string("aasm-launch: error: ") + option + " needs "));
  }
  // Control: given a value, the same launch runs.
  CHECK(run({binary("AASM_LAUNCH"), plan, "--receipt", s.dir / "receipt.json", "--", "/bin/true"}).exit_code == 0);
}

TEST_CASE("exit code: the command's own status passes through") {
  Sandbox s;
  const std::string plan = compile(s.dir, s.base());
  for (int status : {0, 1, 3, 42, 124, 200}) {
    CAPTURE(status);
    CHECK_RUN(probe(plan, {"exit", std::to_string(status)}), status, "");
  }
}

// An interrupt (Ctrl-C, TERM, HUP) says why the command ended; the denial
// report's "none recorded" hint after it only sent users looking.
TEST_CASE("exit code: an interrupted command ends without the denial report's hint") {
  Sandbox s;
  const std::string plan = signal_plan(s);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    CAPTURE(signal);
    const Run r = probe(plan, {"raise", std::to_string(signal)});
    CHECK(r.exit_code == 128 + signal);
    CHECK_FALSE(contains(r.err, "denials:"));
  }
  // Control: a failure of the command's own gets it (the plan's filter
  // cannot show a kill in a descendant, so the host cannot show every kind).
  const Run failed = probe(plan, {"exit", "3"});
  CHECK(failed.exit_code == 3);
  CHECK(contains(failed.err, "aasm-launch: denials: none recorded"));
}
