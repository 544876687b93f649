#include "import/import_policy.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/SourceMgr.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "frontend/json_tree.h"
#include "frontend/parse_policy.h"

namespace aasmc {

const char* import_outcome_name(ImportOutcome outcome) {
  switch (outcome) {
    case ImportOutcome::kCarried: return "carried";
    case ImportOutcome::kTightened: return "tightened";
    case ImportOutcome::kNotExpressible: return "not-expressible";
  }
  return "?";
}

std::string yaml_quoted(llvm::StringRef text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          out += "\\x" + llvm::utohexstr(static_cast<unsigned char>(c), /*LowerCase=*/true, /*Width=*/2);
        else
          out += c;
    }
  }
  return out + "\"";
}

std::string policy_name_for(llvm::StringRef input_path) {
  std::string name;
  for (const char c : llvm::sys::path::stem(input_path)) {
    const char lower = llvm::toLower(c);
    const bool allowed = llvm::isAlnum(lower) || lower == '.' || lower == '_' || lower == '-';
    name += allowed ? lower : '-';
  }
  // The first character must be a letter or digit.
  name.erase(0, std::min(name.size(), name.find_first_not_of("._-")));
  name.resize(std::min<size_t>(name.size(), 253));
  return is_policy_name(name) ? name : "imported";
}

std::string imported_policy_document(const ImportedPolicy& policy, const std::string& name, const std::string& input,
                                     const std::string& format, const llvm::SourceMgr& sources) {
  std::string out = "# Imported by `aasmc import --from " + format + "` from " + input + ". What became of each element\n";
  out += "# of it (docs/import.md):\n";
  for (const ImportNote& note : policy.notes) {
    const auto [line, column] = sources.getLineAndColumn(note.at);
    std::string text = "#   " + input + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                       note.element + ": " + import_outcome_name(note.outcome) + ": " + note.detail;
    std::replace(text.begin(), text.end(), '\n', ' ');
    out += text + "\n";
  }
  if (policy.targets.size() < all_targets().size()) {
    std::string archs;
    for (const Target& target : policy.targets) archs += std::string(archs.empty() ? "" : ",") + target.name;
    out += "# It names calls of " + archs + " only: compile it with --arch " + archs + ".\n";
  }
  out += "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata:\n";
  out += "  name: " + yaml_quoted(name) + "\n  tier: agent\n";
  out += "  description: " + yaml_quoted("imported from " + llvm::sys::path::filename(input).str() + " (" + format + ")") + "\n";
  out += "spec:";
  out += policy.spec.empty() ? " {}\n" : "\n";
  for (const std::string& line : policy.spec) out += line + "\n";
  return out;
}

namespace json_input {

namespace {

bool wrong_type(const YamlNode& node, const std::string& where, const char* wanted, Diagnostics& diags) {
  diags.error(node.loc, where + " must be " + wanted + ", not " + type_name(node), diag::kWrongType, node.range());
  return false;
}

}  // namespace

const char* type_name(const YamlNode& node) {
  switch (node.kind) {
    case YamlNode::Kind::kNull: return "null";
    case YamlNode::Kind::kSequence: return "an array";
    case YamlNode::Kind::kMap: return "an object";
    case YamlNode::Kind::kScalar: break;
  }
  if (is_json_string(node)) return "a string";
  return is_json_bool(node) ? "a boolean" : "a number";
}

bool expect_object(const YamlNode& node, const std::string& where, Diagnostics& diags) {
  return node.kind == YamlNode::Kind::kMap || wrong_type(node, where, "an object", diags);
}

bool expect_array(const YamlNode& node, const std::string& where, Diagnostics& diags) {
  return node.kind == YamlNode::Kind::kSequence || wrong_type(node, where, "an array", diags);
}

std::optional<std::string> string_value(const YamlNode& node, const std::string& where, Diagnostics& diags) {
  if (!is_json_string(node)) return wrong_type(node, where, "a string", diags), std::nullopt;
  return node.scalar;
}

std::optional<bool> bool_value(const YamlNode& node, const std::string& where, Diagnostics& diags) {
  if (!is_json_bool(node)) return wrong_type(node, where, "true or false", diags), std::nullopt;
  return node.scalar == "true";
}

std::optional<uint64_t> unsigned_value(const YamlNode& node, const std::string& where, uint64_t max,
                                       Diagnostics& diags) {
  if (!is_json_number(node)) return wrong_type(node, where, "a number", diags), std::nullopt;
  uint64_t value = 0;
  const bool whole = llvm::all_of(node.scalar, llvm::isDigit);
  if (!whole || llvm::StringRef(node.scalar).getAsInteger(10, value) || value > max) {
    diags.error(node.loc,
                where + " is " + node.scalar + ", not a whole number from 0 to " + std::to_string(max),
                diag::kBadValue, node.range());
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<std::pair<std::string, const YamlNode*>>> string_list(const YamlNode& node,
                                                                               const std::string& where,
                                                                               Diagnostics& diags) {
  if (!expect_array(node, where, diags)) return std::nullopt;
  std::vector<std::pair<std::string, const YamlNode*>> out;
  bool ok = true;
  for (size_t i = 0; i < node.items.size(); ++i) {
    auto text = string_value(node.items[i], where + "[" + std::to_string(i) + "]", diags);
    if (text) out.emplace_back(*text, &node.items[i]);
    ok = ok && text;
  }
  if (!ok) return std::nullopt;
  return out;
}

bool check_keys(const YamlNode& object, llvm::ArrayRef<llvm::StringRef> known, const std::string& where,
                Diagnostics& diags) {
  bool ok = true;
  for (const YamlEntry& entry : object.entries) {
    if (std::find(known.begin(), known.end(), entry.key.scalar) != known.end()) continue;
    std::string message = "unknown key '" + entry.key.scalar + "' in " + where;
    if (auto guess = closest_match(entry.key.scalar, known); !guess.empty()) message += "; did you mean '" + guess + "'?";
    diags.error(entry.key.loc, message, diag::kUnknownKey, entry.key.range());
    ok = false;
  }
  return ok;
}

const YamlNode* member(const YamlNode& object, llvm::StringRef key) {
  for (const YamlEntry& entry : object.entries)
    if (entry.key.scalar == key) return entry.value.kind == YamlNode::Kind::kNull ? nullptr : &entry.value;
  return nullptr;
}

const YamlNode* required_member(const YamlNode& object, llvm::StringRef key, const std::string& where,
                                Diagnostics& diags) {
  if (const YamlNode* found = member(object, key)) return found;
  diags.error(object.loc, where + " has no '" + key.str() + "', which the format requires", diag::kMissingKey);
  return nullptr;
}

}  // namespace json_input

}  // namespace aasmc
