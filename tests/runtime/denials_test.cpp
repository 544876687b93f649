#include <doctest/doctest.h>

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
  CHECK(foreign.note == "call number 20 of architecture 0x40000003 is not in the plan's call table (x86_64's calls)");
  SUBCASE("control: the host's own number is named, where the host is x86_64") {
    kill.arch = 0;
    if (aasm::kNativeAuditArch == aasm::plan::kProvenanceCallsArch) CHECK(explain(kill, plan, {}).call == "writev");
    else CHECK(explain(kill, plan, {}).call.empty());
  }
}
