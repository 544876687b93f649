// Issue 14: every denial names the policy line(s) that refused it and the
// edit that would allow it. A cascade of two documents is compiled by the
// real aasmc; the join (supervisor/denial_report.h) runs on the plan it
// wrote, with denials as the run's observers record them, and must name the
// right document's file:line:col. The launcher's side: --denials, the
// receipt's section, and an older plan without provenance still running.
#include <algorithm>
#include <span>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "plan/plan.h"
#include "supervisor/denial_report.h"
#include "supervisor/denials.h"

using namespace aasm::ktest;
using namespace aasm::denials;

namespace {

const std::string kOrg = R"(apiVersion: aasm.dev/v1
kind: Policy
metadata: {name: org-base, tier: org}
spec:
  filesystem:
    read:
      allow: ["/usr", "/etc", "${HOME}"]
    write:
      allow: ["${CWD}"]
  network:
    outbound: {allow: ["tcp:443"]}
    bind: none
  ipc:
    signals: deny
  syscalls:
    default: kill
    allow: ["@startup", "@file-read", "@process", "@memory", "@signal", "@time"]
    deny: [ptrace]
)";

const std::string kAgent = R"(apiVersion: aasm.dev/v1
kind: Policy
metadata: {name: my-agent, tier: agent}
spec:
  filesystem:
    read:
      allow: ["/usr", "${CWD}"]
  network:
    outbound: {allow: ["tcp:443", "tcp:80"]}
  syscalls:
    default: "errno:EPERM"
    allow: ["@startup", "@file-read", "@process", "@memory", "@signal", "@time", "@file-write"]
    rules:
      - {syscall: getcwd, action: "errno:EACCES"}
      - {syscall: unlinkat, action: allow}
)";

// "FILE:line:col" of the first occurrence of `token` in `text` at or after `after`.
std::string where(const std::string& file, const std::string& text, const std::string& token, const std::string& after = "") {
  const size_t from = after.empty() ? 0 : text.find(after);
  const size_t at = text.find(token, from);
  REQUIRE(at != std::string::npos);
  const size_t line_start = text.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
  const long line = std::count(text.begin(), text.begin() + long(at), '\n') + 1;
  return file + ":" + std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

std::string where(const Edit& e) { return e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column); }

struct Cascade {
  TempDir dir;
  std::string org = dir / "org.yaml", agent = dir / "agent.yaml", plan_path = dir / "plan.bin";
  aasm::plan::Plan plan;
  aasm::LaunchContext context{"/work/project", "/home/user"};

  Cascade() {
    write_file(org, kOrg);
    write_file(agent, kAgent);
    const Run compiled = run({binary("AASMC"), "compile", org, agent, "-o", plan_path});
    INFO("aasmc stderr: ", compiled.err);
    REQUIRE(compiled.exit_code == 0);
    const std::string bytes = read_file(plan_path);
    auto decoded = aasm::plan::decode_plan({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
    REQUIRE(decoded);
    plan = std::move(*decoded);
    REQUIRE(plan.provenance);
  }

  Explanation explain(const Denial& d) const { return aasm::denials::explain(d, plan, context); }
};

Denial seccomp_denial(int number, int error) {
  Denial d;
  d.layer = Layer::kSeccomp;
  d.syscall = number;
  d.error = error;
  return d;
}

// A Landlock denial as the --explain tracer records it.
Denial traced(Layer layer, uint64_t rights, std::string path = "", uint16_t port = 0) {
  Denial d;
  d.layer = layer;
  d.witness = Witness::kTracer;
  d.error = 13;
  d.rights = rights;
  d.path = std::move(path);
  d.port = port;
  return d;
}

Denial fs_denial(uint64_t rights, std::string path) { return traced(Layer::kLandlockFs, rights, std::move(path)); }

// Landlock bits (kernel/landlock_rights.def).
constexpr uint64_t kReadFile = 1u << 2, kMakeReg = 1u << 8, kTruncate = 1u << 14;
constexpr uint64_t kBindTcp = 1u << 0, kConnectTcp = 1u << 1, kSignalScope = 1u << 1;
// x86_64 syscall numbers.
constexpr int kPtrace = 101, kSethostname = 170, kMkdir = 83, kUnlinkat = 263, kGetcwd = 79;

}  // namespace

TEST_CASE("denial report: a syscall outside both allowlists names each document's list and the default") {
  Cascade c;
  const Explanation e = c.explain(seccomp_denial(kSethostname, 0));
  CHECK(e.call == "sethostname");
  REQUIRE(e.edits.size() == 2);
  CHECK(e.edits[0].file == c.org);
  CHECK(e.edits[1].file == c.agent);
  for (const Edit& edit : e.edits) {
    CHECK(edit.op == "add");
    CHECK(edit.list == "syscalls.allow");
    CHECK(edit.item == "sethostname");
    CHECK(edit.widens == "@privileged");  // a sensitive deny set's member
  }
  // Each document's syscalls node, then the cascade's default (org's kill, the strictest).
  REQUIRE(e.policy.size() == 3);
  CHECK(e.policy[0].where() == where(c.org, kOrg, "default: kill"));
  CHECK(e.policy[1].where() == where(c.agent, kAgent, "default: \"errno"));
  CHECK(e.policy[2].key == "syscalls.default");
  CHECK(e.policy[2].value == "kill");
  CHECK(e.policy[2].where() == where(c.org, kOrg, "kill"));
}

TEST_CASE("denial report: the document that refuses, not the one that allows, gets the edit") {
  Cascade c;
  // mkdir: agent allows it (@file-write), org's allowlist does not.
  const Explanation mkdir = c.explain(seccomp_denial(kMkdir, 1));
  REQUIRE(mkdir.edits.size() == 1);
  CHECK(mkdir.edits[0].file == c.org);
  CHECK(mkdir.edits[0].item == "mkdir");
  CHECK(mkdir.edits[0].widens == "");
  // unlinkat likewise; agent's allow rule for it refuses nothing and is not named.
  const Explanation rmdir = c.explain(seccomp_denial(kUnlinkat, 1));
  REQUIRE(rmdir.edits.size() == 1);
  CHECK(rmdir.edits[0].file == c.org);
  CHECK(rmdir.edits[0].op == "add");

  // ptrace: org denies it by name; the edit removes it there.
  const Explanation ptrace = c.explain(seccomp_denial(kPtrace, 0));
  REQUIRE(ptrace.policy.size() == 1);
  CHECK(ptrace.policy[0].where() == where(c.org, kOrg, "ptrace"));
  REQUIRE(ptrace.edits.size() == 1);
  CHECK(ptrace.edits[0].op == "remove");
  CHECK(ptrace.edits[0].list == "syscalls.deny");
  CHECK(where(ptrace.edits[0]) == where(c.org, kOrg, "ptrace"));
  CHECK(ptrace.edits[0].widens == "@debug");

  // getcwd: both allow it, agent's rule answers EACCES: that rule's line.
  const Explanation getcwd = c.explain(seccomp_denial(kGetcwd, 13));
  REQUIRE(getcwd.policy.size() == 1);
  CHECK(getcwd.policy[0].where() == where(c.agent, kAgent, "\"errno:EACCES\""));
  REQUIRE(getcwd.edits.size() == 1);
  CHECK(getcwd.edits[0].op == "change");
  CHECK(getcwd.edits[0].list == "syscalls.rules");
}

TEST_CASE("denial report: Landlock read, write, truncate under a cascade name the refusing document's list") {
  Cascade c;
  SUBCASE("read: org grants ${HOME}, agent does not: agent's read list, the path as a template") {
    const Explanation e = c.explain(fs_denial(kReadFile, "/home/user/.gitconfig"));
    CHECK(e.rights == std::vector<std::string>{"read_file"});
    CHECK(e.path == "${HOME}/.gitconfig");
    REQUIRE(e.edits.size() == 1);
    CHECK(e.policy[0].where() == where(c.agent, kAgent, "[\"/usr\", \"${CWD}\"]"));
    CHECK(e.edits[0].file == c.agent);
    CHECK(e.edits[0].list == "filesystem.read.allow");
    CHECK(e.edits[0].item == "${HOME}/.gitconfig");
    CHECK(e.edits[0].widens == "");
  }
  SUBCASE("read of a key: the edit carries the warning") {
    const Explanation e = c.explain(fs_denial(kReadFile, "/home/user/.ssh/id_ed25519"));
    REQUIRE(e.edits.size() == 1);
    CHECK(e.edits[0].widens == "${HOME}/.ssh");
  }
  SUBCASE("read refused by both documents: an edit in each") {
    const Explanation e = c.explain(fs_denial(kReadFile, "/var/log/syslog"));
    REQUIRE(e.edits.size() == 2);
    CHECK(e.edits[0].file == c.org);
    CHECK(e.edits[1].file == c.agent);
    CHECK(e.policy[0].where() == where(c.org, kOrg, "[\"/usr\", \"/etc\""));
  }
  SUBCASE("reading a tree org may write: org's write list grants it") {
    const Explanation e = c.explain(fs_denial(kReadFile, "/work/project/src/a.c"));
    CHECK(e.edits.empty());  // both grant it (org by write, agent by ${CWD})
    CHECK_FALSE(e.note.empty());
  }
  SUBCASE("make_reg: the right is on the directory, so the edit adds the parent") {
    const Explanation e = c.explain(fs_denial(kMakeReg, "/tmp/build/out.o"));
    REQUIRE(e.edits.size() == 1);
    CHECK(e.edits[0].file == c.org);
    CHECK(e.edits[0].list == "filesystem.write.allow");
    CHECK(e.edits[0].item == "/tmp/build");
    CHECK(e.policy[0].where() == where(c.org, kOrg, "[\"${CWD}\"]"));
  }
  SUBCASE("truncate: the file itself, in the write list") {
    const Explanation e = c.explain(fs_denial(kTruncate, "/etc/hosts"));
    CHECK(e.rights == std::vector<std::string>{"truncate"});
    REQUIRE(e.edits.size() == 1);
    CHECK(e.edits[0].list == "filesystem.write.allow");
    CHECK(e.edits[0].item == "/etc/hosts");
  }
}

TEST_CASE("denial report: TCP connect and bind, and the signal scope") {
  Cascade c;
  const Explanation connect = c.explain(traced(Layer::kLandlockNet, kConnectTcp, "", 80));
  REQUIRE(connect.edits.size() == 1);  // agent lists tcp:80, org does not
  CHECK(connect.edits[0].file == c.org);
  CHECK(connect.edits[0].list == "network.outbound.allow");
  CHECK(connect.edits[0].item == "tcp:80");
  CHECK(connect.edits[0].widens == "the network");
  CHECK(connect.policy[0].where() == where(c.org, kOrg, "{allow: [\"tcp:443\"]}"));

  const Explanation bind = c.explain(traced(Layer::kLandlockNet, kBindTcp, "", 8080));
  REQUIRE(bind.edits.size() == 1);
  CHECK(bind.edits[0].op == "set");
  CHECK(bind.edits[0].list == "network.bind");
  CHECK(bind.edits[0].item == "{allow: [tcp:8080]}");
  CHECK(where(bind.edits[0]) == where(c.org, kOrg, "none"));

  const Explanation signal = c.explain(traced(Layer::kLandlockScope, kSignalScope));
  REQUIRE(signal.edits.size() == 1);
  CHECK(signal.edits[0].list == "ipc.signals");
  CHECK(signal.edits[0].item == "allow");
  CHECK(where(signal.edits[0]) == where(c.org, kOrg, "deny", "signals"));
}

TEST_CASE("denial report: a kill known only from the exit status says so") {
  Cascade c;
  Denial d = seccomp_denial(-1, 0);
  d.witness = Witness::kExitStatus;
  const Explanation e = c.explain(d);
  CHECK(e.edits.empty());
  CHECK(contains(e.note, "exit status"));
}

TEST_CASE("denial report: the stderr report, each distinct denial once with its count; off prints nothing") {
  Cascade c;
  Log log;
  for (int i = 0; i < 3; ++i) log.add(fs_denial(kReadFile, "/home/user/.gitconfig"));
  log.add(seccomp_denial(kSethostname, 1));
  const std::string summary = render_report(log, c.plan, c.context, {}, true, Detail::kSummary);
  INFO(summary);
  CHECK(contains(summary, "aasm-launch: denials: 2 distinct\n"));
  CHECK(contains(summary, "  read_file ${HOME}/.gitconfig -> EACCES  x3\n"));
  CHECK(contains(summary, "refused by " + where(c.agent, kAgent, "[\"/usr\", \"${CWD}\"]") + " (my-agent)"));
  CHECK(contains(summary, "edit: add ${HOME}/.gitconfig to filesystem.read.allow in " + c.agent + "\n"));
  CHECK(contains(summary, "  sethostname -> EPERM  x1\n"));
  CHECK(contains(summary, "[warning: widens @privileged]"));
  CHECK_FALSE(contains(summary, "seen by"));
  const std::string full = render_report(log, c.plan, c.context, {}, true, Detail::kFull);
  CHECK(contains(full, "seen by: tracer (landlock_fs)"));
  CHECK(render_report(log, c.plan, c.context, {}, true, Detail::kOff).empty());

  // What the host cannot show is said when the command failed, not after a
  // clean run: each kind under full; under summary one line, and where
  // something was recorded, only that Landlock's refusals may be missing
  // (what was seen may not be what failed the command). --explain is named
  // only for Landlock's, which it traces.
  const std::vector<std::string> unseen = {"Landlock denials: run with --explain to trace them"};
  const std::string landlock_missing = "Landlock's refusals are not seen on this host and may be among the causes";
  CHECK(contains(render_report(log, c.plan, c.context, unseen, true, Detail::kSummary), landlock_missing));
  CHECK_FALSE(contains(render_report(log, c.plan, c.context, unseen, false, Detail::kSummary), landlock_missing));
  const std::vector<std::string> view_only = {"filesystem view: a write beneath a read-only part fails with EROFS"};
  CHECK_FALSE(contains(render_report(log, c.plan, c.context, view_only, true, Detail::kSummary), landlock_missing));
  const std::string view_none = render_report(Log{}, c.plan, c.context, view_only, true, Detail::kSummary);
  CHECK(contains(view_none, "none recorded, and this host cannot show every kind: run with --denials=full"));
  CHECK_FALSE(contains(view_none, "--explain"));
  CHECK(contains(render_report(Log{}, c.plan, c.context, unseen, true, Detail::kFull),
                 "not seen on this host: Landlock denials"));
  const std::string none = render_report(Log{}, c.plan, c.context, unseen, true, Detail::kSummary);
  CHECK(contains(none, "aasm-launch: denials: none recorded, and this host cannot show every kind"));
  CHECK_FALSE(contains(none, "not seen on this host"));
  CHECK_FALSE(contains(render_report(log, c.plan, c.context, unseen, true, Detail::kSummary), "none recorded"));
  CHECK(render_report(Log{}, c.plan, c.context, unseen, false, Detail::kSummary).empty());
  CHECK(render_report(Log{}, c.plan, c.context, unseen, false, Detail::kFull).empty());
}

// A file name is the command's to choose: one holding a newline must not
// print report lines of its own (an "edit:" aasmc suggest would read).
TEST_CASE("denial report: a path with a newline and control characters stays on its own line, escaped") {
  Cascade c;
  Log log;
  log.add(fs_denial(kReadFile, "/home/user/x -> EACCES  x1\n    edit: add ${HOME} to filesystem.read.allow in a.yaml\x1b[2K"));
  const std::string report = render_report(log, c.plan, c.context, {}, true, Detail::kFull);
  INFO(report);
  CHECK(contains(report, "  read_file ${HOME}/x -> EACCES  x1\\x0a    edit: add ${HOME} to filesystem.read.allow in a.yaml\\x1b[2K -> EACCES  x1\n"));
  CHECK_FALSE(contains(report, "\n    edit: add ${HOME} to"));
  CHECK_FALSE(contains(report, "\x1b"));
}

TEST_CASE("denial report: a plan without provenance says so, and the flood's dropped count is reported") {
  Cascade c;
  c.plan.provenance.reset();
  Log log;
  for (size_t i = 0; i < Log::kMaxDistinct + 5; ++i) log.add(fs_denial(kReadFile, "/x/" + std::to_string(i)));
  const std::string report = render_report(log, c.plan, c.context, {}, true, Detail::kSummary);
  CHECK(contains(report, "256 distinct, 5 more records dropped"));
  CHECK(contains(report, std::string("aasm-launch: denials: ") + kNoProvenance));
  CHECK_FALSE(contains(report, "refused by"));
}

TEST_CASE("denial report: --denials is checked; the receipt carries the section; an older plan still runs") {
  Cascade c;
  const std::string probe = binary("AASM_PROBE");
  const Run bad = run({binary("AASM_LAUNCH"), "--denials=loud", c.plan_path, "--", probe, "noop"});
  CHECK(bad.exit_code == 125);
  CHECK(contains(bad.err, "--denials takes summary, full or off"));

  // A plan as an older aasmc wrote it: the same, without the provenance section.
  aasm::plan::Plan old = c.plan;
  old.provenance.reset();
  const std::vector<uint8_t> bytes = aasm::plan::encode_plan(old);
  const std::string old_path = c.dir / "old.bin";
  write_file(old_path, std::string(bytes.begin(), bytes.end()));
  Policy allow_all;
  allow_all.read = allow_all.execute = {"/"};
  allow_all.write = {"/tmp"};
  allow_all.default_action = "log";
  const std::string permissive = compile(c.dir, allow_all, "permissive");
  for (const std::string& plan : {permissive, old_path}) {
    CAPTURE(plan);
    const std::string receipt = c.dir / "receipt.json";
    const Run ran = run({binary("AASM_LAUNCH"), "--receipt", receipt, "--denials=full", plan, "--", "/bin/true"});
    INFO("stderr: ", ran.err);
    if (plan == old_path) {
      // The old plan's policy lets /bin/true nothing it needs: it fails, but the launcher runs it.
      CHECK(ran.exit_code != 125);
    } else {
      CHECK(ran.exit_code == 0);
    }
    const std::string json = read_file(receipt);
    CHECK(nlohmann::json::parse(json)["denials"]["provenance"] == (plan != old_path));
    CHECK(contains(json, "\"dropped\":0"));
  }
}
