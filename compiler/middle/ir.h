// The backend-neutral IR between the front-end and the lowerings: the merged
// policy (the meet of the cascade), per domain, every value remembering the
// document and token it came from. `aasmc explain` prints it with provenance;
// `aasmc compile --print-ir` prints it bare.
#pragma once

#include <llvm/Support/SourceMgr.h>
#include <nlohmann/json_fwd.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "crypto/sha256.h"
#include "frontend/ast.h"
#include "middle/condition_normalize.h"
#include "tables/targets.h"

namespace aasmc {

struct SourceDocument {
  std::string name;
  Tier tier;
  std::string file;       // as given
  std::string file_name;  // last component (what plans record)
  aasm::Sha256Digest file_digest;
};

// A merged value: where it came from, and the broader values it shrank.
template <typename T>
struct Effective {
  T value;
  SourceRef from;
  std::vector<SourceRef> narrowed;  // broader settings this one overrode
};

struct PathGrant {
  PathTemplate path;
  bool optional = false;
  SourceRef from;                         // the entry that produced it (the narrowest)
  std::optional<SourceRef> narrowed;      // a broader grant it was cut from
  bool from_write = false;                // a read grant because the tree may be written
  auto operator<=>(const PathGrant& other) const { return path <=> other.path; }
  bool operator==(const PathGrant& other) const { return path == other.path; }
};

// A verb present in the IR is confined: only `allow` is permitted. An absent
// verb is unconstrained.
struct FilesystemIR {
  std::optional<std::vector<PathGrant>> read, write, execute;
  // Protected subtrees (filesystem.readonly): the union of every document's;
  // only the filesystem view enforces them.
  std::vector<PathGrant> readonly;
  // Files pinned by content (filesystem.pinned): the union of every
  // document's, sorted by path, each from the broadest document naming it.
  std::vector<PathGrant> pinned;
  // ${CWD}/${HOME} may resolve to a system root at launch: false wins.
  std::optional<Effective<bool>> templates_may_resolve_to_system_roots;
  bool empty() const { return !read && !write && !execute; }
  bool system_root_templates_allowed() const {
    return templates_may_resolve_to_system_roots && templates_may_resolve_to_system_roots->value;
  }
};

// One direction (outbound or bind). `none` wins the merge; allow-lists and
// host lists each intersect. Absent lists do not constrain.
struct NetworkRuleIR {
  bool none = false;
  std::optional<std::map<uint16_t, SourceRef>> tcp_ports;  // only these TCP ports
  std::optional<SourceRef> udp;                           // with tcp_ports: datagram sockets permitted
  // Host names, brokered (docs/egress.md): patterns in their canonical
  // spelling (plan/host_pattern.h). `brokered`: the first `hosts` written.
  std::optional<SourceRef> brokered;
  std::optional<std::map<std::string, SourceRef>> hosts;  // only these; none written: every name
  std::map<std::string, SourceRef> hosts_denied;          // refused whatever allows them
  SourceRef from;                                         // the setting that decided `none`
};

struct NetworkIR {
  std::optional<NetworkRuleIR> outbound, bind;
};

// Pathname unix sockets. `deny` wins the merge; allow-lists intersect like
// filesystem ones. Absent from every document, it defaults to deny when the
// filesystem is confined (implied): Landlock up to ABI 8 has no right for
// connecting to a socket file, so the filesystem rules do not cover it.
struct UnixSocketsIR {
  bool deny = false;
  std::optional<std::vector<PathGrant>> allow;  // when !deny
  SourceRef from;                               // the setting that decided deny; none for the default
  // The default, which no document wrote.
  bool implied() const { return deny && from.document < 0; }
  // An allow-list with `/` needs no mechanism at all.
  bool unrestricted() const;
};

struct IpcIR {
  std::optional<Effective<bool>> abstract_unix_sockets_denied, signals_denied;
  std::optional<UnixSocketsIR> unix_sockets;
};

struct SyscallRuleIR {
  std::string syscall;
  std::optional<Located<std::string>> when_text;
  std::optional<ConditionExpr> when;
  Action action;
  SourceRef from;
  // The condition in libseccomp's normal form, per target name (constants and
  // argument widths differ by architecture). Absent `when`: always true.
  std::map<std::string, NormalizedCondition> normalized;
  std::string safe_default;  // the deny set of a safe default this rule carries; empty for the policy's rules
  // Installed only where a Landlock control with a seccomp fallback
  // degrades (the plan's fallback programs).
  bool fallback = false;
};

struct SyscallEntryIR {
  enum class Origin { kPolicy, kStartup };  // the start-up set: added to every allowlist
  Origin origin = Origin::kPolicy;
  SourceRef from;
};

// A safe default the plan carries (docs/policy-language.md): a deny set refused
// with an errno whatever the policy's filter mode, and the calls the policy
// opted out of it (named in an allow list, or given an `allow` rule).
struct SafeDefaultIR {
  std::string group;  // without '@'
  Action action;
  std::map<std::string, SourceRef> allowed_by_policy;
};

// One document's allow list, groups expanded: a call outside it is refused
// whatever the others allow (the meet), which the denial report names.
struct DocumentAllowlist {
  SourceRef node;                          // the document's `syscalls` node
  std::map<std::string, SourceRef> names;  // each with the entry (name or @group) that allowed it
};

struct SyscallIR {
  enum class Mode { kAllowlist, kDenylist };
  Mode mode = Mode::kAllowlist;
  Effective<Action> default_action;             // allowlist: for calls not allowed
  std::map<std::string, SyscallEntryIR> allowed;  // allowlist mode
  std::map<std::string, SourceRef> denied;        // both modes: always refused
  std::vector<DocumentAllowlist> allowlists;      // per allowlist document, in cascade order
  std::vector<SyscallRuleIR> rules;
  // Allowlist calls that `allow` rules permit only for some arguments: per
  // syscall, per target, the condition under which the call is allowed.
  std::map<std::string, std::map<std::string, NormalizedCondition>> conditionally_allowed;
  std::vector<SafeDefaultIR> safe_defaults;
  // Deny-group members left out because they cannot raise privilege here
  // (the uid/gid calls without CAP_SETUID/CAP_SETGID kept), with why.
  std::map<std::string, std::string> left_out_of_deny;
};

struct ResourcesIR {
  std::optional<Effective<uint64_t>> memory, swap, pids, cpu_millicores, wall_clock_seconds, stdout_bytes,
      stderr_bytes, open_files, file_size, tmp_size;
  bool empty() const;
};

struct EnvironmentIR {
  std::optional<std::map<std::string, SourceRef>> pass;  // names and prefixes*
  std::map<std::string, Effective<std::string>> set;
  bool empty() const { return !pass && set.empty(); }
};

struct IsolationIR {
  std::map<std::string, SourceRef> namespaces;
  std::optional<std::map<std::string, SourceRef>> linux_capabilities;  // kept; absent: none kept
  std::optional<std::map<Domain, SourceRef>> degraded;                 // may run weaker
  std::optional<Effective<bool>> filesystem_view;                      // true wins
  bool namespaces_for_the_view_alone = false;  // its mount and PID namespaces: no document asks for either
  bool view() const { return filesystem_view && filesystem_view->value; }
};

struct PolicyIR {
  std::vector<SourceDocument> sources;
  std::vector<Target> targets;
  std::map<Domain, SourceRef> capabilities_denied;
  FilesystemIR filesystem;
  NetworkIR network;
  IpcIR ipc;
  std::optional<SyscallIR> syscalls;
  ResourcesIR resources;
  EnvironmentIR environment;
  IsolationIR isolation;

  bool degraded_allowed(Domain domain) const { return isolation.degraded && isolation.degraded->count(domain); }
};

// Bare IR (what the backends see).
std::string print_ir(const PolicyIR& ir);
// The IR with, for every value, the document, tier, file:line:col it came
// from, and the broader values it narrowed (`aasmc explain`).
std::string explain_ir(const PolicyIR& ir, const llvm::SourceMgr& sources);
// The same as one JSON document (schemas/explain.schema.json): the sources,
// the targets, and each line of the text with its origins as fields.
nlohmann::ordered_json explain_ir_json(const PolicyIR& ir, const llvm::SourceMgr& sources);

}  // namespace aasmc
