#include "plan_fixture.h"

#include <algorithm>

#include "crypto/sha256.h"
#include "plan/codec.h"

namespace aasm::test {

plan::Plan sample_plan() {
  plan::Plan p;
  p.meta = {{"compiler", "aasmc 0.1.0"}, {"source.0", "policy.yaml"}};
  plan::LandlockRuleset ruleset;
  ruleset.min_abi = 3;
  ruleset.handled_fs = 0x7fff;
  ruleset.handled_net = 0x3;
  ruleset.scoped = 0x1;
  ruleset.rules = {
      {0x4, plan::PathBase::kAbsolute, 0, "/usr"},
      {0x3, plan::PathBase::kCwd, 0, ""},
      {0x2, plan::PathBase::kHome, plan::kRuleOptional, "/.cache"},
  };
  p.landlock = ruleset;
  plan::SeccompProgram x86{plan::kAuditArchX86_64, plan::FilterMode::kAllowlist, 0x80000000u,
                           {{0x20, 0, 0, 4}, {0x15, 1, 0, plan::kAuditArchX86_64}, {0x06, 0, 0, 0x7fff0000u}}};
  plan::SeccompProgram arm = x86;
  arm.audit_arch = plan::kAuditArchAarch64;
  arm.mode = plan::FilterMode::kDenylist;
  p.seccomp = {x86, arm};
  p.syscalls = {{"getppid", plan::SyscallOrigin::kPolicy, 0x7fff0000u},
                {"read", plan::SyscallOrigin::kStartup, 0x7fff0000u}};
  plan::ProcessSettings process;
  process.namespaces = plan::kNamespaceMount | plan::kNamespacePid;  // the view needs them
  p.process = process;
  plan::FilesystemView view;
  view.flags = plan::kViewProc | plan::kViewDevPts;
  view.dev_nodes = 0x3;  // null, zero
  view.trees = {{plan::PathBase::kAbsolute, plan::kViewNoExec, "/etc"},
                {plan::PathBase::kAbsolute, 0, "/usr"},
                {plan::PathBase::kCwd, plan::kViewWritable, ""},
                {plan::PathBase::kCwd, plan::kViewProtected | plan::kViewOptional, "/.git/hooks"}};
  view.tmpfs = {{"/dev/shm", 1 << 20, plan::kViewNoExec}, {"/tmp", 64 << 20, 0}};
  p.view = view;
  plan::Provenance provenance;
  provenance.sources = {{"org-base", "org", "policies/org.yaml"}, {"my-agent", "agent", "agent.yaml"}};
  provenance.entries = {{0, 7, 14, "filesystem.read.allow", "", ""},
                        {0, 7, 15, "filesystem.read.allow", "/usr", ""},
                        {1, 12, 5, "syscalls.allow", "", ""},
                        {plan::kNoSource, 0, 0, "syscalls.safe_default", "chmod", "@setid-modes: errno:EPERM"}};
  provenance.calls = {{0, "read", ""}, {101, "ptrace", "debug"}};
  provenance.other_calls = {{plan::kAuditArchAarch64, {{63, "read", ""}, {117, "ptrace", "debug"}}}};
  p.provenance = provenance;
  return p;
}

std::vector<uint8_t> reseal(std::vector<uint8_t> bytes) {
  if (bytes.size() < plan::kDigestSize) return bytes;
  const size_t body = bytes.size() - plan::kDigestSize;
  const Sha256Digest digest = sha256(std::span<const uint8_t>(bytes.data(), body));
  std::copy(digest.begin(), digest.end(), bytes.begin() + long(body));
  return bytes;
}

void put_u16(std::vector<uint8_t>& bytes, size_t at, uint16_t v) {
  for (int i = 0; i < 2; ++i) bytes.at(at + i) = uint8_t(v >> (8 * i));
}

void put_u32(std::vector<uint8_t>& bytes, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes.at(at + i) = uint8_t(v >> (8 * i));
}

std::vector<uint8_t> assemble(const std::vector<RawSection>& sections, std::optional<uint32_t> count,
                              uint8_t pad_byte) {
  // Lay out the bodies first: offsets may be forced to overlap or leave gaps.
  std::vector<uint8_t> bytes(plan::kHeaderSize + sections.size() * plan::kSectionEntrySize, 0);
  std::vector<uint64_t> offsets;
  for (const RawSection& s : sections) {
    uint64_t at = s.offset.value_or((bytes.size() + 7) / 8 * 8);
    if (bytes.size() < at + s.body.size()) bytes.resize(at + s.body.size(), pad_byte);
    std::copy(s.body.begin(), s.body.end(), bytes.begin() + long(at));
    offsets.push_back(at);
  }
  bytes.resize((bytes.size() + 7) / 8 * 8, pad_byte);

  plan::ByteWriter header;
  header.raw({reinterpret_cast<const uint8_t*>(plan::kMagic), sizeof plan::kMagic});
  header.u16(plan::kFormatVersion);
  header.u16(uint16_t(plan::kHeaderSize));
  header.u32(count.value_or(uint32_t(sections.size())));
  header.u64(bytes.size() + plan::kDigestSize);
  header.u32(0);
  header.u32(0);
  for (size_t i = 0; i < sections.size(); ++i) {
    header.u32(sections[i].type);
    header.u32(sections[i].flags);
    header.u64(offsets[i]);
    header.u64(sections[i].length.value_or(sections[i].body.size()));
  }
  std::copy(header.bytes().begin(), header.bytes().end(), bytes.begin());
  bytes.resize(bytes.size() + plan::kDigestSize, 0);
  return reseal(std::move(bytes));
}

std::vector<uint8_t> meta_body() {
  plan::ByteWriter w;
  w.u32(1);
  w.str16("compiler");
  w.str16("test");
  return std::move(w.bytes());
}

}  // namespace aasm::test
