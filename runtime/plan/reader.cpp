// Bounds-checked plan decoding. Every length and offset is checked against
// the buffer and the fixed limits in format.h before it is used; the fuzz
// target in tests/fuzz drives this file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "kernel/mount_view.h"
#include "plan/controls.h"
#include "plan/codec.h"
#include "plan/plan.h"

namespace aasm::plan {
namespace {

struct SectionEntry {
  uint32_t type;
  uint32_t flags;
  uint64_t offset;
  uint64_t length;
};

const char* file_type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
  }
  return "not a file";
}

Error fault(const std::string& what) { return make_error("invalid plan: " + what); }

uint64_t align_up(uint64_t offset) { return (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

Error truncated(const char* section) { return fault(std::string(section) + " section is shorter than its contents"); }

// Rule paths are normalized by the compiler; anything else was not written by it.
bool is_normalized(const std::string& path) {
  if (path.empty() || path == "/") return true;
  if (path.back() == '/') return false;
  for (size_t at = 0; at < path.size();) {
    const size_t next = std::min(path.find('/', at + 1), path.size());
    const std::string segment = path.substr(at + 1, next - at - 1);
    if (segment.empty() || segment == "." || segment == "..") return false;
    at = next;
  }
  return true;
}

bool is_known(uint32_t type) {
  return type >= uint32_t(SectionType::kMeta) && type <= uint32_t(SectionType::kEgress);
}

const char* section_name(uint32_t type) {
  switch (SectionType(type)) {
    case SectionType::kMeta: return "meta";
    case SectionType::kLandlock: return "landlock";
    case SectionType::kSeccompProgram: return "seccomp-program";
    case SectionType::kSyscallManifest: return "syscall-manifest";
    case SectionType::kProcess: return "process";
    case SectionType::kFilesystemView: return "filesystem-view";
    case SectionType::kProvenance: return "provenance";
    case SectionType::kPinned: return "pinned";
    case SectionType::kCallTables: return "call-tables";
    case SectionType::kBwrap: return "bwrap";
    case SectionType::kLowerings: return "lowerings";
    case SectionType::kEgress: return "egress";
  }
  return "unknown";
}

Status check_header(std::span<const uint8_t> bytes) {
  const size_t minimum = kHeaderSize + kDigestSize;
  if (bytes.empty()) return fault("the file is empty");
  if (bytes.size() > kMaxPlanSize)
    return fault(std::to_string(bytes.size()) + " bytes is over the " +
                 std::to_string(kMaxPlanSize) + "-byte limit");
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    // The policy given where its plan goes: the first hour's mistake.
    const std::string_view head(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(bytes.size(), 4096));
    const bool policy = head.find("apiVersion:") != std::string_view::npos;
    return fault(std::string("not an aasm plan (bad magic; expected \"AASMPLAN\")") +
                 (policy ? "; it reads like a policy (YAML): compile it first, aasmc compile FILE.yaml -o plan.bin" : ""));
  }
  if (bytes.size() < minimum)
    return fault("truncated: " + std::to_string(bytes.size()) + " bytes, less than the " +
                 std::to_string(minimum) + "-byte minimum");
  ByteReader r(bytes.subspan(sizeof kMagic));
  const uint16_t version = r.u16();
  const uint16_t header_size = r.u16();
  r.u32();  // section count, checked by the table reader
  const uint64_t file_size = r.u64();
  if (version > kFormatVersion)
    return fault("format version " + std::to_string(version) +
                 " is newer than this launcher reads (" + std::to_string(kFormatVersion) +
                 "); upgrade aasm-launch or compile with a matching aasmc");
  if (version != kFormatVersion)
    return fault("format version " + std::to_string(version) + " is not supported (expected " +
                 std::to_string(kFormatVersion) + ")");
  if (header_size != kHeaderSize) return fault("header size " + std::to_string(header_size) + " is not 32");
  if (file_size != bytes.size())
    return fault("truncated or extended: the header records " + std::to_string(file_size) +
                 " bytes, the file has " + std::to_string(bytes.size()));
  const auto body = bytes.first(bytes.size() - kDigestSize);
  const Sha256Digest computed = sha256(body);
  if (!std::equal(computed.begin(), computed.end(), bytes.end() - kDigestSize))
    return fault("SHA-256 digest mismatch: the file is corrupt or was changed after compiling "
                 "(recorded " + to_hex(bytes.last(kDigestSize)) + ", computed " + to_hex(computed) + ")");
  return Ok{};
}

Result<std::vector<SectionEntry>> read_section_table(std::span<const uint8_t> bytes) {
  ByteReader header(bytes.subspan(12));
  const uint32_t count = header.u32();
  header.u64();
  const uint32_t flags = header.u32();
  const uint32_t reserved = header.u32();
  if (flags != 0 || reserved != 0) return fault("header flags are set but none are defined");
  if (count > kMaxSections)
    return fault(std::to_string(count) + " sections is over the limit of " + std::to_string(kMaxSections));
  const uint64_t table_end = kHeaderSize + uint64_t(count) * kSectionEntrySize;
  const uint64_t body_end = bytes.size() - kDigestSize;
  if (table_end > body_end) return fault("the section table runs past the end of the file");

  std::vector<SectionEntry> entries;
  ByteReader r(bytes.subspan(kHeaderSize, table_end - kHeaderSize));
  uint64_t previous_end = table_end;
  for (uint32_t i = 0; i < count; ++i) {
    SectionEntry e{r.u32(), r.u32(), r.u64(), r.u64()};
    const std::string where = "section " + std::to_string(i) + " (" + section_name(e.type) + ")";
    if (e.flags & ~kKnownSectionFlags) return fault(where + " has undefined flag bits");
    // Sections follow each other at the next 8-byte boundary, with zero
    // padding between: one plan has exactly one encoding.
    const uint64_t expected_offset = align_up(previous_end);
    if (e.offset < expected_offset) return fault(where + " overlaps the table or the section before it");
    if (e.offset != expected_offset) return fault(where + " is not aligned at the next 8-byte boundary after what precedes it");
    if (e.offset > body_end || e.length > body_end - e.offset)
      return fault(where + " runs past the end of the file");
    for (uint64_t p = previous_end; p < e.offset; ++p)
      if (bytes[p] != 0) return fault("non-zero padding before " + where);
    previous_end = e.offset + e.length;
    entries.push_back(e);
  }
  if (body_end != align_up(previous_end)) return fault("unreferenced bytes after the last section");
  for (uint64_t p = previous_end; p < body_end; ++p)
    if (bytes[p] != 0) return fault("non-zero padding after the last section");
  return entries;
}

bool is_clean_path_text(const std::string& path) {
  return path.size() <= kMaxPathBytes && path.find('\0') == std::string::npos;
}


Status decode_net_rules(ByteReader& r, LandlockRuleset& ruleset) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("landlock");
  if (count > kMaxLandlockNetRules) return fault("landlock section has too many port rules");
  for (uint32_t i = 0; i < count; ++i) {
    LandlockNetRule rule{r.u64(), r.u16()};
    if (!r.ok()) return truncated("landlock");
    const std::string where = "landlock port rule " + std::to_string(i);
    if (rule.access == 0 || (rule.access & ~ruleset.handled_net))
      return fault(where + " grants rights the ruleset does not handle");
    if (rule.port == 0) return fault(where + " has port 0");
    if (!ruleset.net_rules.empty() && ruleset.net_rules.back().port >= rule.port)
      return fault(where + " is out of order or repeats a port");
    ruleset.net_rules.push_back(rule);
  }
  return Ok{};
}

Status decode_controls(ByteReader& r, LandlockRuleset& ruleset) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("landlock");
  if (count > kMaxLandlockControls) return fault("landlock section has too many controls");
  uint32_t highest_floor = 1;
  for (uint32_t i = 0; i < count; ++i) {
    const uint16_t domain = r.u16();
    LandlockControl control;
    control.flags = r.u16();
    control.min_abi = r.u32();
    control.fs = r.u64();
    control.net = r.u64();
    control.scoped = r.u64();
    if (!r.ok()) return truncated("landlock");
    const std::string where = "landlock control " + std::to_string(i);
    if (domain > uint16_t(ControlDomain::kIpc)) return fault(where + " has an unknown domain");
    control.domain = ControlDomain(domain);
    if (control.flags & ~(kControlDegradable | kControlNotEnforceable | kControlSeccompFallback))
      return fault(where + " has undefined flag bits");
    if ((control.flags & kControlNotEnforceable) && !(control.flags & kControlDegradable))
      return fault(where + " is not enforceable and not degradable");
    if ((control.flags & kControlSeccompFallback) && !(control.flags & kControlDegradable))
      return fault(where + " has a seccomp fallback but is not degradable");
    if (control.min_abi == 0) return fault(where + " has ABI floor 0");
    if ((control.fs & ~ruleset.handled_fs) || (control.net & ~ruleset.handled_net) || (control.scoped & ~ruleset.scoped))
      return fault(where + " claims rights the ruleset does not handle");
    if (!ruleset.controls.empty() && ruleset.controls.back().domain >= control.domain)
      return fault(where + " is out of order or repeats a domain");
    highest_floor = std::max(highest_floor, control.min_abi);
    ruleset.controls.push_back(control);
  }
  if (!ruleset.controls.empty() && highest_floor != ruleset.min_abi)
    return fault("the landlock ABI floor is not the highest of its controls' floors");
  return Ok{};
}

// A path template as the compiler writes one: clean, normalized, absolute,
// or after a variable empty or starting with '/'.
Status check_template_path(PathBase base, const std::string& path, const std::string& where) {
  if (!is_clean_path_text(path) || !is_normalized(path)) return fault(where + " has an invalid path");
  if (base == PathBase::kAbsolute ? path.empty() || path[0] != '/' : !path.empty() && path[0] != '/')
    return fault(where + " has a path that is not absolute");
  return Ok{};
}

Status decode_landlock(ByteReader& r, Plan& plan) {
  if (plan.landlock) return fault("two landlock sections");
  LandlockRuleset ruleset;
  ruleset.min_abi = r.u32();
  const uint32_t count = r.u32();
  ruleset.handled_fs = r.u64();
  ruleset.handled_net = r.u64();
  ruleset.scoped = r.u64();
  if (!r.ok()) return truncated("landlock");
  if (count > kMaxLandlockRules) return fault("landlock section has " + std::to_string(count) + " rules, over the limit");
  if (ruleset.min_abi == 0) return fault("landlock ABI floor 0 is not an ABI");
  for (uint32_t i = 0; i < count && r.ok(); ++i) {
    LandlockRule rule;
    rule.access = r.u64();
    const uint16_t base = r.u16();
    rule.flags = r.u16();
    rule.path = r.str16();
    if (!r.ok()) return truncated("landlock");
    const std::string where = "landlock rule " + std::to_string(i);
    if (base > uint16_t(PathBase::kHome)) return fault(where + " has an unknown path variable");
    rule.base = PathBase(base);
    if (rule.flags & ~kKnownRuleFlags) return fault(where + " has undefined flag bits");
    if (rule.access == 0 || (rule.access & ~ruleset.handled_fs))
      return fault(where + " grants rights the ruleset does not handle");
    if (Status path = check_template_path(rule.base, rule.path, where); !path) return path;
    if (rule.base == PathBase::kAbsolute && (rule.flags & kRuleSystemRootTemplate))
      return fault(where + " lets a path without a variable resolve to a system root");
    if (!ruleset.rules.empty() && std::pair(ruleset.rules.back().base, ruleset.rules.back().path) >=
                                      std::pair(rule.base, rule.path))
      return fault(where + " is out of order or repeats a path");
    ruleset.rules.push_back(std::move(rule));
  }
  if (Status net = decode_net_rules(r, ruleset); !net) return net;
  if (Status controls = decode_controls(r, ruleset); !controls) return controls;
  plan.landlock = std::move(ruleset);
  return Ok{};
}

Status decode_program(ByteReader& r, Plan& plan) {
  SeccompProgram program;
  program.audit_arch = r.u32();
  const uint32_t mode = r.u32();
  program.default_action = r.u32();
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("seccomp-program");
  if (mode < uint32_t(FilterMode::kAllowlist) || mode > uint32_t(FilterMode::kFallback))
    return fault("seccomp program has an unknown filter mode " + std::to_string(mode));
  program.mode = FilterMode(mode);
  if (count == 0 || count > kMaxBpfInstructions)
    return fault("seccomp program has " + std::to_string(count) + " instructions (1 to " +
                 std::to_string(kMaxBpfInstructions) + " allowed)");
  // Grouped by architecture, ascending; within one, in install order: rule
  // programs, then the main program last (the others' seccomp() calls must
  // get through the filters installed before them).
  if (!plan.seccomp.empty()) {
    const SeccompProgram& previous = plan.seccomp.back();
    if (previous.audit_arch > program.audit_arch)
      return fault(std::string("seccomp program for ") + audit_arch_name(program.audit_arch) + " is out of order");
    if (previous.audit_arch == program.audit_arch && !is_rules_program(previous.mode))
      return fault(std::string("seccomp programs for ") + audit_arch_name(program.audit_arch) +
                   " continue after their main program, which must come last");
  }
  const std::span<const uint8_t> code = r.bytes(size_t(count) * 8);
  if (!r.ok()) return truncated("seccomp-program");
  program.instructions.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* in = code.data() + 8 * i;
    program.instructions[i] = {uint16_t(load_le(in, 2)), in[2], in[3], uint32_t(load_le(in + 4, 4))};
  }
  plan.seccomp.push_back(std::move(program));
  return Ok{};
}

Status decode_view_trees(ByteReader& r, FilesystemView& view) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("filesystem-view");
  if (count > kMaxViewTrees) return fault("filesystem-view section has too many trees");
  for (uint32_t i = 0; i < count; ++i) {
    const uint16_t base = r.u16();
    ViewTree tree;
    tree.flags = r.u16();
    tree.path = r.str16();
    if (!r.ok()) return truncated("filesystem-view");
    const std::string where = "filesystem-view tree " + std::to_string(i);
    if (base > uint16_t(PathBase::kHome)) return fault(where + " has an unknown path variable");
    tree.base = PathBase(base);
    if (tree.flags & ~kKnownViewTreeFlags) return fault(where + " has undefined flag bits");
    if ((tree.flags & kViewProtected) && (tree.flags & kViewWritable)) return fault(where + " is protected and writable");
    if (Status path = check_template_path(tree.base, tree.path, where); !path) return path;
    // The view would hide nothing: Landlock alone does that.
    if (tree.base == PathBase::kAbsolute && tree.path == "/") return fault(where + " binds the host's root");
    if (!view.trees.empty() && std::pair(view.trees.back().base, view.trees.back().path) >= std::pair(tree.base, tree.path))
      return fault(where + " is out of order or repeats a path");
    view.trees.push_back(std::move(tree));
  }
  return Ok{};
}

Status decode_view_tmpfs(ByteReader& r, FilesystemView& view) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("filesystem-view");
  if (count > 2) return fault("filesystem-view section has more than two private tmpfs");
  for (uint32_t i = 0; i < count; ++i) {
    ViewTmpfs tmpfs;
    tmpfs.max_bytes = r.u64();
    tmpfs.flags = r.u16();
    tmpfs.path = r.str16();
    if (!r.ok()) return truncated("filesystem-view");
    const std::string where = "filesystem-view tmpfs " + std::to_string(i);
    if (tmpfs.path != "/dev/shm" && tmpfs.path != "/tmp") return fault(where + " is neither /dev/shm nor /tmp");
    if (tmpfs.flags & ~kViewNoExec) return fault(where + " has undefined flag bits");
    if (tmpfs.max_bytes == 0) return fault(where + " has no size ceiling");
    if (!view.tmpfs.empty() && view.tmpfs.back().path >= tmpfs.path)
      return fault(where + " is out of order or repeats a path");
    view.tmpfs.push_back(std::move(tmpfs));
  }
  return Ok{};
}

Status decode_pinned(ByteReader& r, Plan& plan) {
  if (!plan.pinned.empty()) return fault("two pinned sections");
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("pinned");
  if (count == 0 || count > kMaxPinnedFiles) return fault("pinned section has " + std::to_string(count) + " files (1 to " + std::to_string(kMaxPinnedFiles) + " allowed)");
  for (uint32_t i = 0; i < count; ++i) {
    PinnedFile file;
    file.size = r.u64();
    const std::span<const uint8_t> digest = r.bytes(kDigestSize);
    file.path = r.str16();
    if (!r.ok()) return truncated("pinned");
    std::copy(digest.begin(), digest.end(), file.sha256.begin());
    const std::string where = "pinned file " + std::to_string(i);
    if (Status path = check_template_path(PathBase::kAbsolute, file.path, where); !path) return path;
    if (!plan.pinned.empty() && plan.pinned.back().path >= file.path) return fault(where + " is out of order or repeats a path");
    plan.pinned.push_back(std::move(file));
  }
  return Ok{};
}

// Host patterns as the egress section lays them out: each one
// parse_host_pattern reads back to itself, sorted and unique.
Status read_patterns(ByteReader& r, const char* list, std::vector<HostPattern>& out) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("egress");
  if (count > kMaxEgressPatterns) return fault(std::string("egress section's ") + list + " list has too many patterns");
  for (uint32_t i = 0; i < count; ++i) {
    HostPattern pattern;
    const uint8_t kind = r.u8();
    pattern.port = r.u16();
    pattern.host = r.str16();
    if (!r.ok()) return truncated("egress");
    const std::string where = std::string("egress ") + list + " pattern " + std::to_string(i);
    if (kind > uint8_t(HostPattern::Kind::kAddress)) return fault(where + " has an unknown kind " + std::to_string(kind));
    pattern.kind = HostPattern::Kind(kind);
    const Result<HostPattern> read_back = parse_host_pattern(host_pattern_text(pattern));
    if (!read_back || *read_back != pattern) return fault(where + " is not a host pattern in its canonical spelling");
    if (!out.empty() && !(out.back() < pattern)) return fault(where + " is out of order or repeats a pattern");
    out.push_back(std::move(pattern));
  }
  return Ok{};
}

Status decode_egress(ByteReader& r, Plan& plan) {
  if (plan.egress) return fault("two egress sections");
  Egress egress;
  const uint8_t any_name = r.u8();
  if (!r.ok()) return truncated("egress");
  if (any_name > 1) return fault("egress section's any-name flag is " + std::to_string(any_name) + ", not 0 or 1");
  egress.any_name = any_name == 1;
  if (Status s = read_patterns(r, "allow", egress.allow); !s) return s;
  if (Status s = read_patterns(r, "deny", egress.deny); !s) return s;
  plan.egress = std::move(egress);
  return Ok{};
}

// A bwrap argument vector, as the bwrap section and a lowering lay it out.
Status read_bwrap(ByteReader& r, const char* section, Bwrap& bwrap) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated(section);
  if (count == 0 || count > kMaxBwrapArgs)
    return fault(std::string(section) + " section has " + std::to_string(count) + " arguments (1 to " +
                 std::to_string(kMaxBwrapArgs) + " allowed)");
  for (uint32_t i = 0; i < count; ++i) {
    BwrapArg arg;
    const uint8_t kind = r.u8();
    arg.text = r.str16();
    if (!r.ok()) return truncated(section);
    const std::string where = "bwrap argument " + std::to_string(i);
    if (kind > uint8_t(BwrapArgKind::kRootLinks)) return fault(where + " has an unknown kind");
    arg.kind = BwrapArgKind(kind);
    if (arg.text.size() > kMaxPathBytes || arg.text.find('\0') != std::string::npos)
      return fault(where + " is invalid (over PATH_MAX, or holds NUL)");
    if ((arg.kind == BwrapArgKind::kSeccomp || arg.kind == BwrapArgKind::kRootLinks) && !arg.text.empty())
      return fault(where + " stands for arguments made at launch and has text");
    if (arg.kind == BwrapArgKind::kCwd || arg.kind == BwrapArgKind::kHome)
      if (Status path = check_template_path(PathBase(kind), arg.text, where); !path) return path;
    bwrap.args.push_back(std::move(arg));
  }
  return Ok{};
}

Status decode_bwrap(ByteReader& r, Plan& plan) {
  if (plan.bwrap) return fault("two bwrap sections");
  Bwrap bwrap;
  if (Status args = read_bwrap(r, "bwrap", bwrap); !args) return args;
  plan.bwrap = std::move(bwrap);
  return Ok{};
}

// Key/value strings, sorted by key and unique: the meta section's, a lowering's.
Status read_pairs(ByteReader& r, const char* section, std::vector<std::pair<std::string, std::string>>& pairs) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated(section);
  if (count > kMaxListEntries) return fault(std::string(section) + " has too many entries");
  for (uint32_t i = 0; i < count; ++i) {
    std::string key = r.str16();
    std::string value = r.str16();
    if (!r.ok()) return truncated(section);
    if (!pairs.empty() && key <= pairs.back().first) return fault(std::string(section) + " keys are not sorted and unique");
    pairs.emplace_back(std::move(key), std::move(value));
  }
  return Ok{};
}

Status decode_lowering(ByteReader& r, Lowering& lowering) {
  lowering.backend = r.str16();
  lowering.not_carried = r.str16();
  if (!r.ok()) return truncated("lowerings");
  if (lowering.backend.empty()) return fault("a lowering has no backend name");
  const std::string where = "lowering '" + lowering.backend + "'";
  if (Status meta = read_pairs(r, "lowerings", lowering.meta); !meta) return meta;
  const uint8_t has_bwrap = r.u8();
  if (!r.ok()) return truncated("lowerings");
  if (has_bwrap > 1) return fault(where + " has an unknown bwrap flag");
  if (has_bwrap) {
    if (Status args = read_bwrap(r, "lowerings", lowering.bwrap.emplace()); !args) return args;
  }
  if (!lowering.carried() && (!lowering.meta.empty() || lowering.bwrap))
    return fault(where + " is not carried and has a lowering");
  return Ok{};
}

Status decode_lowerings(ByteReader& r, Plan& plan) {
  if (!plan.lowerings.empty()) return fault("two lowerings sections");
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("lowerings");
  if (count == 0 || count > kMaxLowerings)
    return fault("lowerings section has " + std::to_string(count) + " lowerings (1 to " +
                 std::to_string(kMaxLowerings) + " allowed)");
  bool any_carried = false;
  for (uint32_t i = 0; i < count; ++i) {
    Lowering lowering;
    if (Status s = decode_lowering(r, lowering); !s) return s;
    for (const Lowering& other : plan.lowerings)
      if (other.backend == lowering.backend) return fault("lowering '" + lowering.backend + "' is listed twice");
    any_carried |= lowering.carried();
    plan.lowerings.push_back(std::move(lowering));
  }
  if (!any_carried) return fault("lowerings section carries no lowering");
  return Ok{};
}

Status decode_view(ByteReader& r, Plan& plan) {
  if (plan.view) return fault("two filesystem-view sections");
  FilesystemView view;
  view.flags = r.u16();
  view.dev_nodes = r.u16();
  if (!r.ok()) return truncated("filesystem-view");
  if (view.flags & ~kKnownViewFlags) return fault("filesystem-view section has undefined flag bits");
  if (view.dev_nodes >> std::size(mount_view::kDevNodes)) return fault("filesystem-view section names an unknown device node");
  if (Status trees = decode_view_trees(r, view); !trees) return trees;
  if (Status tmpfs = decode_view_tmpfs(r, view); !tmpfs) return tmpfs;
  plan.view = std::move(view);
  return Ok{};
}

bool is_env_name(const std::string& name, bool prefix_allowed) {
  std::string stem = name;
  if (prefix_allowed && !stem.empty() && stem.back() == '*') stem.pop_back();
  if (stem.empty() || !(std::isalpha(uint8_t(stem[0])) || stem[0] == '_')) return false;
  return std::all_of(stem.begin(), stem.end(), [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
}

Status decode_process(ByteReader& r, Plan& plan) {
  if (plan.process) return fault("two process sections");
  ProcessSettings p;
  std::optional<uint64_t>* values[] = {&p.open_files, &p.file_size, &p.memory, &p.swap, &p.pids,
                                       &p.cpu_millicores, &p.wall_clock_seconds, &p.stdout_bytes,
                                       &p.stderr_bytes};
  const uint32_t present = r.u32();
  if (present >> std::size(values)) return fault("process section has undefined value bits");
  for (size_t i = 0; i < std::size(values); ++i)
    if (present & (1u << i)) *values[i] = r.u64();
  p.flags = r.u16();
  const uint16_t filtered = r.u16();
  if (!r.ok()) return truncated("process");
  if (p.flags & ~kProcessResourceDegradable) return fault("process section has undefined flag bits");
  if (filtered > 1) return fault("process section has an undefined environment mode");
  p.environment_filtered = filtered == 1;
  const uint32_t passes = r.u32();
  if (passes > kMaxListEntries) return fault("process section has too many environment names");
  for (uint32_t i = 0; i < passes && r.ok(); ++i) {
    std::string name = r.str16();
    if (!r.ok()) break;
    if (!is_env_name(name, true)) return fault("process section has an invalid environment name");
    if (!p.environment_pass.empty() && p.environment_pass.back() >= name)
      return fault("process section's environment names are not sorted and unique");
    p.environment_pass.push_back(std::move(name));
  }
  const uint32_t sets = r.u32();
  if (!r.ok()) return truncated("process");
  if (sets > kMaxListEntries) return fault("process section has too many environment values");
  for (uint32_t i = 0; i < sets; ++i) {
    std::string name = r.str16();
    std::string value = r.str16();
    if (!r.ok()) return truncated("process");
    if (!is_env_name(name, false) || value.find('\0') != std::string::npos)
      return fault("process section has an invalid environment value");
    if (!p.environment_set.empty() && p.environment_set.back().first >= name)
      return fault("process section's environment values are not sorted and unique");
    p.environment_set.emplace_back(std::move(name), std::move(value));
  }
  p.namespaces = r.u32();
  p.kept_capabilities = r.u64();
  if (!r.ok()) return truncated("process");
  if (p.namespaces & ~kKnownNamespaces) return fault("process section asks for an unknown namespace");
  if (p.kept_capabilities >> kKnownCapabilities) return fault("process section keeps an unknown capability");
  if (!p.environment_filtered && (!p.environment_pass.empty() || !p.environment_set.empty()))
    return fault("process section lists environment variables but does not filter the environment");
  plan.process = std::move(p);
  return Ok{};
}

Status decode_manifest(ByteReader& r, Plan& plan) {
  const uint32_t count = r.u32();
  if (count > kMaxListEntries) return fault("syscall manifest has too many entries");
  if (r.remaining() < size_t(count) * 8) return truncated("syscall-manifest");  // 8: the smallest entry
  plan.syscalls.resize(count);
  std::string_view previous;
  for (SyscallEntry& entry : plan.syscalls) {
    const uint16_t origin = r.u16();
    entry.action = r.u32();
    const std::string_view name = r.view16();
    if (!r.ok()) return truncated("syscall-manifest");
    if (&entry != plan.syscalls.data() && previous >= name)
      return fault("syscall manifest names are not sorted and unique");
    if (origin != uint16_t(SyscallOrigin::kPolicy) && origin != uint16_t(SyscallOrigin::kStartup))
      return fault("syscall manifest entry has an unknown origin");
    entry.origin = SyscallOrigin(origin);
    entry.name = name;
    previous = name;
  }
  return Ok{};
}

// A call table, as the provenance and call-tables sections lay it out.
Status read_calls(ByteReader& r, const char* section, std::vector<ProvenanceCall>& calls) {
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated(section);
  if (count > kMaxListEntries) return fault(std::string(section) + " section has too many calls");
  for (uint32_t i = 0; i < count; ++i) {
    ProvenanceCall call;
    call.number = r.u16();
    call.name = r.str16();
    call.sensitive_group = r.str16();
    if (!r.ok()) return truncated(section);
    if (!calls.empty() && calls.back().number >= call.number)
      return fault(std::string(section) + " calls are not sorted by number and unique");
    calls.push_back(std::move(call));
  }
  return Ok{};
}

Status decode_provenance(ByteReader& r, Plan& plan) {
  if (plan.provenance) return fault("two provenance sections");
  Provenance p;
  const uint32_t sources = r.u32();
  if (!r.ok()) return truncated("provenance");
  if (sources >= kNoSource) return fault("provenance section has too many sources");
  for (uint32_t i = 0; i < sources; ++i) {
    ProvenanceSource source;
    source.document = r.str16();
    source.tier = r.str16();
    source.file = r.str16();
    if (!r.ok()) return truncated("provenance");
    p.sources.push_back(std::move(source));
  }
  const uint32_t entries = r.u32();
  if (!r.ok()) return truncated("provenance");
  if (entries > kMaxListEntries) return fault("provenance section has too many entries");
  for (uint32_t i = 0; i < entries; ++i) {
    ProvenanceEntry entry;
    entry.source = r.u16();
    entry.line = r.u32();
    entry.column = r.u32();
    entry.key = r.str16();
    entry.item = r.str16();
    entry.value = r.str16();
    if (!r.ok()) return truncated("provenance");
    if (entry.source != kNoSource && entry.source >= p.sources.size())
      return fault("provenance entry " + std::to_string(i) + " names a source the section does not have");
    p.entries.push_back(std::move(entry));
  }
  if (Status calls = read_calls(r, "provenance", p.calls); !calls) return calls;
  plan.provenance = std::move(p);
  return Ok{};
}

Status decode_call_tables(ByteReader& r, Plan& plan) {
  if (!plan.provenance) return fault("call-tables section without a provenance section before it");
  std::vector<CallTable>& tables = plan.provenance->other_calls;
  if (!tables.empty()) return fault("two call-tables sections");
  const uint32_t count = r.u32();
  if (!r.ok()) return truncated("call-tables");
  if (count > kMaxListEntries) return fault("call-tables section has too many tables");
  for (uint32_t i = 0; i < count; ++i) {
    CallTable table;
    table.audit_arch = r.u32();
    if (!r.ok()) return truncated("call-tables");
    if (table.audit_arch == kProvenanceCallsArch || (!tables.empty() && tables.back().audit_arch >= table.audit_arch))
      return fault("call tables are not sorted by architecture and unique, or repeat the provenance section's");
    if (Status calls = read_calls(r, "call-tables", table.calls); !calls) return calls;
    tables.push_back(std::move(table));
  }
  return Ok{};
}

Status decode_section(const SectionEntry& e, std::span<const uint8_t> body, Plan& plan, bool& seen_meta,
                      bool& seen_manifest) {
  ByteReader r(body);
  Status status = Ok{};
  switch (SectionType(e.type)) {
    case SectionType::kMeta:
      if (seen_meta) return fault("two meta sections");
      seen_meta = true;
      status = read_pairs(r, "meta", plan.meta);
      break;
    case SectionType::kLandlock: status = decode_landlock(r, plan); break;
    case SectionType::kSeccompProgram: status = decode_program(r, plan); break;
    case SectionType::kSyscallManifest:
      if (seen_manifest) return fault("two syscall manifests");
      seen_manifest = true;
      status = decode_manifest(r, plan);
      break;
    case SectionType::kProcess: status = decode_process(r, plan); break;
    case SectionType::kFilesystemView: status = decode_view(r, plan); break;
    case SectionType::kProvenance: status = decode_provenance(r, plan); break;
    case SectionType::kPinned: status = decode_pinned(r, plan); break;
    case SectionType::kCallTables: status = decode_call_tables(r, plan); break;
    case SectionType::kBwrap: status = decode_bwrap(r, plan); break;
    case SectionType::kLowerings: status = decode_lowerings(r, plan); break;
    case SectionType::kEgress: status = decode_egress(r, plan); break;
  }
  if (!status) return status;
  if (!r.ok()) return fault(std::string(section_name(e.type)) + " section is shorter than its contents");
  if (!r.at_end()) return fault(std::string(section_name(e.type)) + " section has trailing bytes");
  return Ok{};
}

}  // namespace

Sha256Digest plan_digest(std::span<const uint8_t> bytes) {
  Sha256Digest digest{};
  if (bytes.size() >= kDigestSize) std::copy(bytes.end() - kDigestSize, bytes.end(), digest.begin());
  return digest;
}

std::string identity_text(const Sha256Digest& digest) { return std::string(kDigestPrefix) + to_hex(digest); }

std::string pinned_text(const PinnedFile& file) {
  return file.path + " " + identity_text(file.sha256) + ", " + std::to_string(file.size) + " bytes";
}

std::string bwrap_arg_text(const BwrapArg& arg) {
  switch (arg.kind) {
    case BwrapArgKind::kLiteral: return arg.text;
    case BwrapArgKind::kCwd: return "${CWD}" + arg.text;
    case BwrapArgKind::kHome: return "${HOME}" + arg.text;
    case BwrapArgKind::kSeccomp: return "<--add-seccomp-fd N per seccomp program>";
    case BwrapArgKind::kRootLinks: return "<--symlink per link of the host's root into a bound tree>";
  }
  return "?";
}

std::string plan_identity(std::span<const uint8_t> bytes) { return identity_text(plan_digest(bytes)); }

Result<Sha256Digest> parse_digest_text(std::string_view text) {
  if (text.starts_with(kDigestPrefix)) text.remove_prefix(kDigestPrefix.size());
  if (text.size() != 2 * kDigestSize)
    return make_error("a plan digest is 64 hex digits, optionally after 'sha256:' (got " +
                      std::to_string(text.size()) + " characters)");
  Sha256Digest digest{};
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < digest.size(); ++i) {
    const int high = nibble(text[2 * i]), low = nibble(text[2 * i + 1]);
    if (high < 0 || low < 0) return make_error("a plan digest is hex digits only (0-9, a-f, A-F)");
    digest[i] = uint8_t(high << 4 | low);
  }
  return digest;
}

const SeccompProgram* find_program(const Plan& plan, uint32_t audit_arch) {
  for (const SeccompProgram& program : plan.seccomp)
    if (program.audit_arch == audit_arch && !is_rules_program(program.mode)) return &program;
  return nullptr;
}

std::vector<const SeccompProgram*> programs_for(const Plan& plan, uint32_t audit_arch) {
  std::vector<const SeccompProgram*> programs;
  for (const SeccompProgram& program : plan.seccomp)
    if (program.audit_arch == audit_arch) programs.push_back(&program);
  return programs;
}

namespace {

constexpr ControlDomain kFilesystemVerbs[] = {ControlDomain::kFileRead, ControlDomain::kFileWrite,
                                              ControlDomain::kFileExecute};

bool has_control(const Plan& plan, ControlDomain domain) {
  return plan.landlock && std::any_of(plan.landlock->controls.begin(), plan.landlock->controls.end(),
                                      [&](const LandlockControl& c) { return c.domain == domain; });
}

}  // namespace

bool confines_filesystem(const Plan& plan) {
  if (plan.bwrap) return true;  // bwrap's root holds only the trees its arguments bind
  return std::any_of(std::begin(kFilesystemVerbs), std::end(kFilesystemVerbs),
                     [&](ControlDomain verb) { return has_control(plan, verb); });
}

std::vector<ControlDomain> unconstrained_filesystem_verbs(const Plan& plan) {
  std::vector<ControlDomain> out;
  if (!confines_filesystem(plan) || plan.bwrap) return out;
  for (ControlDomain verb : kFilesystemVerbs)
    if (!has_control(plan, verb)) out.push_back(verb);
  return out;
}

const char* control_domain_name(ControlDomain domain) {
  return domain <= ControlDomain::kIpc ? control_name(control_of(domain)) : "unknown";
}

const ProvenanceCall* find_call(const Provenance& provenance, uint32_t audit_arch, int number) {
  const std::vector<ProvenanceCall>* calls = audit_arch == kProvenanceCallsArch ? &provenance.calls : nullptr;
  for (const CallTable& table : provenance.other_calls)
    if (table.audit_arch == audit_arch) calls = &table.calls;
  if (!calls) return nullptr;
  const auto it = std::lower_bound(calls->begin(), calls->end(), number,
                                   [](const ProvenanceCall& c, int n) { return int(c.number) < n; });
  return it != calls->end() && int(it->number) == number ? &*it : nullptr;
}

std::vector<uint32_t> call_table_arches(const Provenance& provenance) {
  std::vector<uint32_t> arches;
  if (!provenance.calls.empty()) arches.push_back(kProvenanceCallsArch);
  for (const CallTable& table : provenance.other_calls) arches.push_back(table.audit_arch);
  return arches;
}

const char* audit_arch_name(uint32_t audit_arch) {
  switch (audit_arch) {
    case kAuditArchX86_64: return "x86_64";
    case kAuditArchAarch64: return "aarch64";
  }
  return "unknown-arch";
}

Result<Plan> decode_plan(std::span<const uint8_t> bytes, Decode what) {
  if (Status header = check_header(bytes); !header) return header.error();
  auto table = read_section_table(bytes);
  if (!table) return table.error();
  Plan plan;
  bool seen_meta = false, seen_manifest = false;
  for (const SectionEntry& e : *table) {
    if (!is_known(e.type)) {
      if (e.flags & kSectionCritical)
        return fault("unknown critical section type " + std::to_string(e.type) +
                     "; this plan needs a newer aasm-launch");
      continue;  // unknown and not critical: skip
    }
    const bool critical_by_type = SectionType(e.type) == SectionType::kLandlock ||
                                  SectionType(e.type) == SectionType::kSeccompProgram ||
                                  SectionType(e.type) == SectionType::kProcess ||
                                  SectionType(e.type) == SectionType::kFilesystemView ||
                                  SectionType(e.type) == SectionType::kPinned ||
                                  SectionType(e.type) == SectionType::kBwrap ||
                                  SectionType(e.type) == SectionType::kLowerings ||
                                  SectionType(e.type) == SectionType::kEgress;
    if (critical_by_type && !(e.flags & kSectionCritical))
      return fault(std::string(section_name(e.type)) + " section is not marked critical");
    if (what == Decode::kDeferProvenance &&
        (SectionType(e.type) == SectionType::kProvenance || SectionType(e.type) == SectionType::kCallTables))
      continue;
    if (Status s = decode_section(e, bytes.subspan(e.offset, e.length), plan, seen_meta, seen_manifest); !s)
      return s.error();
  }
  if (!seen_meta) return fault("no meta section");
  // Several lowerings: the plan's own sections are native's, and each
  // lowering says what taking it adds (plan.h, apply_lowering).
  if (!plan.lowerings.empty() && (plan.bwrap || !meta_value(plan, "backend").empty()))
    return fault("a plan with a lowerings section has a backend of its own");
  if (plan.egress && plan.bwrap) return fault("a bwrap plan has an egress section: bwrap cannot carry the broker");
  if (plan.egress && !(namespaces_of(plan) & kNamespaceNet))
    return fault("the egress section needs the command's own network namespace, which the process section does not ask for");
  constexpr uint32_t kViewNamespaces = kNamespaceMount | kNamespacePid;
  if (plan.view && (namespaces_of(plan) & kViewNamespaces) != kViewNamespaces)
    return fault("the filesystem view needs the mount and PID namespaces, which the process section does not ask for");
  for (size_t i = 0; i < plan.seccomp.size(); ++i) {
    const bool last_of_arch = i + 1 == plan.seccomp.size() || plan.seccomp[i + 1].audit_arch != plan.seccomp[i].audit_arch;
    if (last_of_arch && is_rules_program(plan.seccomp[i].mode))
      return fault(std::string("the seccomp programs for ") + audit_arch_name(plan.seccomp[i].audit_arch) +
                   " have no main program");
  }
  return plan;
}

Result<std::vector<uint8_t>> read_plan_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer
  // forever, and a terminal could become the controlling one (O_NOCTTY).
  // Regular files ignore O_NONBLOCK, so the reads below are unchanged.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot open plan '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    return make_error("cannot stat plan '" + path + "': " + std::strerror(saved));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error("plan '" + path + "' is " + file_type_name(st.st_mode) +
                      ", not a regular file; give the path of a compiled plan (aasmc compile -o)");
  }
  if (uint64_t(st.st_size) > kMaxPlanSize) {
    ::close(fd);
    return fault("'" + path + "' is " + std::to_string(st.st_size) + " bytes, over the " +
                 std::to_string(kMaxPlanSize) + "-byte limit");
  }
  // One byte more than the limit, so growth after fstat is still caught.
  std::vector<uint8_t> bytes(size_t(st.st_size) + 1);
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return make_error("cannot read plan '" + path + "': " + std::strerror(saved));
    }
    if (n == 0) break;
    got += size_t(n);
  }
  ::close(fd);
  if (got > kMaxPlanSize) return fault("'" + path + "' grew past the size limit while being read");
  bytes.resize(got);
  return bytes;
}

}  // namespace aasm::plan
