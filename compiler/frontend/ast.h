// The typed policy AST: one node per policy node, each keeping its source
// location, each document keeping its tier and file.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <optional>
#include <string>
#include <vector>

#include "crypto/sha256.h"
#include "frontend/paths.h"

namespace aasmc {

enum class Tier { kOrg, kTeam, kAgent, kRun };  // broad -> narrow
const char* tier_name(Tier tier);

// A syscall action: what a filter returns. Ordered by strictness.
struct Action {
  enum class Kind { kAllow, kLog, kErrno, kKill };
  Kind kind = Kind::kKill;
  int errno_value = 0;  // kErrno
  std::string text() const;
  // kill > errno > log > allow
  int strictness() const { return int(kind); }
};

struct SourceRef {
  llvm::SMLoc loc;
  llvm::SMRange range;
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
};

struct NameEntry {
  std::string name;  // a syscall name or "@group"
  SourceRef source;
};

struct SyscallsNode {
  SourceRef source;
  std::optional<Action> default_action;
  SourceRef default_source;
  std::optional<std::vector<NameEntry>> allow;
};

struct PolicyDocument {
  std::string file;       // as given on the command line
  std::string file_name;  // its last component, recorded in plans
  aasm::Sha256Digest file_digest{};
  unsigned index_in_file = 0;
  llvm::SMLoc start;
  std::string name;
  Tier tier = Tier::kAgent;
  std::optional<FilesystemNode> filesystem;
  std::optional<SyscallsNode> syscalls;
};

}  // namespace aasmc
