// encode_plan / decode_plan agree, and the encoding is canonical.
#include <doctest/doctest.h>

#include "plan/codec.h"
#include "plan/plan.h"
#include "plan_fixture.h"

#include <cctype>
#include <optional>

using namespace aasm;

namespace {

// The flags of the first section of `type` in the table; none when absent.
std::optional<uint32_t> section_flags(const std::vector<uint8_t>& bytes, plan::SectionType type) {
  plan::ByteReader table(std::span<const uint8_t>(bytes).subspan(plan::kHeaderSize));
  for (uint32_t i = 0; i < bytes[test::kCountOffset]; ++i) {
    const uint32_t found = table.u32(), flags = table.u32();
    table.u64();
    table.u64();
    if (found == uint32_t(type)) return flags;
  }
  return std::nullopt;
}

}  // namespace

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

TEST_CASE("plan: rule flag bit 1 (system-root template) round-trips on a variable rule only") {
  plan::Plan p = test::sample_plan();
  p.landlock->rules[1].flags = plan::kRuleSystemRootTemplate;  // ${CWD}
  auto decoded = plan::decode_plan(plan::encode_plan(p));
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(*decoded == p);

  SUBCASE("on an absolute rule it is refused") {
    p.landlock->rules[0].flags = plan::kRuleSystemRootTemplate;  // /usr
    auto refused = plan::decode_plan(plan::encode_plan(p));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("landlock rule 0 lets a path without a variable resolve to a system root") !=
          std::string::npos);
  }
  SUBCASE("bit 2 is undefined") {
    p.landlock->rules[1].flags = 1u << 2;
    auto refused = plan::decode_plan(plan::encode_plan(p));
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message.find("landlock rule 1 has undefined flag bits") != std::string::npos);
  }
}

TEST_CASE("plan: a process section with namespaces and kept capabilities round-trips") {
  plan::Plan p = test::sample_plan();
  plan::ProcessSettings process;
  process.pids = 64;
  process.namespaces = plan::kNamespaceUser | plan::kNamespacePid | plan::kNamespaceMount;  // mount and pid: the sample's view
  process.kept_capabilities = uint64_t(1) << 10;  // CAP_NET_BIND_SERVICE
  p.process = process;
  const std::vector<uint8_t> bytes = plan::encode_plan(p);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(*decoded == p);
  CHECK(plan::encode_plan(*decoded) == bytes);
}

// Provenance is descriptive (docs/plan-format.md, section 7): not critical,
// so a launcher that does not know it skips it, and a plan without it (an
// older compiler's) decodes to the same plan less its provenance.
TEST_CASE("plan: the provenance section round-trips, is not critical, and may be absent") {
  plan::Plan p = test::sample_plan();
  REQUIRE(p.provenance);
  const std::vector<uint8_t> bytes = plan::encode_plan(p);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE(decoded);
  CHECK(decoded->provenance == p.provenance);
  CHECK(section_flags(bytes, plan::SectionType::kProvenance) == 0u);
  // The launcher defers it: the same plan, less its provenance.
  auto deferred = plan::decode_plan(bytes, plan::Decode::kDeferProvenance);
  REQUIRE(deferred);
  CHECK_FALSE(deferred->provenance);
  p.provenance.reset();
  CHECK(*deferred == p);
  auto without = plan::decode_plan(plan::encode_plan(p));
  REQUIRE(without);
  CHECK_FALSE(without->provenance);
  CHECK(*without == p);
}

TEST_CASE("plan: the pinned section round-trips, is critical, and is absent without pins") {
  plan::Plan p = test::sample_plan();
  p.pinned = {{"/opt/agent/bin/agent", 123456, sha256(std::span<const uint8_t>())},
              {"/usr/bin/python3", 1, Sha256Digest{}}};
  const std::vector<uint8_t> bytes = plan::encode_plan(p);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(decoded->pinned == p.pinned);
  CHECK(*decoded == p);
  CHECK(section_flags(bytes, plan::SectionType::kPinned) == plan::kSectionCritical);
  CHECK(plan::pinned_text(p.pinned[0]) ==
        "/opt/agent/bin/agent sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, 123456 bytes");
  // No pins, no section: a plan without them has the bytes it had before pins existed.
  p.pinned.clear();
  CHECK(plan::encode_plan(p) == plan::encode_plan(test::sample_plan()));
}

TEST_CASE("plan: the bwrap section round-trips, is critical, and is absent without one") {
  plan::Plan p = test::sample_plan();
  p.bwrap = plan::Bwrap{{{plan::BwrapArgKind::kLiteral, "--ro-bind"},
                         {plan::BwrapArgKind::kLiteral, "/usr"},
                         {plan::BwrapArgKind::kLiteral, "/usr"},
                         {plan::BwrapArgKind::kLiteral, "--bind"},
                         {plan::BwrapArgKind::kCwd, "/out"},
                         {plan::BwrapArgKind::kCwd, "/out"},
                         {plan::BwrapArgKind::kHome, ""},
                         {plan::BwrapArgKind::kRootLinks, ""},
                         {plan::BwrapArgKind::kSeccomp, ""}}};
  const std::vector<uint8_t> bytes = plan::encode_plan(p);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(*decoded == p);
  CHECK(section_flags(bytes, plan::SectionType::kBwrap) == plan::kSectionCritical);
  CHECK(plan::bwrap_arg_text(p.bwrap->args[4]) == "${CWD}/out");
  CHECK(plan::bwrap_arg_text(p.bwrap->args[6]) == "${HOME}");
  p.bwrap.reset();
  CHECK(plan::encode_plan(p) == plan::encode_plan(test::sample_plan()));
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

TEST_CASE("plan: per architecture, rule programs come first and the main program last") {
  plan::Plan p = test::sample_plan();
  plan::SeccompProgram rules = p.seccomp[0];
  rules.mode = plan::FilterMode::kRules;
  rules.default_action = 0x00050001u;  // errno EPERM where a rule matches
  p.seccomp.insert(p.seccomp.begin(), rules);  // x86_64: rules, then allowlist
  auto decoded = plan::decode_plan(plan::encode_plan(p));
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(plan::programs_for(*decoded, plan::kAuditArchX86_64).size() == 2);
  CHECK(plan::find_program(*decoded, plan::kAuditArchX86_64)->mode == plan::FilterMode::kAllowlist);

  plan::Plan after = test::sample_plan();
  after.seccomp.insert(after.seccomp.begin() + 1, rules);  // x86_64: allowlist, then rules
  auto refused = plan::decode_plan(plan::encode_plan(after));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("continue after their main program") != std::string::npos);

  plan::Plan only_rules = test::sample_plan();
  only_rules.seccomp = {rules};
  auto no_main = plan::decode_plan(plan::encode_plan(only_rules));
  REQUIRE_FALSE(no_main);
  CHECK(no_main.error().message.find("have no main program") != std::string::npos);
}

TEST_CASE("plan: the identity is sha256:HEX of the trailer; parse_digest_text takes either case, prefix or not") {
  const std::vector<uint8_t> bytes = plan::encode_plan(test::sample_plan());
  const std::string hex = to_hex(plan::plan_digest(bytes));
  CHECK(plan::plan_identity(bytes) == "sha256:" + hex);
  std::string upper = hex;
  for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
  for (const std::string& text : {hex, "sha256:" + hex, upper, "sha256:" + upper}) {
    auto parsed = plan::parse_digest_text(text);
    REQUIRE_MESSAGE(parsed, text);
    CHECK(*parsed == plan::plan_digest(bytes));
  }
  for (const std::string& bad : {std::string(), hex.substr(1), hex + "0", "sha256:" + hex.substr(0, 63) + "g",
                                 "SHA256:" + hex, "sha512:" + hex}) {
    auto parsed = plan::parse_digest_text(bad);
    CHECK_FALSE_MESSAGE(parsed, bad);
  }
}
