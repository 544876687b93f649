// YAML tree -> PolicyDocument. Checks the document shape: keys, types,
// enum values, paths, action syntax. Name resolution happens later.
#pragma once

#include <llvm/Support/MemoryBuffer.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast.h"
#include "frontend/yaml_tree.h"
#include "support/diagnostics.h"

namespace aasmc {

// Loads every document of `path` into the SourceMgr and parses it.
// Returns false when the file could not be read.
bool load_policy_file(const std::string& path, Diagnostics& diags, std::vector<PolicyDocument>& out);

// The order the compiler loads its files in, whatever the command line's, so
// that a reordering that keeps the meaning keeps the plan's bytes: by the
// broadest tier among a file's documents, then its documents' names, then its
// content (SHA-256), then the path as given. The merge orders documents by
// tier anyway (the meet does not depend on the order); within a tier this
// fixes which document a value is attributed to and the provenance's order.
// When a file cannot be read or has a front-end error, the order given is
// kept: that cascade compiles to nothing, and its diagnostics then come in
// the order the files were written.
std::vector<std::string> canonical_input_order(const std::vector<std::string>& paths);

// The same for bytes already in memory (the buffer must be NUL-terminated,
// as MemoryBuffer::getFile and getMemBufferCopy make it); its identifier is
// the file name the diagnostics show.
void load_policy_buffer(std::unique_ptr<llvm::MemoryBuffer> buffer, Diagnostics& diags,
                        std::vector<PolicyDocument>& out);

// metadata.name's form: [a-z0-9][a-z0-9._-]*, at most 253 bytes.
bool is_policy_name(const std::string& name);

std::optional<PolicyDocument> parse_policy_document(const YamlDocument& yaml, Diagnostics& diags);

// Parses `kill`, `log`, `allow` (when permitted) and `errno:ENAME`.
std::optional<Action> parse_action(const std::string& text, bool allow_permitted, std::string& error);

}  // namespace aasmc
