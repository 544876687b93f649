#include <doctest/doctest.h>

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
