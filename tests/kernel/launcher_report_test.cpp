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
  bool capabilities_dropped = false, namespaces_listed = false;
  for (const auto& control : json["controls"]) {
    if (control["domain"] == "capabilities") capabilities_dropped = control["achieved"] == "enforced";
    if (control["domain"] == "namespaces") namespaces_listed = true;
  }
  CHECK(capabilities_dropped);
  CHECK_FALSE(namespaces_listed);  // the plan asks for none
  bool cwd_template = false;
  for (const auto& path : json["paths"])
    if (path["template"] == "${CWD}") {
      cwd_template = true;
      CHECK(path["resolved_sha256"].get<std::string>().size() == 64);
    }
  CHECK(cwd_template);
  CHECK(json["command"]["outcome"] == "exited");

  // Control: a launch refused before it starts writes no receipt.
  const std::string refused_receipt = dir / "refused.json";
  write_file(dir / "empty.bin", "");
  const Run refused = run({binary("AASM_LAUNCH"), "--receipt", refused_receipt, dir / "empty.bin", "--", "/bin/true"});
  CHECK(refused.exit_code == 125);
  CHECK_FALSE(exists(refused_receipt));
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
    CHECK(control["achieved"] == "enforced");
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

}  // namespace
}  // namespace aasm::ktest
