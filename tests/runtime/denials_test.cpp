#include <doctest/doctest.h>
#include <linux/seccomp.h>

#include <optional>

#include "kernel/arch.h"
#include "supervisor/denial_report.h"
#include "supervisor/denials.h"

using namespace aasm::denials;

namespace {

Denial errno_denial(int syscall, int error) {
  Denial d;
  d.layer = Layer::kSeccomp;
  d.syscall = syscall;
  d.error = error;
  return d;
}

}  // namespace

TEST_CASE("denials: one entry per distinct denial, counted, in the order first seen, whoever saw it") {
  Log log;
  log.add(errno_denial(117, 1));
  log.add(errno_denial(2, 13));
  Denial traced = errno_denial(117, 1);
  traced.witness = Witness::kTracer;
  log.add(traced);
  REQUIRE(log.entries().size() == 2);
  CHECK(log.entries()[0].denial.syscall == 117);
  CHECK(log.entries()[0].count == 2);
  CHECK(log.entries()[1].denial.syscall == 2);
  CHECK(log.entries()[1].count == 1);
  CHECK(log.dropped() == 0);
}

TEST_CASE("denials: a flood of distinct denials is capped, the rest counted as dropped") {
  Log log;
  for (int i = 0; i < 10000; ++i) {
    Denial d;
    d.layer = Layer::kLandlockFs;
    d.error = 13;
    d.path = "/flood/" + std::to_string(i) + std::string(5000, 'x');
    log.add(d);
  }
  CHECK(log.entries().size() == Log::kMaxDistinct);
  CHECK(log.dropped() == 10000 - Log::kMaxDistinct);
  CHECK(log.entries()[0].denial.path.size() == Log::kMaxText);
  // Control: a denial already kept is still counted once the log is full.
  Denial first = log.entries()[0].denial;
  log.add(first);
  CHECK(log.entries()[0].count == 2);
  CHECK(log.dropped() == 10000 - Log::kMaxDistinct);
}

// The plan's call table names x86_64's calls: a number of another
// architecture (an i386 call killed on x86_64, whose 20 is getpid while
// x86_64's 20 is writev) gets no name from it, and the note says why.
TEST_CASE("denial report: a call of another architecture is not named from the plan's x86_64 call table") {
  aasm::plan::Plan plan;
  plan.provenance.emplace();
  plan.provenance->calls.push_back({20, "writev", ""});
  Denial kill;
  kill.layer = Layer::kSeccomp;
  kill.witness = Witness::kKernelRecord;
  kill.syscall = 20;
  kill.arch = 0x40000003;  // AUDIT_ARCH_I386
  const Explanation foreign = explain(kill, plan, {});
  CHECK(foreign.call.empty());
  CHECK(foreign.note == "call number 20 of architecture 0x40000003 is not in the plan's call tables (x86_64's calls)");
  SUBCASE("control: the host's own number is named, where the host is x86_64") {
    kill.arch = 0;
    if (aasm::kNativeAuditArch == aasm::plan::kProvenanceCallsArch) CHECK(explain(kill, plan, {}).call == "writev");
    else CHECK(explain(kill, plan, {}).call.empty());
  }
}

// A plan compiled for aarch64 too carries aarch64's calls (the call-tables
// section): a denial seen on an aarch64 host, its seccomp_data's arch and
// nr, is named from that table and joined to the line that refuses the
// call there, not named from x86_64's table, where 34 is pause.
TEST_CASE("denial report: an aarch64 call is named from the plan's aarch64 call table") {
  aasm::plan::Plan plan;
  plan.provenance.emplace();
  plan.provenance->sources = {{"my-agent", "agent", "agent.yaml"}};
  plan.provenance->entries = {{0, 9, 12, "syscalls.deny", "mkdirat", "errno:EPERM"}};
  plan.provenance->calls = {{34, "pause", ""}, {258, "mkdirat", ""}};
  plan.provenance->other_calls = {{aasm::plan::kAuditArchAarch64, {{34, "mkdirat", ""}, {117, "ptrace", "debug"}}}};
  // As the listener builds it from the notification on an aarch64 host.
  seccomp_data data{};
  data.nr = 34;
  data.arch = aasm::plan::kAuditArchAarch64;
  Denial denial = errno_denial(data.nr, 1);
  denial.arch = data.arch;
  const Explanation named = explain(denial, plan, {});
  CHECK(named.call == "mkdirat");
  REQUIRE(named.policy.size() == 1);
  CHECK(named.policy[0].where() == "agent.yaml:9:12");
  REQUIRE(named.edits.size() == 1);
  CHECK(named.edits[0].op == "remove");
  CHECK(named.edits[0].item == "mkdirat");
  Log log;
  log.add(denial);
  CHECK(render_report(log, plan, {}, {}, true, Detail::kSummary).find("mkdirat -> EPERM  x1") != std::string::npos);
  denial.syscall = 117;
  CHECK(explain(denial, plan, {}).call == "ptrace");

  SUBCASE("control: without the aarch64 table (an older plan) the number is not named from x86_64's") {
    plan.provenance->other_calls.clear();
    denial.syscall = 34;
    const Explanation unnamed = explain(denial, plan, {});
    CHECK(unnamed.call.empty());
    CHECK(unnamed.note == "call number 34 of aarch64 is not in the plan's call tables (x86_64's calls)");
  }
}

// aasmc suggest reads a text report's edits back (parse_edit_text): every
// sentence edit_text writes parses to the edit it was written from, but its
// document, which the sentence does not name.
TEST_CASE("denial report: every edit sentence parses back to its edit") {
  const Edit edits[] = {
      {"", "agent.yaml", "filesystem.read.allow", "add", "${HOME}/.gitconfig", 0, 0, ""},
      {"", "my dir/agent.yaml", "filesystem.read.allow", "add", "${HOME}/path to x", 0, 0, "${HOME}/.ssh"},
      {"", "org.yaml", "syscalls.deny", "remove", "ptrace", 12, 7, "@debug"},
      {"", "org.yaml", "syscalls.deny", "remove", "ptrace", 0, 0, ""},
      {"", "org.yaml", "network.outbound", "set", "{allow: [tcp:443]}", 3, 15, "the network"},
      {"", "org.yaml", "ipc.unix_sockets", "set", "{allow: [${CWD}/s.sock]}", 9, 18, ""},
      {"", "org.yaml", "syscalls.rules", "change", "mount", 20, 9, "@mount"},
      {"", "org.yaml", "syscalls.rules", "add", "{syscall: chmod, action: allow}", 0, 0, ""},
  };
  for (const Edit& e : edits) {
    const std::string sentence = edit_text(e);
    INFO(sentence);
    const std::optional<Edit> parsed = parse_edit_text(sentence);
    REQUIRE(parsed);
    CHECK(parsed->file == e.file);
    CHECK(parsed->list == e.list);
    CHECK(parsed->op == e.op);
    CHECK(parsed->item == e.item);
    CHECK(parsed->line == e.line);
    CHECK(parsed->column == e.column);
    CHECK(parsed->widens == e.widens);
  }
  SUBCASE("control: sentences it does not write are refused") {
    for (const char* other : {"", "add", "add x", "add x to", "grant x to filesystem.read.allow", "remove x from y",
                              "change the syscalls.rules entry at f:1:2", "set  to x"})
      CHECK_FALSE(parse_edit_text(other));
  }
}

TEST_CASE("denials: a seccomp denial's argument text names the arguments read, and reads back") {
  const uint64_t args[6] = {1, 2, 0x80000, 4, 5, 6};
  Denial d;
  d.arguments = argument_text(args, 0b101);
  CHECK(d.arguments == "arg0=0x1 arg2=0x80000");
  CHECK(argument_of(d, 0) == 1u);
  CHECK(argument_of(d, 2) == 0x80000u);
  CHECK_FALSE(argument_of(d, 1).has_value());
  CHECK(argument_text(args, 0).empty());
}
