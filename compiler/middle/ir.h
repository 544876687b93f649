// The backend-neutral IR between the front-end and the lowerings: what the
// merged policy requires, per domain, with where each value came from.
// `aasmc compile --print-ir` prints it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "crypto/sha256.h"
#include "frontend/ast.h"
#include "middle/targets.h"
#include "plan/plan.h"

namespace aasmc {

struct SourceDocument {
  std::string name;
  Tier tier;
  std::string file_name;
  aasm::Sha256Digest file_digest;
};

struct PathGrant {
  PathTemplate path;
  bool optional = false;
  SourceRef from;  // the entry that produced it (the narrowest)
  auto operator<=>(const PathGrant& other) const { return path <=> other.path; }
  bool operator==(const PathGrant& other) const { return path == other.path; }
};

// A verb present in the IR is confined: only `allow` is permitted. An absent
// verb is unconstrained.
struct FilesystemIR {
  std::optional<std::vector<PathGrant>> read, write, execute;
  bool empty() const { return !read && !write && !execute; }
};

struct SyscallIR {
  Action default_action;
  std::map<std::string, aasm::plan::SyscallOrigin> allowed;  // sorted by name
};

struct PolicyIR {
  std::vector<SourceDocument> sources;
  std::vector<Target> targets;
  FilesystemIR filesystem;
  std::optional<SyscallIR> syscalls;
};

std::string print_ir(const PolicyIR& ir);

}  // namespace aasmc
