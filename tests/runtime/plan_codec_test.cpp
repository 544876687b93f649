// encode_plan / decode_plan agree, and the encoding is canonical.
#include <doctest/doctest.h>

#include "plan/plan.h"
#include "plan_builder.h"

using namespace aasm;

TEST_CASE("plan: encode then decode gives the same plan back") {
  const plan::Plan original = test::sample_plan();
  const std::vector<uint8_t> bytes = plan::encode_plan(original);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(*decoded == original);
  // Canonical: re-encoding the decoded plan reproduces every byte.
  CHECK(plan::encode_plan(*decoded) == bytes);
}

TEST_CASE("plan: a plan with no landlock and no seccomp round-trips too") {
  plan::Plan minimal;
  minimal.meta = {{"k", "v"}};
  auto decoded = plan::decode_plan(plan::encode_plan(minimal));
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(*decoded == minimal);
  CHECK_FALSE(decoded->landlock.has_value());
}

TEST_CASE("plan: layout is the documented one") {
  const std::vector<uint8_t> bytes = plan::encode_plan(test::sample_plan());
  REQUIRE(bytes.size() > plan::kHeaderSize + plan::kDigestSize);
  CHECK(std::string(bytes.begin(), bytes.begin() + 8) == "AASMPLAN");
  CHECK(bytes[test::kVersionOffset] == 1);
  CHECK(bytes.size() % 8 == 0);
  // The trailer is the SHA-256 of everything before it, and it is the plan's identity.
  const auto body = std::span<const uint8_t>(bytes).first(bytes.size() - plan::kDigestSize);
  CHECK(sha256(body) == plan::plan_digest(bytes));
  CHECK(test::reseal(bytes) == bytes);
}

TEST_CASE("plan: find_program and audit_arch_name") {
  const plan::Plan p = test::sample_plan();
  REQUIRE(plan::find_program(p, plan::kAuditArchAarch64) != nullptr);
  CHECK(plan::find_program(p, plan::kAuditArchAarch64)->mode == plan::FilterMode::kDenylist);
  CHECK(plan::find_program(p, 0x40000003) == nullptr);  // i386
  CHECK(std::string(plan::audit_arch_name(plan::kAuditArchX86_64)) == "x86_64");
}
