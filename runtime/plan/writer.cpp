// Canonical encoding of a plan (docs/plan-format.md). Determinism comes from
// the inputs being sorted and every field having a fixed width.
#include <cstring>

#include "plan/codec.h"
#include "plan/plan.h"

namespace aasm::plan {
namespace {

struct Section {
  SectionType type;
  uint32_t flags;
  std::vector<uint8_t> body;
};


std::vector<uint8_t> encode_landlock(const LandlockRuleset& ruleset) {
  ByteWriter w;
  w.u32(ruleset.min_abi);
  w.u32(uint32_t(ruleset.rules.size()));
  w.u64(ruleset.handled_fs);
  w.u64(ruleset.handled_net);
  w.u64(ruleset.scoped);
  for (const LandlockRule& rule : ruleset.rules) {
    w.u64(rule.access);
    w.u16(uint16_t(rule.base));
    w.u16(rule.flags);
    w.str16(rule.path);
  }
  w.u32(uint32_t(ruleset.net_rules.size()));
  for (const LandlockNetRule& rule : ruleset.net_rules) {
    w.u64(rule.access);
    w.u16(rule.port);
  }
  w.u32(uint32_t(ruleset.controls.size()));
  for (const LandlockControl& control : ruleset.controls) {
    w.u16(uint16_t(control.domain));
    w.u16(control.flags);
    w.u32(control.min_abi);
    w.u64(control.fs);
    w.u64(control.net);
    w.u64(control.scoped);
  }
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_program(const SeccompProgram& program) {
  ByteWriter w;
  w.u32(program.audit_arch);
  w.u32(uint32_t(program.mode));
  w.u32(program.default_action);
  w.u32(uint32_t(program.instructions.size()));
  for (const BpfInstruction& insn : program.instructions) {
    w.u16(insn.code);
    w.u8(insn.jt);
    w.u8(insn.jf);
    w.u32(insn.k);
  }
  return std::move(w.bytes());
}

// Optional u64 values: a presence bitmask, then the present values in order.
std::vector<uint8_t> encode_process(const ProcessSettings& p) {
  ByteWriter w;
  const std::optional<uint64_t>* values[] = {&p.open_files, &p.file_size, &p.memory, &p.swap, &p.pids,
                                             &p.cpu_millicores, &p.wall_clock_seconds, &p.stdout_bytes,
                                             &p.stderr_bytes};
  uint32_t present = 0;
  for (size_t i = 0; i < std::size(values); ++i)
    if (*values[i]) present |= 1u << i;
  w.u32(present);
  for (const auto* value : values)
    if (*value) w.u64(**value);
  w.u16(p.flags);
  w.u16(p.environment_filtered ? 1 : 0);
  w.u32(uint32_t(p.environment_pass.size()));
  for (const std::string& name : p.environment_pass) w.str16(name);
  w.u32(uint32_t(p.environment_set.size()));
  for (const auto& [name, value] : p.environment_set) {
    w.str16(name);
    w.str16(value);
  }
  w.u32(p.namespaces);
  w.u64(p.kept_capabilities);
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_view(const FilesystemView& view) {
  ByteWriter w;
  w.u16(view.flags);
  w.u16(view.dev_nodes);
  w.u32(uint32_t(view.trees.size()));
  for (const ViewTree& tree : view.trees) {
    w.u16(uint16_t(tree.base));
    w.u16(tree.flags);
    w.str16(tree.path);
  }
  w.u32(uint32_t(view.tmpfs.size()));
  for (const ViewTmpfs& tmpfs : view.tmpfs) {
    w.u64(tmpfs.max_bytes);
    w.u16(tmpfs.flags);
    w.str16(tmpfs.path);
  }
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_pinned(const std::vector<PinnedFile>& pinned) {
  ByteWriter w;
  w.u32(uint32_t(pinned.size()));
  for (const PinnedFile& file : pinned) {
    w.u64(file.size);
    w.raw(file.sha256);
    w.str16(file.path);
  }
  return std::move(w.bytes());
}

void write_patterns(ByteWriter& w, const std::vector<HostPattern>& patterns) {
  w.u32(uint32_t(patterns.size()));
  for (const HostPattern& pattern : patterns) {
    w.u8(uint8_t(pattern.kind));
    w.u16(pattern.port);
    w.str16(pattern.host);
  }
}

std::vector<uint8_t> encode_egress(const Egress& egress) {
  ByteWriter w;
  w.u8(egress.any_name ? 1 : 0);
  write_patterns(w, egress.allow);
  write_patterns(w, egress.deny);
  return std::move(w.bytes());
}

void write_bwrap(ByteWriter& w, const Bwrap& bwrap) {
  w.u32(uint32_t(bwrap.args.size()));
  for (const BwrapArg& arg : bwrap.args) {
    w.u8(uint8_t(arg.kind));
    w.str16(arg.text);
  }
}

void write_pairs(ByteWriter& w, const std::vector<std::pair<std::string, std::string>>& pairs) {
  w.u32(uint32_t(pairs.size()));
  for (const auto& [key, value] : pairs) {
    w.str16(key);
    w.str16(value);
  }
}

std::vector<uint8_t> encode_meta(const Plan& plan) {
  ByteWriter w;
  write_pairs(w, plan.meta);
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_bwrap(const Bwrap& bwrap) {
  ByteWriter w;
  write_bwrap(w, bwrap);
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_lowerings(const std::vector<Lowering>& lowerings) {
  ByteWriter w;
  w.u32(uint32_t(lowerings.size()));
  for (const Lowering& lowering : lowerings) {
    w.str16(lowering.backend);
    w.str16(lowering.not_carried);
    write_pairs(w, lowering.meta);
    w.u8(lowering.bwrap ? 1 : 0);
    if (lowering.bwrap) write_bwrap(w, *lowering.bwrap);
  }
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_manifest(const Plan& plan) {
  ByteWriter w;
  w.u32(uint32_t(plan.syscalls.size()));
  for (const SyscallEntry& entry : plan.syscalls) {
    w.u16(uint16_t(entry.origin));
    w.u32(entry.action);
    w.str16(entry.name);
  }
  return std::move(w.bytes());
}

// A call table, as the provenance and call-tables sections lay it out.
void write_calls(ByteWriter& w, const std::vector<ProvenanceCall>& calls) {
  w.u32(uint32_t(calls.size()));
  for (const ProvenanceCall& call : calls) {
    w.u16(call.number);
    w.str16(call.name);
    w.str16(call.sensitive_group);
  }
}

std::vector<uint8_t> encode_provenance(const Provenance& provenance) {
  ByteWriter w;
  w.u32(uint32_t(provenance.sources.size()));
  for (const ProvenanceSource& source : provenance.sources) {
    w.str16(source.document);
    w.str16(source.tier);
    w.str16(source.file);
  }
  w.u32(uint32_t(provenance.entries.size()));
  for (const ProvenanceEntry& entry : provenance.entries) {
    w.u16(entry.source);
    w.u32(entry.line);
    w.u32(entry.column);
    w.str16(entry.key);
    w.str16(entry.item);
    w.str16(entry.value);
  }
  write_calls(w, provenance.calls);
  return std::move(w.bytes());
}

std::vector<uint8_t> encode_call_tables(const std::vector<CallTable>& tables) {
  ByteWriter w;
  w.u32(uint32_t(tables.size()));
  for (const CallTable& table : tables) {
    w.u32(table.audit_arch);
    write_calls(w, table.calls);
  }
  return std::move(w.bytes());
}

std::vector<Section> sections_of(const Plan& plan) {
  std::vector<Section> sections;
  sections.push_back({SectionType::kMeta, 0, encode_meta(plan)});
  if (plan.landlock)
    sections.push_back({SectionType::kLandlock, kSectionCritical, encode_landlock(*plan.landlock)});
  for (const SeccompProgram& program : plan.seccomp)
    sections.push_back({SectionType::kSeccompProgram, kSectionCritical, encode_program(program)});
  if (plan.process) sections.push_back({SectionType::kProcess, kSectionCritical, encode_process(*plan.process)});
  if (plan.view) sections.push_back({SectionType::kFilesystemView, kSectionCritical, encode_view(*plan.view)});
  // Critical: a launcher that skipped it would run a changed file unchecked.
  if (!plan.pinned.empty()) sections.push_back({SectionType::kPinned, kSectionCritical, encode_pinned(plan.pinned)});
  // Critical: a launcher that skipped it would run the command without bwrap's confinement.
  if (plan.bwrap) sections.push_back({SectionType::kBwrap, kSectionCritical, encode_bwrap(*plan.bwrap)});
  // Critical: a launcher that skipped it would run a candidate the plan may not list, and report no choice.
  if (!plan.lowerings.empty())
    sections.push_back({SectionType::kLowerings, kSectionCritical, encode_lowerings(plan.lowerings)});
  // Critical: a launcher that skipped it would give the command no way out, or, worse, its own.
  if (plan.egress) sections.push_back({SectionType::kEgress, kSectionCritical, encode_egress(*plan.egress)});
  sections.push_back({SectionType::kSyscallManifest, 0, encode_manifest(plan)});
  if (plan.provenance) sections.push_back({SectionType::kProvenance, 0, encode_provenance(*plan.provenance)});
  // After the provenance it belongs to; a section of its own, so that a
  // launcher older than it still reads the provenance (it skips this one).
  if (plan.provenance && !plan.provenance->other_calls.empty())
    sections.push_back({SectionType::kCallTables, 0, encode_call_tables(plan.provenance->other_calls)});
  return sections;
}

Error too_large(const std::string& what) { return make_error("plan cannot be encoded: " + what); }

bool fits(const std::string& text) { return text.size() <= kMaxStringBytes; }

Status check_provenance(const Provenance& p) {
  if (p.sources.size() >= kNoSource || p.entries.size() > kMaxListEntries || p.calls.size() > kMaxListEntries ||
      p.other_calls.size() > kMaxListEntries)
    return too_large("too many provenance records");
  for (const CallTable& table : p.other_calls)
    if (table.calls.size() > kMaxListEntries) return too_large("too many provenance records");
  for (const ProvenanceSource& s : p.sources)
    if (!fits(s.document) || !fits(s.tier) || !fits(s.file)) return too_large("a provenance source is too long");
  for (const ProvenanceEntry& e : p.entries)
    if (!fits(e.key) || !fits(e.item) || !fits(e.value)) return too_large("a provenance entry is too long");
  return Ok{};
}

Status check_bwrap(const Bwrap& bwrap) {
  if (bwrap.args.empty() || bwrap.args.size() > kMaxBwrapArgs)
    return too_large("the bwrap section needs 1 to " + std::to_string(kMaxBwrapArgs) + " arguments");
  for (const BwrapArg& arg : bwrap.args)
    if (arg.text.size() > kMaxPathBytes) return too_large("a bwrap argument is longer than PATH_MAX");
  return Ok{};
}

}  // namespace

Status check_encodable(const Plan& plan) {
  if (plan.meta.size() > kMaxListEntries) return too_large("too many meta entries");
  for (const auto& [key, value] : plan.meta)
    if (key.size() > kMaxStringBytes || value.size() > kMaxStringBytes) return too_large("meta entry '" + key.substr(0, 64) + "' is too long");
  if (plan.landlock) {
    if (plan.landlock->rules.size() > kMaxLandlockRules)
      return too_large(std::to_string(plan.landlock->rules.size()) + " Landlock rules, over the limit of " +
                       std::to_string(kMaxLandlockRules));
    for (const LandlockRule& rule : plan.landlock->rules)
      if (rule.path.size() > kMaxPathBytes) return too_large("a Landlock rule path is longer than PATH_MAX");
    if (plan.landlock->net_rules.size() > kMaxLandlockNetRules) return too_large("too many Landlock port rules");
    if (plan.landlock->controls.size() > kMaxLandlockControls) return too_large("too many Landlock controls");
  }
  for (const SeccompProgram& program : plan.seccomp)
    if (program.instructions.empty() || program.instructions.size() > kMaxBpfInstructions)
      return too_large(std::string("the seccomp program for ") + audit_arch_name(program.audit_arch) + " has " +
                       std::to_string(program.instructions.size()) + " instructions (the kernel takes at most " +
                       std::to_string(kMaxBpfInstructions) + ")");
  if (plan.view) {
    if (plan.view->trees.size() > kMaxViewTrees) return too_large("too many trees in the filesystem view");
    for (const ViewTree& tree : plan.view->trees)
      if (tree.path.size() > kMaxPathBytes) return too_large("a filesystem view path is longer than PATH_MAX");
  }
  if (plan.pinned.size() > kMaxPinnedFiles) return too_large("too many pinned files");
  if (plan.bwrap)
    if (Status bwrap = check_bwrap(*plan.bwrap); !bwrap) return bwrap;
  if (plan.lowerings.size() > kMaxLowerings) return too_large("more than " + std::to_string(kMaxLowerings) + " lowerings");
  for (const Lowering& lowering : plan.lowerings) {
    if (!fits(lowering.backend) || !fits(lowering.not_carried) || lowering.meta.size() > kMaxListEntries)
      return too_large("lowering '" + lowering.backend.substr(0, 64) + "' is too long");
    for (const auto& [key, value] : lowering.meta)
      if (!fits(key) || !fits(value)) return too_large("a meta entry of lowering '" + lowering.backend + "' is too long");
    if (lowering.bwrap)
      if (Status bwrap = check_bwrap(*lowering.bwrap); !bwrap) return bwrap;
  }
  for (const PinnedFile& file : plan.pinned)
    if (file.path.size() > kMaxPathBytes) return too_large("a pinned path is longer than PATH_MAX");
  if (plan.egress && (plan.egress->allow.size() > kMaxEgressPatterns || plan.egress->deny.size() > kMaxEgressPatterns))
    return too_large("more than " + std::to_string(kMaxEgressPatterns) + " host patterns");
  if (plan.syscalls.size() > kMaxListEntries) return too_large("too many syscall manifest entries");
  for (const SyscallEntry& entry : plan.syscalls)
    if (entry.name.size() > kMaxStringBytes) return too_large("a syscall name is too long");
  if (plan.provenance) return check_provenance(*plan.provenance);
  return Ok{};
}

std::vector<uint8_t> encode_plan(const Plan& plan) {
  std::vector<Section> sections = sections_of(plan);
  ByteWriter w;
  w.raw({reinterpret_cast<const uint8_t*>(kMagic), sizeof kMagic});
  w.u16(kFormatVersion);
  w.u16(uint16_t(kHeaderSize));
  w.u32(uint32_t(sections.size()));
  const size_t file_size_at = w.size();
  w.u64(0);  // file size, patched below
  w.u32(0);  // flags
  w.u32(0);  // reserved

  uint64_t offset = kHeaderSize + sections.size() * kSectionEntrySize;
  for (const Section& section : sections) {
    offset = (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
    w.u32(uint32_t(section.type));
    w.u32(section.flags);
    w.u64(offset);
    w.u64(section.body.size());
    offset += section.body.size();
  }
  for (const Section& section : sections) {
    w.pad_to(kSectionAlignment);
    w.raw(section.body);
  }
  w.pad_to(kSectionAlignment);
  w.patch_u64(file_size_at, w.size() + kDigestSize);
  Sha256Digest digest = sha256(w.bytes());
  w.raw(digest);
  return std::move(w.bytes());
}

}  // namespace aasm::plan
