// `aasmc import`: a policy users already have (a sandbox-runtime settings
// file, an OCI/moby seccomp profile; both JSON, frontend/json_tree.h) turned
// into an aasm policy document, with what became of every element of the
// input: carried, tightened (how), or not expressible (why). Nothing is
// dropped without a note. docs/import.md has the mapping of each format.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/yaml_tree.h"
#include "support/diagnostics.h"
#include "tables/targets.h"

namespace aasmc {

enum class ImportOutcome { kCarried, kTightened, kNotExpressible };
const char* import_outcome_name(ImportOutcome outcome);  // "carried", "tightened", "not-expressible"

struct ImportNote {
  llvm::SMLoc at;       // the element in the input
  std::string element;  // its path in the input: "syscalls[3]", "network.allowedDomains"
  ImportOutcome outcome;
  std::string detail;   // what the policy does with it, and why
};

// What an importer makes: the lines under `spec:` and the notes.
struct ImportedPolicy {
  std::vector<std::string> spec;  // each line as written, its indentation included
  std::vector<ImportNote> notes;
  std::vector<Target> targets;    // the policy names calls that exist on these (compile with --arch when fewer)

  void note(const YamlNode& at, std::string element, ImportOutcome outcome, std::string detail) {
    notes.push_back({at.loc, std::move(element), outcome, std::move(detail)});
  }
};

// `targets`: those the policy is for (`aasmc import --arch`); the OCI import
// narrows them to the profile's architectures. nullopt with the errors in
// `diags` when the input is not a profile or settings file of its kind.
std::optional<ImportedPolicy> import_oci_profile(const YamlNode& root, const std::vector<Target>& targets,
                                                 Diagnostics& diags);
std::optional<ImportedPolicy> import_srt_settings(const YamlNode& root, const std::vector<Target>& targets,
                                                  Diagnostics& diags);

// The policy document: a comment block with every note (at file:line:col),
// then apiVersion, kind, metadata (`name`, tier agent, a description naming
// the input) and spec.
std::string imported_policy_document(const ImportedPolicy& policy, const std::string& name, const std::string& input,
                                     const std::string& format, const llvm::SourceMgr& sources);

// A policy name ([a-z0-9][a-z0-9._-]*) from an input file's name.
std::string policy_name_for(llvm::StringRef input_path);

// A YAML double-quoted scalar holding `text` exactly (JSON's escapes, which
// YAML's double quotes read the same).
std::string yaml_quoted(llvm::StringRef text);

// Reading the JSON tree: each check reports its fault once, at the node, as
// `where` (the element's path) says; the importers share them.
namespace json_input {

const char* type_name(const YamlNode& node);  // "a string", "a number", "a boolean", "null", "an array", "an object"
bool expect_object(const YamlNode& node, const std::string& where, Diagnostics& diags);
bool expect_array(const YamlNode& node, const std::string& where, Diagnostics& diags);
std::optional<std::string> string_value(const YamlNode& node, const std::string& where, Diagnostics& diags);
std::optional<bool> bool_value(const YamlNode& node, const std::string& where, Diagnostics& diags);
// A whole number 0..max: no sign, fraction or exponent (a profile's values are uint64).
std::optional<uint64_t> unsigned_value(const YamlNode& node, const std::string& where, uint64_t max, Diagnostics& diags);
std::optional<std::vector<std::pair<std::string, const YamlNode*>>> string_list(const YamlNode& node,
                                                                               const std::string& where,
                                                                               Diagnostics& diags);
// Each key of `object` must be one of `known` (AASM0010, with a guess).
bool check_keys(const YamlNode& object, llvm::ArrayRef<llvm::StringRef> known, const std::string& where,
                Diagnostics& diags);
// The member `key`; nullptr when absent or null (Go, which writes OCI
// profiles, writes a nil list as null).
const YamlNode* member(const YamlNode& object, llvm::StringRef key);
// A required member: missing is AASM0013 at the object.
const YamlNode* required_member(const YamlNode& object, llvm::StringRef key, const std::string& where,
                                Diagnostics& diags);

}  // namespace json_input

}  // namespace aasmc
