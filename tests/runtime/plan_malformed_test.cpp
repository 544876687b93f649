// Each malformed plan breaks one rule and must be refused with a message
// naming that rule. Plans that break a structural rule are resealed (digest
// recomputed) so the digest check cannot be what refuses them.
#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <string>

#include "plan/codec.h"
#include "plan/plan.h"
#include "plan_fixture.h"

using namespace aasm;
using Bytes = std::vector<uint8_t>;

namespace {

Bytes valid() { return plan::encode_plan(test::sample_plan()); }

// Offset of the first section body (the meta section) in an encoded plan.
size_t first_section_offset(const Bytes& bytes) {
  plan::ByteReader r(std::span<const uint8_t>(bytes).subspan(plan::kHeaderSize + 8, 8));
  return size_t(r.u64());
}

// A process section with nothing but `namespaces` and `kept_capabilities`.
Bytes process_body(uint32_t namespaces, uint64_t kept) {
  plan::ByteWriter w;
  w.u32(0);           // no values present
  w.u16(0);           // flags
  w.u16(0);           // the launcher's environment
  w.u32(0);           // pass names
  w.u32(0);           // set values
  w.u32(namespaces);
  w.u64(kept);
  return w.bytes();
}

// A filesystem-view section: one tree, one tmpfs, as given.
Bytes view_body(uint16_t flags, uint16_t dev_nodes, uint16_t base, uint16_t tree_flags, const std::string& path,
                const std::string& tmpfs_path = "/tmp", uint64_t tmpfs_bytes = 1 << 20) {
  plan::ByteWriter w;
  w.u16(flags);
  w.u16(dev_nodes);
  w.u32(1);
  w.u16(base);
  w.u16(tree_flags);
  w.str16(path);
  w.u32(1);
  w.u64(tmpfs_bytes);
  w.u16(0);
  w.str16(tmpfs_path);
  return w.bytes();
}

// A pinned section of `paths`, each with a size of 1 and a zero digest.
Bytes pinned_body(const std::vector<std::string>& paths) {
  plan::ByteWriter w;
  w.u32(uint32_t(paths.size()));
  for (const std::string& path : paths) {
    w.u64(1);
    for (size_t i = 0; i < plan::kDigestSize; ++i) w.u8(0);
    w.str16(path);
  }
  return w.bytes();
}

Bytes with_pinned(const Bytes& pinned, uint32_t flags = plan::kSectionCritical) {
  return test::assemble({{1, 0, test::meta_body()}, {8, flags, pinned}});
}

// A bwrap section of (kind, text) arguments.
Bytes bwrap_body(const std::vector<std::pair<uint8_t, std::string>>& args) {
  plan::ByteWriter w;
  w.u32(uint32_t(args.size()));
  for (const auto& [kind, text] : args) {
    w.u8(kind);
    w.str16(text);
  }
  return w.bytes();
}

// A lowering as the lowerings section lays it out: name, why not carried,
// its meta pairs, then a bwrap vector or none.
struct LoweringBytes {
  std::string backend, not_carried;
  std::vector<std::pair<std::string, std::string>> meta;
  std::optional<std::vector<std::pair<uint8_t, std::string>>> bwrap;
};

Bytes lowerings_body(const std::vector<LoweringBytes>& lowerings) {
  plan::ByteWriter w;
  w.u32(uint32_t(lowerings.size()));
  for (const LoweringBytes& l : lowerings) {
    w.str16(l.backend);
    w.str16(l.not_carried);
    w.u32(uint32_t(l.meta.size()));
    for (const auto& [key, value] : l.meta) {
      w.str16(key);
      w.str16(value);
    }
    w.u8(l.bwrap ? 1 : 0);
    if (l.bwrap) {
      const Bytes args = bwrap_body(*l.bwrap);
      w.raw(args);
    }
  }
  return w.bytes();
}

Bytes with_lowerings(const Bytes& lowerings, uint32_t flags = plan::kSectionCritical) {
  return test::assemble({{1, 0, test::meta_body()}, {uint32_t(plan::SectionType::kLowerings), flags, lowerings}});
}

Bytes with_bwrap(const Bytes& bwrap, uint32_t flags = plan::kSectionCritical) {
  return test::assemble({{1, 0, test::meta_body()}, {uint32_t(plan::SectionType::kBwrap), flags, bwrap}});
}

Bytes with_view(const Bytes& view, uint32_t namespaces = plan::kNamespaceMount | plan::kNamespacePid,
                uint32_t flags = plan::kSectionCritical) {
  return test::assemble({{1, 0, test::meta_body()}, {5, plan::kSectionCritical, process_body(namespaces, 0)},
                         {6, flags, view}});
}

// An egress section: the any-name flag, then the allow and deny patterns
// as (kind, port, host).
using PatternBytes = std::tuple<uint8_t, uint16_t, std::string>;
Bytes egress_body(uint8_t any_name, const std::vector<PatternBytes>& allow, const std::vector<PatternBytes>& deny = {}) {
  plan::ByteWriter w;
  w.u8(any_name);
  for (const auto* list : {&allow, &deny}) {
    w.u32(uint32_t(list->size()));
    for (const auto& [kind, port, host] : *list) {
      w.u8(kind);
      w.u16(port);
      w.str16(host);
    }
  }
  return w.bytes();
}

Bytes with_egress(const Bytes& egress, uint32_t namespaces = plan::kNamespaceNet, uint32_t flags = plan::kSectionCritical) {
  return test::assemble({{1, 0, test::meta_body()}, {5, plan::kSectionCritical, process_body(namespaces, 0)},
                         {uint32_t(plan::SectionType::kEgress), flags, egress}});
}

struct Case {
  const char* name;
  std::function<Bytes()> make;
  const char* keyword;
};

const Case kCases[] = {
    {"empty file", [] { return Bytes{}; }, "empty"},
    {"bad magic", [] { Bytes b = valid(); b[0] ^= 0x20; return b; }, "bad magic"},
    {"a policy given as the plan",
     [] {
       const std::string yaml = "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: p, tier: agent}\n";
       return Bytes(yaml.begin(), yaml.end());
     },
     "it reads like a policy (YAML): compile it first"},
    {"shorter than a header", [] { Bytes b = valid(); b.resize(40); return b; }, "truncated"},
    {"truncated at the end", [] { Bytes b = valid(); b.resize(b.size() - 8); return b; }, "truncated"},
    {"extended at the end", [] { Bytes b = valid(); b.resize(b.size() + 8); return b; }, "extended"},
    {"future version (resealed)", [] { Bytes b = valid(); test::put_u16(b, test::kVersionOffset, 2); return test::reseal(b); }, "newer"},
    {"version 0 (resealed)", [] { Bytes b = valid(); test::put_u16(b, test::kVersionOffset, 0); return test::reseal(b); }, "version 0"},
    {"one flipped bit inside a section", [] { Bytes b = valid(); b[first_section_offset(b) + 5] ^= 1; return b; }, "digest mismatch"},
    {"one flipped bit inside the digest", [] { Bytes b = valid(); b.back() ^= 0x80; return b; }, "digest mismatch"},
    {"section count changed, not resealed", [] { Bytes b = valid(); b[test::kCountOffset] += 1; return b; }, "digest mismatch"},
    {"header flags set (resealed)", [] { Bytes b = valid(); b[24] = 1; return test::reseal(b); }, "header flags"},
    {"unknown critical section",
     [] { return test::assemble({{1, 0, test::meta_body()}, {99, plan::kSectionCritical, Bytes(8, 0)}}); },
     "unknown critical section type 99"},
    {"undefined section flag bits",
     [] { return test::assemble({{1, 0x4, test::meta_body()}}); }, "undefined flag bits"},
    {"overlapping sections",
     [] {
       const Bytes meta = test::meta_body();
       return test::assemble({{1, 0, meta}, {99, 0, Bytes(16, 0), plan::kHeaderSize + 2 * plan::kSectionEntrySize}});
     },
     "overlaps"},
    {"section overlapping the table",
     [] { return test::assemble({{1, 0, test::meta_body(), plan::kHeaderSize}}); }, "overlaps"},
    {"section past EOF",
     [] { return test::assemble({{1, 0, test::meta_body(), {}, 4096}}); }, "past the end"},
    {"misaligned section",
     [] { return test::assemble({{1, 0, test::meta_body(), plan::kHeaderSize + plan::kSectionEntrySize + 4}}); },
     "aligned"},
    {"non-zero padding between sections",
     [] {
       // meta_body is 22 bytes: the next section starts 2 padding bytes later.
       return test::assemble({{1, 0, test::meta_body()}, {99, 0, Bytes(8, 0)}}, {}, 0xAA);
     },
     "non-zero padding"},
    {"too many sections",
     [] { return test::assemble({{1, 0, test::meta_body()}}, uint32_t(plan::kMaxSections + 1)); },
     "over the limit"},
    {"section table past EOF",
     [] { return test::assemble({{1, 0, test::meta_body()}}, uint32_t(plan::kMaxSections)); },
     "section table runs past"},
    {"no meta section", [] { return test::assemble({{99, 0, Bytes(8, 0)}}); }, "no meta section"},
    {"two meta sections",
     [] { return test::assemble({{1, 0, test::meta_body()}, {1, 0, test::meta_body()}}); }, "two meta"},
    {"provenance entry naming a source it does not have",
     [] {
       plan::ByteWriter w;
       w.u32(0);                                           // no sources
       w.u32(1); w.u16(0); w.u32(1); w.u32(1); w.str16("syscalls.deny"); w.str16("ptrace"); w.str16("");
       w.u32(0);                                           // no calls
       return test::assemble({{1, 0, test::meta_body()}, {7, 0, w.bytes()}});
     },
     "names a source"},
    {"provenance calls out of order",
     [] {
       plan::ByteWriter w;
       w.u32(0); w.u32(0);
       w.u32(2); w.u16(5); w.str16("b"); w.str16(""); w.u16(4); w.str16("a"); w.str16("");
       return test::assemble({{1, 0, test::meta_body()}, {7, 0, w.bytes()}});
     },
     "not sorted"},
    {"call-tables section without a provenance section",
     [] {
       plan::ByteWriter w;
       w.u32(0);
       return test::assemble({{1, 0, test::meta_body()}, {9, 0, w.bytes()}});
     },
     "without a provenance section"},
    {"call table of x86_64, which the provenance section holds",
     [] {
       plan::ByteWriter p;
       p.u32(0); p.u32(0); p.u32(0);
       plan::ByteWriter w;
       w.u32(1); w.u32(plan::kAuditArchX86_64); w.u32(0);
       return test::assemble({{1, 0, test::meta_body()}, {7, 0, p.bytes()}, {9, 0, w.bytes()}});
     },
     "not sorted by architecture"},
    {"call-tables calls out of order",
     [] {
       plan::ByteWriter p;
       p.u32(0); p.u32(0); p.u32(0);
       plan::ByteWriter w;
       w.u32(1); w.u32(plan::kAuditArchAarch64);
       w.u32(2); w.u16(5); w.str16("b"); w.str16(""); w.u16(4); w.str16("a"); w.str16("");
       return test::assemble({{1, 0, test::meta_body()}, {7, 0, p.bytes()}, {9, 0, w.bytes()}});
     },
     "call-tables calls are not sorted"},
    {"provenance section shorter than its contents",
     [] {
       plan::ByteWriter w;
       w.u32(3);
       return test::assemble({{1, 0, test::meta_body()}, {7, 0, w.bytes()}});
     },
     "shorter than its contents"},
    {"landlock section not marked critical",
     [] {
       plan::ByteWriter w;
       w.u32(1); w.u32(0); w.u64(1); w.u64(0); w.u64(0);
       return test::assemble({{1, 0, test::meta_body()}, {2, 0, w.bytes()}});
     },
     "not marked critical"},
    {"section shorter than its contents",
     [] { Bytes meta = test::meta_body(); meta.resize(10); return test::assemble({{1, 0, meta}}); },
     "shorter than its contents"},
    {"section with trailing bytes",
     [] { Bytes meta = test::meta_body(); meta.resize(meta.size() + 3, 0); return test::assemble({{1, 0, meta}}); },
     "trailing bytes"},
    {"seccomp program with zero instructions",
     [] {
       plan::ByteWriter w;
       w.u32(plan::kAuditArchX86_64); w.u32(1); w.u32(0); w.u32(0);
       return test::assemble({{1, 0, test::meta_body()}, {3, plan::kSectionCritical, w.bytes()}});
     },
     "0 instructions"},
    {"process section keeping capability 41",
     [] { return test::assemble({{1, 0, test::meta_body()}, {5, plan::kSectionCritical, process_body(0, uint64_t(1) << 41)}}); },
     "unknown capability"},
    {"process section asking for namespace bit 6",
     [] { return test::assemble({{1, 0, test::meta_body()}, {5, plan::kSectionCritical, process_body(1u << 6, 0)}}); },
     "unknown namespace"},
    {"a view without the mount and PID namespaces",
     [] { return with_view(view_body(0, 0, 0, 0, "/usr"), plan::kNamespaceMount); }, "needs the mount and PID"},
    {"a view section not marked critical",
     [] { return with_view(view_body(0, 0, 0, 0, "/usr"), plan::kNamespaceMount | plan::kNamespacePid, 0); },
     "not marked critical"},
    {"a view binding the host's root", [] { return with_view(view_body(0, 0, 0, 0, "/")); }, "binds the host's root"},
    {"a view tree protected and writable",
     [] { return with_view(view_body(0, 0, 1, plan::kViewProtected | plan::kViewWritable, "/.git")); },
     "protected and writable"},
    {"a view tree with undefined flags", [] { return with_view(view_body(0, 0, 0, 1u << 4, "/usr")); }, "undefined flag"},
    {"a view tree with a relative path", [] { return with_view(view_body(0, 0, 0, 0, "usr")); }, "not absolute"},
    {"a view with undefined flags", [] { return with_view(view_body(1u << 4, 0, 0, 0, "/usr")); }, "undefined flag"},
    {"a view naming device node 6", [] { return with_view(view_body(0, 1u << 6, 0, 0, "/usr")); }, "unknown device node"},
    {"a view tmpfs elsewhere than /tmp or /dev/shm",
     [] { return with_view(view_body(0, 0, 0, 0, "/usr", "/var")); }, "neither /dev/shm nor /tmp"},
    {"a view tmpfs of 0 bytes", [] { return with_view(view_body(0, 0, 0, 0, "/usr", "/tmp", 0)); }, "no size ceiling"},
    {"a pinned section not marked critical", [] { return with_pinned(pinned_body({"/usr/bin/env"}), 0); }, "not marked critical"},
    {"a pinned section of no file", [] { return with_pinned(pinned_body({})); }, "pinned section has 0 files"},
    {"a pinned relative path", [] { return with_pinned(pinned_body({"usr/bin/env"})); }, "not absolute"},
    {"a pinned path with a .. segment", [] { return with_pinned(pinned_body({"/usr/../etc/passwd"})); }, "invalid path"},
    {"pinned paths out of order", [] { return with_pinned(pinned_body({"/usr/bin/env", "/etc/passwd"})); }, "out of order"},
    {"a pinned path twice", [] { return with_pinned(pinned_body({"/usr/bin/env", "/usr/bin/env"})); }, "out of order"},
    {"a bwrap section not marked critical", [] { return with_bwrap(bwrap_body({{0, "--unshare-user"}}), 0); }, "not marked critical"},
    {"a bwrap section of no argument", [] { return with_bwrap(bwrap_body({})); }, "bwrap section has 0 arguments"},
    {"a bwrap argument of an unknown kind", [] { return with_bwrap(bwrap_body({{5, ""}})); }, "unknown kind"},
    {"a bwrap argument holding NUL", [] { return with_bwrap(bwrap_body({{0, std::string("--bind\0x", 8)}})); }, "holds NUL"},
    {"a bwrap seccomp marker with text", [] { return with_bwrap(bwrap_body({{3, "7"}})); }, "has text"},
    {"a bwrap template escaping its variable", [] { return with_bwrap(bwrap_body({{1, "/../etc"}})); }, "invalid path"},
    {"a bwrap template suffix without its leading slash", [] { return with_bwrap(bwrap_body({{2, "x"}})); }, "invalid path"},
    {"a lowerings section not marked critical",
     [] { return with_lowerings(lowerings_body({{"native", "", {}, {}}}), 0); }, "not marked critical"},
    {"a lowerings section of none", [] { return with_lowerings(lowerings_body({})); }, "0 lowerings"},
    {"a lowerings section carrying none",
     [] { return with_lowerings(lowerings_body({{"bwrap", "cannot enforce file_read", {}, {}}})); }, "carries no lowering"},
    {"a lowering listed twice",
     [] { return with_lowerings(lowerings_body({{"native", "", {}, {}}, {"native", "", {}, {}}})); }, "listed twice"},
    {"a lowering with no name", [] { return with_lowerings(lowerings_body({{"", "", {}, {}}})); }, "no backend name"},
    {"a lowering not carried that lowers",
     [] {
       return with_lowerings(lowerings_body({{"native", "", {}, {}}, {"bwrap", "no", {{"backend", "bwrap"}}, {}}}));
     },
     "not carried and has a lowering"},
    {"a lowering's meta out of order",
     [] {
       return with_lowerings(lowerings_body({{"bwrap", "", {{"backend", "bwrap"}, {"a", "b"}}, {{{0, "--x"}}}}}));
     },
     "not sorted and unique"},
    {"a lowering's bwrap vector empty",
     [] { return with_lowerings(lowerings_body({{"bwrap", "", {}, std::vector<std::pair<uint8_t, std::string>>{}}})); },
     "lowerings section has 0 arguments"},
    {"a lowering's bwrap template escaping its variable",
     [] { return with_lowerings(lowerings_body({{"bwrap", "", {}, {{{1, "/../etc"}}}}})); }, "invalid path"},
    {"a plan of several lowerings with a bwrap section of its own",
     [] {
       return test::assemble({{1, 0, test::meta_body()},
                              {uint32_t(plan::SectionType::kBwrap), plan::kSectionCritical, bwrap_body({{0, "--x"}})},
                              {uint32_t(plan::SectionType::kLowerings), plan::kSectionCritical,
                               lowerings_body({{"native", "", {}, {}}})}});
     },
     "has a backend of its own"},
    {"an egress section not marked critical", [] { return with_egress(egress_body(0, {{0, 0, "a.test"}}), plan::kNamespaceNet, 0); },
     "not marked critical"},
    {"an egress section without the network namespace", [] { return with_egress(egress_body(0, {{0, 0, "a.test"}}), 0); },
     "needs the command's own network namespace"},
    {"an egress any-name flag of 2", [] { return with_egress(egress_body(2, {})); }, "not 0 or 1"},
    {"an egress pattern of an unknown kind", [] { return with_egress(egress_body(0, {{3, 0, "a.test"}})); }, "unknown kind"},
    {"an egress pattern not in its canonical spelling", [] { return with_egress(egress_body(0, {{0, 0, "A.test"}})); },
     "canonical spelling"},
    {"an egress suffix over a top-level domain", [] { return with_egress(egress_body(0, {{1, 0, "com"}})); },
     "canonical spelling"},
    {"an egress address that is a name", [] { return with_egress(egress_body(0, {{2, 0, "a.test"}})); },
     "canonical spelling"},
    {"an egress name that is an address", [] { return with_egress(egress_body(0, {{0, 0, "127.0.0.1"}})); },
     "canonical spelling"},
    {"egress patterns out of order",
     [] { return with_egress(egress_body(0, {{0, 0, "b.test"}, {0, 0, "a.test"}})); }, "out of order"},
    {"an egress deny pattern twice",
     [] { return with_egress(egress_body(0, {}, {{0, 443, "a.test"}, {0, 443, "a.test"}})); }, "out of order"},
    {"an egress section cut short",
     [] {
       Bytes body = egress_body(0, {{0, 0, "a.test"}});
       body.resize(body.size() - 2);
       return with_egress(body);
     },
     "egress"},
    {"two egress sections",
     [] {
       const Bytes body = egress_body(0, {{0, 0, "a.test"}});
       return test::assemble({{1, 0, test::meta_body()}, {5, plan::kSectionCritical, process_body(plan::kNamespaceNet, 0)},
                              {uint32_t(plan::SectionType::kEgress), plan::kSectionCritical, body},
                              {uint32_t(plan::SectionType::kEgress), plan::kSectionCritical, body}});
     },
     "two egress sections"},
    {"a pinned section cut short",
     [] {
       Bytes body = pinned_body({"/usr/bin/env"});
       body.resize(body.size() - 3);
       return with_pinned(body);
     },
     "shorter than its contents"},
};

}  // namespace

TEST_CASE("plan: every malformed plan is refused with a message naming the fault") {
  for (const Case& c : kCases) {
    const std::string name = c.name, keyword = c.keyword;
    CAPTURE(name);
    const Bytes bytes = c.make();
    auto decoded = plan::decode_plan(bytes);
    REQUIRE_FALSE(decoded);
    CHECK_MESSAGE(decoded.error().message.find(keyword) != std::string::npos,
                  "expected '", keyword, "' in: ", decoded.error().message);
  }
}

TEST_CASE("plan: the builder's well-formed output is accepted (control for the table)") {
  auto decoded = plan::decode_plan(test::assemble({{1, 0, test::meta_body()}}));
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(decoded->meta == std::vector<std::pair<std::string, std::string>>{{"compiler", "test"}});
}

TEST_CASE("plan: an unknown non-critical section is skipped") {
  const Bytes bytes = test::assemble({{1, 0, test::meta_body()}, {99, 0, Bytes{1, 2, 3, 4, 5, 6, 7, 8}}});
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  CHECK(decoded->meta.size() == 1);
  CHECK(decoded->seccomp.empty());
  CHECK_FALSE(decoded->landlock.has_value());
}

TEST_CASE("plan: a resealed future version is refused even though its digest is right") {
  Bytes bytes = valid();
  test::put_u16(bytes, test::kVersionOffset, plan::kFormatVersion + 1);
  bytes = test::reseal(bytes);
  // The trailer matches the body, so only the version can be at fault.
  CHECK(sha256(std::span<const uint8_t>(bytes).first(bytes.size() - plan::kDigestSize)) == plan::plan_digest(bytes));
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message.find("format version 2") != std::string::npos);
}

TEST_CASE("plan: over the size limit is refused before anything else") {
  const Bytes bytes(plan::kMaxPlanSize + 1, 0);
  auto decoded = plan::decode_plan(bytes);
  REQUIRE_FALSE(decoded);
  CHECK(decoded.error().message.find("limit") != std::string::npos);
}
