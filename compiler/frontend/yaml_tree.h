// Strict YAML loading: the bytes are parsed by yaml-cpp's event parser into a
// small tree whose every node keeps its SMLoc in the llvm::SourceMgr buffer.
// Anchors, aliases, tags and merge keys are rejected here, duplicate keys
// too, so later passes only see plain data.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <string>
#include <utility>
#include <vector>

#include "support/diagnostics.h"

namespace aasmc {

struct YamlEntry;

struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  llvm::SMLoc loc;
  std::string scalar;  // kScalar
  bool quoted = false; // kScalar written in quotes
  std::vector<YamlNode> items;                          // kSequence
  std::vector<YamlEntry> entries;  // kMap

  llvm::SMRange range() const;  // the scalar's extent; just `loc` otherwise
  const char* kind_name() const;
};

struct YamlEntry {
  YamlNode key;
  YamlNode value;
};

struct YamlDocument {
  unsigned buffer = 0;
  llvm::SMLoc start;
  YamlNode root;
};

inline constexpr size_t kMaxPolicyFileBytes = 1u << 20;
inline constexpr unsigned kMaxNestingDepth = 32;

// Policies, and the JSON `aasmc import` reads, are UTF-8 text of at most
// kMaxPolicyFileBytes: NUL and malformed sequences are refused up front,
// pointing at the first bad byte. `what` names the file in the message
// ("policy file").
bool check_policy_text(unsigned buffer, Diagnostics& diags, const char* what);

// Parses every document of one SourceMgr buffer. Errors go to `diags`; a
// document with an error is not returned.
std::vector<YamlDocument> load_yaml_documents(unsigned buffer, Diagnostics& diags);

}  // namespace aasmc
