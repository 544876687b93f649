// A damaged plan makes aasm-launch exit 125 before anything runs. The command
// would create a marker file; its absence proves it never started. So does a
// plan for another architecture.
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "harness.h"
#include "plan/codec.h"
#include "plan/format.h"
#include "plan/plan.h"
#include "plan_fixture.h"
#include "sandbox.h"

using namespace aasm::ktest;
using Bytes = std::string;

namespace {

Bytes flip(Bytes b, size_t at) {
  b.at(at) = char(b.at(at) ^ 0x01);
  return b;
}

// Offset of the first section's body, from the first section table entry.
size_t first_section(const Bytes& b) {
  aasm::plan::ByteReader r({reinterpret_cast<const uint8_t*>(b.data()) + aasm::plan::kHeaderSize + 8, 8});
  return size_t(r.u64());
}

Bytes with_version(const Bytes& b, uint16_t version) {
  std::vector<uint8_t> bytes(b.begin(), b.end());
  aasm::test::put_u16(bytes, aasm::test::kVersionOffset, version);
  bytes = aasm::test::reseal(std::move(bytes));  // so only the version is wrong
  return {bytes.begin(), bytes.end()};
}

struct Damage {
  const char* name;
  std::function<Bytes(const Bytes&)> apply;
  const char* keyword;
};

const Damage kDamages[] = {
    {"flipped magic byte", [](const Bytes& b) { return flip(b, 0); }, "magic"},
    {"flipped header byte (section count)", [](const Bytes& b) { return flip(b, 12); }, "digest"},
    {"flipped header byte (reserved)", [](const Bytes& b) { return flip(b, 28); }, "digest"},
    {"flipped byte inside a section", [](const Bytes& b) { return flip(b, first_section(b) + 4); }, "digest"},
    {"flipped byte in the last section", [](const Bytes& b) { return flip(b, b.size() - aasm::plan::kDigestSize - 1); }, "digest"},
    {"flipped byte inside the digest", [](const Bytes& b) { return flip(b, b.size() - 7); }, "digest"},
    {"truncated by one byte", [](const Bytes& b) { return b.substr(0, b.size() - 1); }, "truncated"},
    {"truncated to half", [](const Bytes& b) { return b.substr(0, b.size() / 2); }, "truncated"},
    {"truncated inside the header", [](const Bytes& b) { return b.substr(0, 20); }, "truncated"},
    {"empty file", [](const Bytes&) { return Bytes(); }, "empty"},
    {"format version 2, digest recomputed", [](const Bytes& b) { return with_version(b, 2); }, "version"},
};

}  // namespace

TEST_CASE("plan refusal: a damaged plan exits 125 before the command runs") {
  Sandbox s;
  Policy policy = s.base();
  policy.write.push_back(s.dir.path());
  const std::string plan = compile(s.dir, policy);
  const std::string marker = s.dir / "marker";
  const Bytes good = read_file(plan);
  REQUIRE(good.size() > aasm::plan::kHeaderSize + aasm::plan::kDigestSize);

  // Control: the undamaged plan runs the command, which creates the marker.
  CHECK_RUN(probe(plan, {"write", marker}), 0, "OK\n");
  REQUIRE(exists(marker));
  REQUIRE(::unlink(marker.c_str()) == 0);

  for (const Damage& damage : kDamages) {
    const std::string name = damage.name, keyword = damage.keyword;
    CAPTURE(name);
    const Bytes bad = damage.apply(good);
    REQUIRE(bad != good);
    const std::string bad_plan = s.dir / "damaged.bin";
    write_file(bad_plan, bad);
    const Run r = probe(bad_plan, {"write", marker});
    CHECK_RUN(r, 125, "");
    CHECK_FALSE(exists(marker));
    // One line on stderr, naming the fault.
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK((!r.err.empty() && r.err.back() == '\n'));
    CHECK_MESSAGE(r.err.find(keyword) != std::string::npos, "expected '", keyword, "' in: ", r.err);
  }
}

TEST_CASE("plan refusal: a plan for another architecture only names each of its architectures once") {
#if defined(__x86_64__)
  const std::string native = "x86_64", other = "aarch64";
#else
  const std::string native = "aarch64", other = "x86_64";
#endif
  Sandbox s;
  const std::string plan = s.dir / "other-arch.bin";
  // coding-agent has several programs per architecture (its socket rules' filter before the main one).
  const Run compiled = run({binary("AASMC"), "compile", "--arch", other,
                            binary("AASM_PROFILES") + "/coding-agent.yaml", "-o", plan});
  INFO(compiled.err);
  REQUIRE(compiled.exit_code == 0);
  auto bytes = aasm::plan::read_plan_file(plan);
  REQUIRE(bytes);
  auto decoded = aasm::plan::decode_plan(*bytes);
  REQUIRE(decoded);
  REQUIRE(decoded->seccomp.size() > 1);
  const Run r = run({binary("AASM_LAUNCH"), plan, "--", "/bin/true"}, s.dir.path());
  CHECK(r.exit_code == 125);
  CHECK(contains(r.err, "(" + native + "; it has " + other + "); recompile with --arch " + native + "\n"));
  // Control: the same profile for this host's architecture gets past that check.
  const Run native_compiled = run({binary("AASMC"), "compile", "--arch", native,
                                   binary("AASM_PROFILES") + "/coding-agent.yaml", "-o", s.dir / "native.bin"});
  REQUIRE(native_compiled.exit_code == 0);
  CHECK_FALSE(contains(run({binary("AASM_LAUNCH"), s.dir / "native.bin", "--", "/bin/true"}, s.dir.path()).err,
                       "no seccomp program for this host's architecture"));
}
