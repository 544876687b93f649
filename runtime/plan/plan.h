// The decoded plan: what the compiler writes and the launcher reads. Plain
// data; the byte layout lives in writer.cpp and reader.cpp only.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "crypto/sha256.h"
#include "plan/format.h"
#include "plan/host_pattern.h"
#include "plan/namespaces.h"

namespace aasm::plan {

// A rule path is a template: an optional launch-time variable, then the rest.
enum class PathBase : uint16_t { kAbsolute = 0, kCwd = 1, kHome = 2 };

inline constexpr uint16_t kRuleOptional = 1u << 0;  // missing at launch: skip, report
// A ${CWD}/${HOME} rule whose variable may resolve to a system root (`/`,
// /usr, ...): filesystem.templates_may_resolve_to_system_roots. Without it
// such a launch is refused. Never set on an absolute rule.
inline constexpr uint16_t kRuleSystemRootTemplate = 1u << 1;
inline constexpr uint16_t kKnownRuleFlags = kRuleOptional | kRuleSystemRootTemplate;

struct LandlockRule {
  uint64_t access = 0;       // LANDLOCK_ACCESS_FS_* granted beneath the path
  PathBase base = PathBase::kAbsolute;
  uint16_t flags = 0;
  std::string path;          // absolute, or the suffix after the variable ("" or "/x")
  bool operator==(const LandlockRule&) const = default;
};

// A TCP port the ruleset lets the command connect to or bind.
struct LandlockNetRule {
  uint64_t access = 0;  // LANDLOCK_ACCESS_NET_* granted for the port
  uint16_t port = 0;
  bool operator==(const LandlockNetRule&) const = default;
};

// One policy control's share of the ruleset and the ABI it needs. The
// launcher compares the floor with the host's ABI: below it, the control is
// refused, or, when the policy lets the domain degrade, enforced with only
// the rights the host knows, and reported as partial.
enum class ControlDomain : uint16_t {  // the policy's domain vocabulary
  kFileRead = 0, kFileWrite = 1, kFileExecute = 2, kNetworkOutbound = 3, kNetworkBind = 4, kIpc = 5,
};
inline constexpr uint16_t kControlDegradable = 1u << 0;
// Requested but beyond any kernel mechanism (network.outbound.hosts): the plan
// exists only because the policy let the domain degrade, and says so.
inline constexpr uint16_t kControlNotEnforceable = 1u << 1;
// Where the host lacks some of the control's rights, the plan's fallback
// seccomp programs (FilterMode::kFallback) stand in for them, stricter than
// the control: ipc.unix_sockets' allow-list becomes "every pathname socket
// refused". Only with kControlDegradable.
inline constexpr uint16_t kControlSeccompFallback = 1u << 2;

struct LandlockControl {
  ControlDomain domain = ControlDomain::kFileRead;
  uint16_t flags = 0;
  uint32_t min_abi = 1;  // the lowest ABI that enforces the control as written
  uint64_t fs = 0;       // its rights in handled_fs, handled_net, scoped
  uint64_t net = 0;
  uint64_t scoped = 0;
  bool operator==(const LandlockControl&) const = default;
};

struct LandlockRuleset {
  uint32_t min_abi = 1;      // lowest Landlock ABI that enforces all of it as written
  uint64_t handled_fs = 0;   // rights denied unless a rule grants them
  uint64_t handled_net = 0;
  uint64_t scoped = 0;
  std::vector<LandlockRule> rules;
  std::vector<LandlockNetRule> net_rules;  // sorted by port
  std::vector<LandlockControl> controls;   // sorted by domain
  bool operator==(const LandlockRuleset&) const = default;
};

const char* control_domain_name(ControlDomain domain);

struct BpfInstruction {
  uint16_t code = 0;
  uint8_t jt = 0;
  uint8_t jf = 0;
  uint32_t k = 0;
  bool operator==(const BpfInstruction&) const = default;
};

// kRules: a filter stacked after the main one, returning one action for the
// calls its rules match and allow for everything else; the kernel keeps the
// strictest answer of all filters, which is how overlapping rules resolve.
// kFallback: a rules program the launcher installs only when a control
// flagged kControlSeccompFallback is not enforced in full on the host.
enum class FilterMode : uint32_t { kAllowlist = 1, kDenylist = 2, kRules = 3, kFallback = 4 };
// Rule and fallback programs come before the main program of their architecture.
inline bool is_rules_program(FilterMode mode) { return mode == FilterMode::kRules || mode == FilterMode::kFallback; }

struct SeccompProgram {
  uint32_t audit_arch = 0;
  FilterMode mode = FilterMode::kAllowlist;
  uint32_t default_action = 0;  // SECCOMP_RET_* value for syscalls not listed
  std::vector<BpfInstruction> instructions;
  bool operator==(const SeccompProgram&) const = default;
};

enum class SyscallOrigin : uint16_t { kPolicy = 1, kStartup = 2 };

struct SyscallEntry {
  std::string name;
  SyscallOrigin origin = SyscallOrigin::kPolicy;
  uint32_t action = 0;        // SECCOMP_RET_* value
  bool operator==(const SyscallEntry&) const = default;
};

// How the process tree runs: resource ceilings (rlimits, the run's cgroup),
// supervision limits, and the environment it gets. Absent values: no limit.
struct ProcessSettings {
  // rlimits of the command
  std::optional<uint64_t> open_files, file_size;
  // the run's cgroup
  std::optional<uint64_t> memory, swap, pids, cpu_millicores;
  // supervision
  std::optional<uint64_t> wall_clock_seconds, stdout_bytes, stderr_bytes;
  // environment: when filtered, only `pass` (names, or prefixes ending in '*')
  // and `set` reach the command; otherwise the launcher's own, less the
  // dynamic loader's LD_* variables.
  bool environment_filtered = false;
  std::vector<std::string> environment_pass;                          // sorted
  std::vector<std::pair<std::string, std::string>> environment_set;  // sorted by name
  uint16_t flags = 0;       // kProcessResourceDegradable
  uint32_t namespaces = 0;  // kNamespace* bits (plan/namespaces.h): fresh namespaces for the tree
  uint64_t kept_capabilities = 0;  // bit N: capability N stays (isolation.linux_capabilities)
  bool operator==(const ProcessSettings&) const = default;
  // Limits of the whole tree, which need the run's cgroup.
  bool has_tree_limits() const { return memory || swap || pids || cpu_millicores; }
};
inline constexpr uint16_t kProcessResourceDegradable = 1u << 0;
inline constexpr int kKnownCapabilities = 41;  // CAP_CHOWN (0) to CAP_CHECKPOINT_RESTORE (40)

// The filesystem view (isolation.filesystem_view, docs/filesystem-view.md):
// an empty root holding the policy's trees, bound in, and the view's own
// filesystems. The launcher resolves the templates and builds it with
// kernel/mount_view.h.
inline constexpr uint16_t kViewWritable = 1u << 0;   // read-write; read-only without it
inline constexpr uint16_t kViewNoExec = 1u << 1;     // no execute right: noexec
inline constexpr uint16_t kViewProtected = 1u << 2;  // filesystem.readonly: read-only over its writable tree
inline constexpr uint16_t kViewOptional = 1u << 3;   // missing at launch: skipped, reported
inline constexpr uint16_t kKnownViewTreeFlags = kViewWritable | kViewNoExec | kViewProtected | kViewOptional;

struct ViewTree {
  PathBase base = PathBase::kAbsolute;
  uint16_t flags = 0;  // kView* bits
  std::string path;    // as a Landlock rule's: absolute, or the suffix after the variable
  bool operator==(const ViewTree&) const = default;
};

// A private tmpfs: /tmp or /dev/shm, nothing else.
struct ViewTmpfs {
  std::string path;
  uint64_t max_bytes = 0;  // resources.tmp_size; never 0 (tmpfs reads 0 as no limit)
  uint16_t flags = 0;      // kViewNoExec only
  bool operator==(const ViewTmpfs&) const = default;
};

inline constexpr uint16_t kViewProc = 1u << 0;        // the view's own /proc
inline constexpr uint16_t kViewDevPts = 1u << 1;      // a new devpts instance at /dev/pts
inline constexpr uint16_t kViewDegradable = 1u << 2;  // the host may run the plan without the view
// The process section's mount and PID namespaces are the view's alone (the
// policy asks for neither): a launcher that leaves the view out where no
// user namespace can be had leaves them out too, since only one could make them.
inline constexpr uint16_t kViewOwnNamespaces = 1u << 3;
inline constexpr uint16_t kKnownViewFlags = kViewProc | kViewDevPts | kViewDegradable | kViewOwnNamespaces;

struct FilesystemView {
  uint16_t flags = 0;
  uint16_t dev_nodes = 0;        // bit i: /dev/<mount_view::kDevNodes[i]>
  std::vector<ViewTree> trees;   // sorted by (base, path)
  std::vector<ViewTmpfs> tmpfs;  // sorted by path
  bool operator==(const FilesystemView&) const = default;
};

// The bubblewrap backend (docs/backends.md): the arguments the launcher runs
// the host's bwrap with, before "--" and the command. A path argument is a
// template as a rule's is, resolved at launch; kSeccomp stands for the
// plan's programs of the host's architecture, each passed by a descriptor
// ("--add-seccomp-fd N", in install order), as written: no listener (a
// SECCOMP_RET_USER_NOTIF nobody listens to answers ENOSYS); kRootLinks for
// "--symlink TARGET /NAME" per link of the host's root that leads into a
// bound tree (/bin -> usr/bin), read at launch as the view reads them.
enum class BwrapArgKind : uint8_t { kLiteral = 0, kCwd = 1, kHome = 2, kSeccomp = 3, kRootLinks = 4 };
struct BwrapArg {
  BwrapArgKind kind = BwrapArgKind::kLiteral;
  std::string text;  // the argument; for kCwd/kHome the suffix after the variable; empty for kSeccomp
  bool operator==(const BwrapArg&) const = default;
};
struct Bwrap {
  std::vector<BwrapArg> args;
  bool operator==(const Bwrap&) const = default;
};

// One backend's lowering in a plan that carries several (`aasmc compile
// --backend auto` or a list, docs/backends.md): the plan's own sections are
// the native lowering, and a lowering says what taking it changes. The
// launcher walks them in the plan's order and takes the first this host can
// run (apply_lowering). Only backends aasm-launch runs are carried.
struct Lowering {
  std::string backend;      // the compiler's name for it: "native", "bwrap"
  std::string not_carried;  // why the compiler could not carry it ("" when carried): the unmet controls
  // Added to the plan's meta when taken: `backend` and its
  // `backend.degraded.*` records, as a plan compiled for it alone has them.
  std::vector<std::pair<std::string, std::string>> meta;  // sorted by key
  std::optional<Bwrap> bwrap;  // taken: the command runs under bwrap with these arguments
  bool carried() const { return not_carried.empty(); }
  bool operator==(const Lowering&) const = default;
};

// network.outbound.hosts (docs/egress.md): the command runs in a network
// namespace of its own (the process section lists `net`), with loopback
// only, and reaches other hosts through the launcher's broker, which listens
// at 127.0.0.1:kBrokerPort there and connects from the host's namespace to
// what `allow` matches and `deny` does not.
inline constexpr uint16_t kBrokerPort = 3128;
struct Egress {
  bool any_name = false;            // no allow-list: every name (an address only where listed) but the denied
  std::vector<HostPattern> allow;   // sorted, unique
  std::vector<HostPattern> deny;    // sorted, unique
  bool operator==(const Egress&) const = default;
};

// Where the plan's decisions came from, for the end-of-run denial report,
// which names the policy line behind a refusal and the edit that would allow
// it without the sources (docs/plan-format.md, section 7). Descriptive: a
// plan without it enforces the same, and its report says so.
inline constexpr uint16_t kNoSource = 0xFFFF;  // a decision no document wrote (a built-in default)

struct ProvenanceSource {
  std::string document;  // metadata.name
  std::string tier;      // org, team, agent, run
  std::string file;      // as given to the compiler, so `aasmc suggest` finds it from the same place
  bool operator==(const ProvenanceSource&) const = default;
};

struct ProvenanceEntry {
  uint16_t source = kNoSource;  // index in Provenance::sources
  uint32_t line = 0, column = 0;
  std::string key;    // the policy node as written: "filesystem.read.allow", "syscalls.deny", ...
  std::string item;   // what the entry names: a path template, a syscall, "tcp:443"; "" for the node itself
  std::string value;  // the node's setting where it has one: "none", "deny", "errno:EPERM"
  bool operator==(const ProvenanceEntry&) const = default;
};

// A syscall of one of the plan's target architectures, named as the
// compiler names it, with the deny set that makes allowing it sensitive.
// The provenance section holds x86_64's (kProvenanceCallsArch, the table
// since the section exists); the call-tables section (docs/plan-format.md,
// section 9) each other target's. A number is looked up only in its own
// architecture's table (find_call): the report says so rather than give
// another call's name.
inline constexpr uint32_t kProvenanceCallsArch = kAuditArchX86_64;
struct ProvenanceCall {
  uint16_t number = 0;
  std::string name;
  std::string sensitive_group;  // "privileged", "mount", "kernel", "debug"; "" for the others
  bool operator==(const ProvenanceCall&) const = default;
};

struct CallTable {
  uint32_t audit_arch = 0;
  std::vector<ProvenanceCall> calls;  // sorted by number
  bool operator==(const CallTable&) const = default;
};

struct Provenance {
  std::vector<ProvenanceSource> sources;  // in cascade order
  std::vector<ProvenanceEntry> entries;   // per document, in the order written
  std::vector<ProvenanceCall> calls;      // x86_64's, sorted by number
  // The call-tables section's: the plan's other targets, ascending
  // audit_arch, none kProvenanceCallsArch. Empty in plans without it.
  std::vector<CallTable> other_calls;
  bool operator==(const Provenance&) const = default;
};

// Call `number` of `audit_arch` in the provenance's tables; nullptr where
// the plan has no table of that architecture or the table no such call.
const ProvenanceCall* find_call(const Provenance& provenance, uint32_t audit_arch, int number);
// The architectures whose calls the provenance names, in table order.
std::vector<uint32_t> call_table_arches(const Provenance& provenance);

// A file pinned by content (filesystem.pinned): the launcher re-hashes it
// through the descriptor it opens and refuses the launch when it changed.
struct PinnedFile {
  std::string path;  // absolute: a pin is hashed at compile time, so no launch-time variable
  uint64_t size = 0;
  Sha256Digest sha256{};
  bool operator==(const PinnedFile&) const = default;
};

struct Plan {
  std::vector<std::pair<std::string, std::string>> meta;  // sorted by key
  std::optional<LandlockRuleset> landlock;
  std::optional<ProcessSettings> process;
  std::optional<FilesystemView> view;
  std::vector<SeccompProgram> seccomp;  // by audit_arch; per arch in install order, the main program last
  std::vector<SyscallEntry> syscalls;   // sorted by name
  std::optional<Provenance> provenance;  // absent in plans of older compilers
  std::vector<PinnedFile> pinned;        // sorted by path, unique; no section when empty
  std::optional<Bwrap> bwrap;            // --backend bwrap: the launcher runs the command under bwrap
  std::vector<Lowering> lowerings;       // several backends' (in the order to try); none: the plan is its one lowering
  std::optional<Egress> egress;          // network.outbound.hosts: brokered
  bool operator==(const Plan&) const = default;
};

// The plan as `lowering` runs it, which is the plan compiled for that backend
// alone: its meta added, and for bwrap the bwrap section in place of what
// bwrap does itself (the Landlock ruleset, which cannot be stacked under
// bwrap since a Landlock-restricted process may not mount; the view; the
// process section's namespaces and kept capabilities). The lowerings list
// goes. The compiler makes a one-backend bwrap plan with it too, so the two
// cannot differ.
void apply_lowering(Plan& plan, const Lowering& lowering);

// The process section's namespaces and kept capabilities; none without one.
inline uint32_t namespaces_of(const Plan& plan) { return plan.process ? plan.process->namespaces : 0; }
inline uint64_t kept_capabilities_of(const Plan& plan) { return plan.process ? plan.process->kept_capabilities : 0; }
// The meta value of `key`, "" where the plan has none.
inline std::string meta_value(const Plan& plan, std::string_view key) {
  for (const auto& [k, value] : plan.meta)
    if (k == key) return value;
  return "";
}
// The backend a plan of one backend runs under: its meta's `backend`, or
// native, which a native plan does not write.
inline constexpr const char* kNativeBackend = "native";
inline std::string backend_of(const Plan& plan) {
  const std::string backend = meta_value(plan, "backend");
  return backend.empty() ? kNativeBackend : backend;
}
// Whether a launch of the plan makes a run cgroup (memory, tasks or CPU of the whole tree).
inline bool has_tree_limits(const Plan& plan) { return plan.process && plan.process->has_tree_limits(); }

// Whether the plan confines any filesystem verb, and which verbs it leaves
// unconstrained while it does (docs/policy-language.md: a verb no document
// constrains is stated by show, explain and --dry-run).
bool confines_filesystem(const Plan& plan);
std::vector<ControlDomain> unconstrained_filesystem_verbs(const Plan& plan);

// Whether `plan` fits the format: every string, list and program within the
// limits of format.h, and nothing the reader would refuse for its order.
Status check_encodable(const Plan& plan);

// Canonical bytes of a plan, digest trailer included. Same plan, same bytes.
// Precondition: check_encodable(plan) succeeded.
std::vector<uint8_t> encode_plan(const Plan& plan);

// Verifies (limits, magic, version, size, digest, section table) and decodes.
// kDeferProvenance leaves the provenance section unread (it is laid out and
// digested like the rest): a launch needs it only to explain a denial, so
// it does not pay for decoding it before the command runs.
enum class Decode { kAll, kDeferProvenance };
Result<Plan> decode_plan(std::span<const uint8_t> bytes, Decode what = Decode::kAll);

// Reads a plan file with the size limit applied before the read.
Result<std::vector<uint8_t>> read_plan_file(const std::string& path);

// The SHA-256 trailer of an encoded plan (its identity).
Sha256Digest plan_digest(std::span<const uint8_t> bytes);

// The identity as text, the one spelling every tool prints: "sha256:" and the
// trailer's 64 lowercase hex digits. It is the trailer, not `sha256sum plan.bin`
// (which also hashes the trailer itself): docs/plan-format.md.
inline constexpr std::string_view kDigestPrefix = "sha256:";
std::string plan_identity(std::span<const uint8_t> bytes);
std::string identity_text(const Sha256Digest& digest);
// A pin as every report prints it, one line: "PATH sha256:HEX, N bytes".
std::string pinned_text(const PinnedFile& file);
// A bwrap argument as aasmc show prints it: a template as written
// ("${CWD}/out"), what a launch-time marker stands for in angle brackets.
std::string bwrap_arg_text(const BwrapArg& arg);
// An identity as a user writes it: 64 hex digits in either case, with or
// without the "sha256:" prefix. The error says what is wrong with it.
Result<Sha256Digest> parse_digest_text(std::string_view text);

const SeccompProgram* find_program(const Plan& plan, uint32_t audit_arch);  // the main (allowlist/denylist) one
// Every program for `audit_arch`, in install order.
std::vector<const SeccompProgram*> programs_for(const Plan& plan, uint32_t audit_arch);
const char* audit_arch_name(uint32_t audit_arch);

}  // namespace aasm::plan
