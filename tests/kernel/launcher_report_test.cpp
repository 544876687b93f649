// What the launcher says about a launch: --dry-run's verdict per host, and
// the receipt's requested / planned / achieved with the basis of each, paths
// recorded as templates and digests only.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <vector>

#include "harness.h"

namespace aasm::ktest {
namespace {

// A filesystem plan (the probe readable and executable) whose read list has
// the given extra entries.
std::string compile_reads(const TempDir& dir, const std::string& extra_yaml) {
  const std::string source = dir / "policy.yaml";
  write_file(source,
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: report, tier: agent}\nspec:\n"
             "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"${CWD}\", \"" + probe_dir() + "\"" + extra_yaml + "]}\n"
             "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n");
  return source;
}

std::string compile_source(const TempDir& dir, const std::string& source) {
  const Run compiled = run({binary("AASMC"), "compile", source, "-o", dir / "plan.bin"});
  INFO("aasmc: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  return dir / "plan.bin";
}

TEST_CASE("dry-run: a plan this host can enforce would proceed, with every control and path shown") {
  TempDir dir;
  const std::string plan = compile_source(dir, compile_reads(dir, ""));
  const Run r = run({binary("AASM_LAUNCH"), "--dry-run", plan}, dir.path());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("file_read") != std::string::npos);
  CHECK(r.out.find("enforced") != std::string::npos);
  CHECK(r.out.find("${CWD} -> " + dir.path()) != std::string::npos);  // the operator sees the resolved path
  CHECK(r.out.find("self-check: after restrict_self the child must fail to read") != std::string::npos);
  CHECK(r.out.find("verdict: the launch would proceed") != std::string::npos);
}

TEST_CASE("dry-run: a missing required path makes the verdict a refusal, exit 125; optional, it proceeds") {
  TempDir dir;
  const std::string missing = dir / "missing-tree";
  const std::string plan = compile_source(dir, compile_reads(dir, ", \"" + missing + "\""));
  const Run refused = run({binary("AASM_LAUNCH"), "--dry-run", plan}, dir.path());
  INFO(refused.out);
  CHECK(refused.exit_code == 125);
  CHECK(refused.out.find("verdict: the launch would be refused") != std::string::npos);
  CHECK(refused.out.find(missing) != std::string::npos);
  // The real launch agrees with the dry run, and never runs the command.
  const Run launched = run({binary("AASM_LAUNCH"), plan, "--", binary("AASM_PROBE"), "write", dir / "marker"}, dir.path());
  CHECK(launched.exit_code == 125);
  CHECK_FALSE(exists(dir / "marker"));

  // Control: the same path listed as optional.
  const std::string source = dir / "optional.yaml";
  write_file(source, read_file(dir / "policy.yaml") + "    optional: [\"" + missing + "\"]\n");
  const Run compiled = run({binary("AASMC"), "compile", source, "-o", dir / "optional.bin"});
  REQUIRE(compiled.exit_code == 0);
  const Run proceeds = run({binary("AASM_LAUNCH"), "--dry-run", dir / "optional.bin"}, dir.path());
  INFO(proceeds.out);
  CHECK(proceeds.exit_code == 0);
  CHECK(proceeds.out.find("missing (optional") != std::string::npos);
}

TEST_CASE("receipt: controls measured at this launch, paths as templates and digests, no working directory") {
  TempDir dir;
  const std::string plan = compile_source(dir, compile_reads(dir, ""));
  const std::string receipt = dir / "receipt.json";
  const Run r = run({binary("AASM_LAUNCH"), "--receipt", receipt, plan, "--", binary("AASM_PROBE"), "read",
                     "/etc/hostname"},
                    dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(exists(receipt));
  const std::string text = read_file(receipt);
  CHECK(text.find(dir.path()) == std::string::npos);  // the working directory is not persisted
  const auto json = nlohmann::json::parse(text);
  CHECK(json["schema"] == "aasm.dev/receipt/v1");
  bool read_enforced = false;
  for (const auto& control : json["controls"])
    if (control["domain"] == "file_read") {
      read_enforced = control["achieved"] == "enforced";
      CHECK(control["basis"].get<std::string>().rfind("measured:", 0) == 0);
    }
  CHECK(read_enforced);
  bool capabilities_dropped = false, namespaces_unconstrained = false;
  for (const auto& control : json["controls"]) {
    if (control["domain"] == "capabilities") capabilities_dropped = control["achieved"] == "enforced";
    if (control["domain"] == "namespaces") namespaces_unconstrained = control["achieved"] == "not constrained";
  }
  CHECK(capabilities_dropped);
  CHECK(namespaces_unconstrained);  // the plan asks for none, and the receipt says so
  bool cwd_template = false;
  for (const auto& path : json["paths"])
    if (path["template"] == "${CWD}") {
      cwd_template = true;
      CHECK(path["resolved_hmac"].get<std::string>().size() == 64);
    }
  CHECK(cwd_template);
  CHECK(json["command"]["outcome"] == "exited");

  // Control: a launch refused before it starts writes a receipt that says so.
  const std::string refused_receipt = dir / "refused.json";
  write_file(dir / "empty.bin", "");
  const Run refused = run({binary("AASM_LAUNCH"), "--receipt", refused_receipt, dir / "empty.bin", "--", "/bin/true"});
  CHECK(refused.exit_code == 125);
  const auto not_started = nlohmann::json::parse(read_file(refused_receipt));
  CHECK(not_started["command"]["outcome"] == "not started");
  CHECK(not_started["enforcement"] == "none");
  CHECK(not_started["plan_sha256"] == "");  // an invalid plan has no verified digest
}

// Each Landlock control is "measured" only by a check of its own after
// restrict_self (launcher/self_checks.h): the read, write, connect, bind and
// signal checks; execution has none before the command's own exec, so its
// basis says "asserted". (The receipts once called every control measured
// on the strength of the read check alone.)
TEST_CASE("receipt: each control is measured by its own self-check, or asserted") {
  REQUIRE(::geteuid() == 0);  // root: the kernel's own permissions would let it create a directory in /
  TempDir dir;
  const std::string source = dir / "policy.yaml";
  write_file(source,
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: report, tier: agent}\nspec:\n"
             "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() + "\"]}\n"
             "    write: {allow: [\"" + dir.path() + "\"]}\n"
             "    execute: {allow: [\"/usr\", \"" + probe_dir() + "\"]}\n"
             "  network:\n    outbound: {allow: [\"tcp:443\"]}\n    bind: none\n");
  const std::string plan = compile_source(dir, source);
  const std::string receipt = dir / "receipt.json";
  const Run r = run({binary("AASM_LAUNCH"), "--receipt", receipt, plan, "--", binary("AASM_PROBE"), "exit", "0"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::string> basis;
  const auto json = nlohmann::json::parse(read_file(receipt));
  for (const auto& control : json["controls"]) {
    if (control["planned"] == "not planned") continue;
    // Enforced on a measured basis only; an asserted one is "not measured".
    const bool measured = control["basis"].get<std::string>().rfind("measured: ", 0) == 0;
    CHECK(control["achieved"] == (measured ? "enforced" : "not measured"));
    basis[control["domain"].get<std::string>()] = control["basis"].get<std::string>();
  }
  CHECK(basis["file_read"].find("measured: ") == 0);
  CHECK(basis["file_write"] ==
        "measured: landlock_restrict_self returned 0; creating a directory outside the writable trees then failed with EACCES");
  CHECK(basis["file_execute"].find("asserted: ") == 0);
  CHECK(basis["network_outbound"].find("measured: landlock_restrict_self returned 0; a TCP connect to 127.0.0.1:0") == 0);
  CHECK(basis["network_bind"].find("measured: landlock_restrict_self returned 0; a TCP bind of 127.0.0.1:0") == 0);
  CHECK(basis["ipc"].find("measured: landlock_restrict_self returned 0; signal 0 to the supervisor") == 0);

  SUBCASE("control: without Landlock the kernel itself refuses none of the checks' operations with EACCES/EPERM") {
    const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(tcp >= 0);
    sockaddr_in loopback{};
    loopback.sin_family = AF_INET;
    loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(::connect(tcp, reinterpret_cast<sockaddr*>(&loopback), sizeof loopback) == -1);
    CHECK(errno == ECONNREFUSED);
    ::close(tcp);
    const int bound = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(::bind(bound, reinterpret_cast<sockaddr*>(&loopback), sizeof loopback) == 0);
    ::close(bound);
    CHECK(::kill(::getppid(), 0) == 0);
    CHECK(::faccessat(AT_FDCWD, "/", W_OK, AT_EACCESS) == 0);
  }
}

// --dry-run and a launch run one preparation (launcher/preparation.h): the
// controls the dry run prints as achievable are the receipt's, one by one,
// in the same order, with the same requested and planned, and achieved as
// predicted; a refusal is the same refusal. (Before, the dry run re-walked
// the steps in its own order and printed only the Landlock controls in this
// form.)
struct ReportedControl {
  std::string domain, requested, planned, level;
  bool operator==(const ReportedControl&) const = default;
};

std::ostream& operator<<(std::ostream& out, const ReportedControl& c) {
  return out << c.domain << " [" << c.requested << " / " << c.planned << " / " << c.level << "]";
}

// The lines "  DOMAIN  REQUESTED / PLANNED / LEVEL[: WHY]" under "controls (".
std::vector<ReportedControl> dry_run_controls(const std::string& out) {
  std::vector<ReportedControl> controls;
  std::istringstream lines(out);
  std::string line;
  bool in_controls = false;
  while (std::getline(lines, line)) {
    if (line.rfind("controls (", 0) == 0) {
      in_controls = true;
      continue;
    }
    if (!in_controls || line.rfind("  ", 0) != 0) {
      in_controls = false;
      continue;
    }
    if (line.find(" unconstrained: ") != std::string::npos) continue;  // no control: no receipt entry
    const size_t name_end = line.find(' ', 2);
    const size_t requested_start = line.find_first_not_of(' ', name_end);
    const size_t planned_start = line.find(" / ", requested_start) + 3;
    const size_t level_start = line.find(" / ", planned_start) + 3;
    const size_t level_end = line.find(": ", level_start);
    controls.push_back({line.substr(2, name_end - 2), line.substr(requested_start, planned_start - 3 - requested_start),
                        line.substr(planned_start, level_start - 3 - planned_start),
                        line.substr(level_start, level_end == std::string::npos ? std::string::npos : level_end - level_start)});
  }
  return controls;
}

std::vector<ReportedControl> receipt_controls(const std::string& receipt) {
  std::vector<ReportedControl> controls;
  const auto json = nlohmann::json::parse(read_file(receipt));
  for (const auto& c : json["controls"]) {
    if (c["achieved"] == "not constrained") continue;  // the controls the plan does not touch: the dry run's `unconstrained`
    // The dry run's "enforced" on an asserted basis is the receipt's "not measured".
    controls.push_back({c["domain"], c["requested"], c["planned"], c["achieved"] == "not measured" ? "enforced" : c["achieved"]});
  }
  return controls;
}

// The dry run and a launch of `plan` under the same `prefix` (a fault
// injection, or nothing): the same controls, achieved as predicted.
void check_agreement(const TempDir& dir, const std::string& plan, const std::vector<std::string>& prefix = {}) {
  std::vector<std::string> dry = prefix;
  dry.insert(dry.end(), {binary("AASM_LAUNCH"), "--dry-run", plan});
  const Run predicted = run(dry, dir.path());
  INFO("dry run: ", predicted.out);
  REQUIRE(predicted.exit_code == 0);
  const std::string receipt = dir / "agreement.json";
  std::vector<std::string> launch = prefix;
  launch.insert(launch.end(), {binary("AASM_LAUNCH"), "--receipt", receipt, plan, "--", binary("AASM_PROBE"), "exit", "0"});
  const Run launched = run(launch, dir.path());
  INFO("launch: ", launched.err);
  REQUIRE(launched.exit_code == 0);
  const std::vector<ReportedControl> expected = dry_run_controls(predicted.out), achieved = receipt_controls(receipt);
  CHECK(expected.size() >= 3);  // at least syscall, capabilities and one more: the parse found the lines
  CHECK(expected == achieved);
}

TEST_CASE("dry-run and launch share one preparation: the dry run's controls are the receipt's, control by control") {
  REQUIRE(::geteuid() == 0);  // kept capabilities, namespaces and the run's cgroup
  TempDir dir;
  const std::string filesystem = "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\", \"" + probe_dir() +
                                 "\"]}\n    write: {allow: [\"" + dir.path() + "\"]}\n    execute: {allow: [\"/usr\", \"" +
                                 probe_dir() + "\"]}\n";
  const std::string fault = probe_dir() + "/aasm-fault";

  SUBCASE("every Landlock control, the network ones too") {
    check_agreement(dir, compile_spec(dir, "landlock", filesystem + "  network:\n    outbound: {allow: [\"tcp:443\"]}\n"
                                                                    "    bind: none\n"));
  }
  SUBCASE("namespaces and a kept capability") {
    check_agreement(dir, compile_spec(dir, "isolation", filesystem + "  isolation:\n    namespaces: [pid, net, mount]\n"
                                                                     "    linux_capabilities: [CAP_NET_BIND_SERVICE]\n"));
  }
  SUBCASE("tree limits in the run's cgroup") {
    check_agreement(dir, compile_spec(dir, "limits", filesystem + "  resources:\n    memory: 256Mi\n    pids: 64\n"));
  }
  SUBCASE("tree limits degraded to per-process stand-ins where no cgroup can be made") {
    const std::string plan = compile_spec(
        dir, "stand-ins", filesystem + "  resources:\n    memory: 256Mi\n  isolation:\n    degraded: [resource]\n");
    check_agreement(dir, plan, {fault, "mkdir=EACCES,mkdirat=EACCES"});
    CHECK(read_file(dir / "agreement.json").find("\"achieved\":\"partial\"") != std::string::npos);
  }
  SUBCASE("without Landlock: signals scoped by a PID namespace") {
    const std::string plan = compile_spec(dir, "no-landlock", "  syscalls:\n    deny: [\"@mount\"]\n");
    check_agreement(dir, plan, {fault, "landlock_create_ruleset=ENOSYS"});
    CHECK(read_file(dir / "agreement.json").find("created in a new PID namespace") != std::string::npos);
  }
  SUBCASE("a refusal is the same refusal") {
    const std::string plan = compile_spec(dir, "missing", "  filesystem:\n    read: {allow: [\"/usr\", \"" + probe_dir() +
                                                              "\", \"" + dir.path() + "/missing\"]}\n");
    const Run dry = run({binary("AASM_LAUNCH"), "--dry-run", plan});
    const Run launched = run({binary("AASM_LAUNCH"), plan, "--", binary("AASM_PROBE"), "exit", "0"});
    INFO(dry.out, launched.err);
    CHECK(dry.exit_code == 125);
    CHECK(launched.exit_code == 125);
    const std::string prefix = "verdict: the launch would be refused: ";
    const size_t verdict = dry.out.find(prefix);
    REQUIRE(verdict != std::string::npos);
    CHECK(launched.err == "aasm-launch: error: " + dry.out.substr(verdict + prefix.size()));
  }
}

}  // namespace
}  // namespace aasm::ktest
