// The typed policy AST: one node per policy node (docs/policy-language.md),
// each keeping its source location, each document keeping its tier and file.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "crypto/sha256.h"
#include "frontend/condition.h"
#include "frontend/paths.h"

namespace aasmc {

enum class Tier { kOrg, kTeam, kAgent, kRun };  // broad -> narrow
const char* tier_name(Tier tier);

// The `capabilities.deny` and `isolation.degraded` vocabulary: the domains
// of the one table the launcher reports in too (plan/controls.def), in its
// order. The compiler's own enum, so the AST names no plan type.
enum class Domain {
#define AASM_DOMAIN(id, name) id,
#include "plan/controls.def"
};
const char* domain_name(Domain domain);
std::optional<Domain> find_domain(llvm::StringRef name);
std::vector<llvm::StringRef> domain_names();

// A syscall action: what a filter returns. Ordered by strictness.
struct Action {
  enum class Kind { kAllow, kLog, kErrno, kKill };
  Kind kind = Kind::kKill;
  int errno_value = 0;  // kErrno
  std::string text() const;
  // kill > errno > log > allow
  int strictness() const { return int(kind); }
  bool operator==(const Action&) const = default;
};

// Where a value was written: the document (index in the cascade) and the token.
struct SourceRef {
  llvm::SMLoc loc;
  llvm::SMRange range;
  int document = -1;
};

template <typename T>
struct Located {
  T value;
  SourceRef source;
};

struct PathEntry {
  PathTemplate path;
  SourceRef source;
};

struct PathAllowList {
  SourceRef source;  // the `allow` key's value
  std::vector<PathEntry> allow;
};

struct FilesystemNode {
  std::optional<PathAllowList> read, write, execute;
  std::optional<std::vector<PathEntry>> optional;
  std::optional<Located<bool>> templates_may_resolve_to_system_roots;
  std::optional<std::vector<PathEntry>> readonly;  // protected subtrees of writable trees (the filesystem view)
  std::optional<std::vector<PathEntry>> pinned;    // files pinned by content (absolute paths only)
};

struct NameEntry {
  std::string name;  // a syscall name, "@group", a variable, a host...
  SourceRef source;
};

struct SyscallRule {
  NameEntry syscall;
  std::optional<Located<std::string>> when_text;  // as written
  std::optional<ConditionExpr> when;              // parsed
  Located<Action> action;
};

struct SyscallsNode {
  SourceRef source;
  std::optional<Located<Action>> default_action;
  std::optional<std::vector<NameEntry>> allow;
  std::optional<std::vector<NameEntry>> deny;
  std::vector<SyscallRule> rules;
};

struct PortEntry {
  enum class Protocol { kTcp, kUdp };
  Protocol protocol = Protocol::kTcp;
  uint16_t port = 0;  // kTcp only
  SourceRef source;
};

// `none`, `{allow: [...]}` or `{hosts: ...}` (outbound only): host patterns
// (plan/host_pattern.h) as `{allow: [...], deny: [...]}`, or a list, which
// is its allow-list. Names are kept as written; the merge reads them.
struct NetworkRule {
  enum class Kind { kNone, kAllow, kHosts };
  Kind kind = Kind::kNone;
  std::vector<PortEntry> allow;
  std::optional<std::vector<NameEntry>> hosts;  // kHosts: the patterns allowed; none written: every name
  std::vector<NameEntry> hosts_deny;            // kHosts: refused whatever allows them
  SourceRef source;
};

struct NetworkNode {
  std::optional<NetworkRule> outbound, bind;
};

// `unix_sockets: deny`, or `{allow: [paths]}`: the pathname unix sockets
// the command may connect or send to.
struct UnixSocketsNode {
  bool deny = false;
  std::vector<PathEntry> allow;  // when !deny
  SourceRef source;
};

struct IpcNode {
  std::optional<Located<bool>> abstract_unix_sockets_denied;
  std::optional<Located<bool>> signals_denied;
  std::optional<UnixSocketsNode> unix_sockets;
};

struct ResourcesNode {
  std::optional<Located<uint64_t>> memory, swap, pids, cpu_millicores, wall_clock_seconds, stdout_bytes,
      stderr_bytes, open_files, file_size, tmp_size;
};

struct EnvironmentNode {
  std::optional<std::vector<NameEntry>> pass;  // names, or prefixes ending in '*'
  std::optional<std::vector<std::pair<NameEntry, NameEntry>>> set;  // name, value
};

struct IsolationNode {
  std::optional<std::vector<NameEntry>> namespaces;
  std::optional<std::vector<NameEntry>> linux_capabilities;
  std::optional<std::vector<Located<Domain>>> degraded;
  std::optional<Located<bool>> filesystem_view;
};

struct PolicyDocument {
  std::string file;       // as given on the command line
  std::string file_name;  // its last component, recorded in plans
  aasm::Sha256Digest file_digest{};
  unsigned index_in_file = 0;
  llvm::SMLoc start;
  std::string name;
  Tier tier = Tier::kAgent;
  bool has_errors = false;  // some node was refused; the rest is kept
  std::optional<std::vector<Located<Domain>>> capabilities_deny;
  std::optional<FilesystemNode> filesystem;
  std::optional<NetworkNode> network;
  std::optional<IpcNode> ipc;
  std::optional<SyscallsNode> syscalls;
  std::optional<ResourcesNode> resources;
  std::optional<EnvironmentNode> environment;
  std::optional<IsolationNode> isolation;
};

}  // namespace aasmc
