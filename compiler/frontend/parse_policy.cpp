#include "frontend/parse_policy.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <cerrno>
#include <cstring>

#include "support/errno_names.h"

namespace aasmc {
namespace {

using Kind = YamlNode::Kind;

bool is_valid_name(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!head(name[0])) return false;
  for (char c : name)
    if (!head(c) && c != '.' && c != '_' && c != '-') return false;
  return true;
}

class DocumentParser {
 public:
  explicit DocumentParser(Diagnostics& diags) : diags_(diags) {}

  std::optional<PolicyDocument> parse(const YamlDocument& yaml) {
    PolicyDocument doc;
    doc.start = yaml.start;
    const unsigned errors_before = diags_.error_count();
    if (!expect(yaml.root, Kind::kMap, "a policy document")) return std::nullopt;
    bool seen_api = false, seen_kind = false, seen_metadata = false, seen_spec = false;
    for_each_key(yaml.root, {"apiVersion", "kind", "metadata", "spec"}, "a policy document",
                 [&](const std::string& key, const YamlNode& value) {
                   if (key == "apiVersion") seen_api = true, expect_literal(value, "apiVersion", "aasm.dev/v1");
                   if (key == "kind") seen_kind = true, expect_literal(value, "kind", "Policy");
                   if (key == "metadata") seen_metadata = true, parse_metadata(value, doc);
                   if (key == "spec") seen_spec = true, parse_spec(value, doc);
                 });
    require(seen_api, yaml.root, "apiVersion");
    require(seen_kind, yaml.root, "kind");
    require(seen_metadata, yaml.root, "metadata");
    require(seen_spec, yaml.root, "spec");
    if (diags_.error_count() != errors_before) return std::nullopt;
    return doc;
  }

 private:
  bool expect(const YamlNode& node, Kind kind, const std::string& what) {
    if (node.kind == kind) return true;
    const char* wanted = kind == Kind::kMap ? "a mapping" : kind == Kind::kSequence ? "a list" : "a scalar";
    diags_.error(node.loc, what + " must be " + wanted + ", not " + node.kind_name(), diag::kWrongType, node.range());
    return false;
  }

  void require(bool seen, const YamlNode& map, const std::string& key) {
    if (!seen) diags_.error(map.loc, "missing required key '" + key + "'", diag::kMissingKey);
  }

  template <typename OnKey>
  void for_each_key(const YamlNode& map, std::initializer_list<llvm::StringRef> known, const std::string& where,
                    OnKey&& on_key) {
    for (const auto& [key, value] : map.entries) {
      if (!expect(key, Kind::kScalar, "a key in " + where)) continue;
      if (std::find(known.begin(), known.end(), key.scalar) == known.end()) {
        std::string message = "unknown key '" + key.scalar + "' in " + where;
        const std::string guess = closest_match(key.scalar, known);
        if (!guess.empty()) message += "; did you mean '" + guess + "'?";
        diags_.error(key.loc, message, diag::kUnknownKey, key.range());
        continue;
      }
      on_key(key.scalar, value);
    }
  }

  std::optional<std::string> scalar(const YamlNode& node, const std::string& what) {
    if (!expect(node, Kind::kScalar, what)) return std::nullopt;
    return node.scalar;
  }

  void expect_literal(const YamlNode& node, const std::string& key, const std::string& wanted) {
    auto value = scalar(node, key);
    if (value && *value != wanted)
      diags_.error(node.loc, key + " must be '" + wanted + "', not '" + *value + "'", diag::kBadValue, node.range());
  }

  void parse_metadata(const YamlNode& node, PolicyDocument& doc) {
    if (!expect(node, Kind::kMap, "metadata")) return;
    bool seen_name = false, seen_tier = false;
    for_each_key(node, {"name", "tier", "description"}, "metadata", [&](const std::string& key, const YamlNode& value) {
      auto text = scalar(value, "metadata." + key);
      if (!text) return;
      if (key == "name") {
        seen_name = true;
        doc.name = *text;
        if (!is_valid_name(*text))
          diags_.error(value.loc, "metadata.name '" + *text + "' must match [a-z0-9][a-z0-9._-]*", diag::kBadValue,
                       value.range());
      } else if (key == "tier") {
        seen_tier = true;
        parse_tier(value, *text, doc);
      }
    });
    require(seen_name, node, "metadata.name");
    require(seen_tier, node, "metadata.tier");
  }

  void parse_tier(const YamlNode& node, const std::string& text, PolicyDocument& doc) {
    static const llvm::StringRef kTiers[] = {"org", "team", "agent", "run"};
    for (size_t i = 0; i < std::size(kTiers); ++i)
      if (text == kTiers[i]) {
        doc.tier = Tier(i);
        return;
      }
    std::string message = "unknown tier '" + text + "' (org, team, agent or run)";
    if (auto guess = closest_match(text, kTiers); !guess.empty()) message += "; did you mean '" + guess + "'?";
    diags_.error(node.loc, message, diag::kBadValue, node.range());
  }

  void parse_spec(const YamlNode& node, PolicyDocument& doc) {
    if (!expect(node, Kind::kMap, "spec")) return;
    for_each_key(node,
                 {"capabilities", "filesystem", "network", "ipc", "syscalls", "resources", "environment", "isolation"},
                 "spec", [&](const std::string& key, const YamlNode& value) {
                   if (key == "filesystem") doc.filesystem = parse_filesystem(value);
                   else if (key == "syscalls") doc.syscalls = parse_syscalls(value);
                   else not_supported(value, "spec." + key);
                 });
  }

  // Fail closed: a control this compiler cannot lower yet is refused, never
  // silently dropped from the plan.
  void not_supported(const YamlNode& node, const std::string& what) {
    diags_.error(node.loc, what + " is not supported by this version of aasmc yet; remove it to compile",
                 diag::kNotSupported);
  }

  std::optional<FilesystemNode> parse_filesystem(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.filesystem")) return std::nullopt;
    FilesystemNode fs;
    for_each_key(node, {"read", "write", "execute", "optional"}, "spec.filesystem",
                 [&](const std::string& key, const YamlNode& value) {
                   const std::string where = "spec.filesystem." + key;
                   if (key == "optional") {
                     fs.optional = parse_path_list(value, where);
                     return;
                   }
                   auto list = parse_allow_list(value, where);
                   if (key == "read") fs.read = std::move(list);
                   if (key == "write") fs.write = std::move(list);
                   if (key == "execute") fs.execute = std::move(list);
                 });
    return fs;
  }

  std::optional<PathAllowList> parse_allow_list(const YamlNode& node, const std::string& where) {
    if (!expect(node, Kind::kMap, where)) return std::nullopt;
    std::optional<PathAllowList> list;
    for_each_key(node, {"allow"}, where, [&](const std::string&, const YamlNode& value) {
      auto paths = parse_path_list(value, where + ".allow");
      if (paths) list = PathAllowList{{value.loc, value.range()}, std::move(*paths)};
    });
    if (!list && node.entries.empty()) require(false, node, "allow");
    return list;
  }

  std::optional<std::vector<PathEntry>> parse_path_list(const YamlNode& node, const std::string& where) {
    if (!expect(node, Kind::kSequence, where)) return std::nullopt;
    std::vector<PathEntry> entries;
    for (const YamlNode& item : node.items) {
      auto text = scalar(item, "an entry of " + where);
      if (!text) continue;
      PathError error;
      auto path = parse_path(*text, error);
      if (!path) {
        // Point inside the string; quoted scalars start one byte later.
        const char* at = item.loc.getPointer() + (item.quoted ? 1 : 0) + error.offset;
        diags_.error(llvm::SMLoc::getFromPointer(at), error.message, diag::kBadPath, item.range());
        continue;
      }
      entries.push_back({std::move(*path), {item.loc, item.range()}});
    }
    return entries;
  }

  std::optional<SyscallsNode> parse_syscalls(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.syscalls")) return std::nullopt;
    SyscallsNode syscalls;
    syscalls.source = {node.loc, {}};
    for_each_key(node, {"default", "allow", "deny", "rules"}, "spec.syscalls",
                 [&](const std::string& key, const YamlNode& value) {
                   if (key == "default") parse_default(value, syscalls);
                   else if (key == "allow") syscalls.allow = parse_names(value, "spec.syscalls.allow");
                   else not_supported(value, "spec.syscalls." + key);
                 });
    return syscalls;
  }

  void parse_default(const YamlNode& node, SyscallsNode& syscalls) {
    auto text = scalar(node, "spec.syscalls.default");
    if (!text) return;
    std::string error;
    auto action = parse_action(*text, false, error);
    if (!action) {
      diags_.error(node.loc, "spec.syscalls.default: " + error, diag::kBadAction, node.range());
      return;
    }
    syscalls.default_action = *action;
    syscalls.default_source = {node.loc, node.range()};
  }

  std::optional<std::vector<NameEntry>> parse_names(const YamlNode& node, const std::string& where) {
    if (!expect(node, Kind::kSequence, where)) return std::nullopt;
    std::vector<NameEntry> names;
    for (const YamlNode& item : node.items) {
      auto text = scalar(item, "an entry of " + where);
      if (text) names.push_back({*text, {item.loc, item.range()}});
    }
    return names;
  }

  Diagnostics& diags_;
};

}  // namespace

const char* tier_name(Tier tier) {
  switch (tier) {
    case Tier::kOrg: return "org";
    case Tier::kTeam: return "team";
    case Tier::kAgent: return "agent";
    case Tier::kRun: return "run";
  }
  return "?";
}

std::string Action::text() const {
  switch (kind) {
    case Kind::kAllow: return "allow";
    case Kind::kLog: return "log";
    case Kind::kKill: return "kill";
    case Kind::kErrno: return std::string("errno:") + errno_name(errno_value);
  }
  return "?";
}

std::optional<Action> parse_action(const std::string& text, bool allow_permitted, std::string& error) {
  if (text == "kill") return Action{Action::Kind::kKill, 0};
  if (text == "log") return Action{Action::Kind::kLog, 0};
  if (text == "allow" && allow_permitted) return Action{Action::Kind::kAllow, 0};
  if (text.starts_with("errno:")) {
    const std::string name = text.substr(6);
    if (const int value = errno_value(name); value > 0) return Action{Action::Kind::kErrno, value};
    error = "unknown errno name '" + name + "'";
    if (auto guess = closest_match(name, errno_names()); !guess.empty()) error += "; did you mean '" + guess + "'?";
    return std::nullopt;
  }
  error = "unknown action '" + text + "' (kill, log or errno:ENAME";
  error += allow_permitted ? ", or allow)" : ")";
  static const llvm::StringRef kActions[] = {"kill", "log", "allow"};
  if (auto guess = closest_match(text, kActions); !guess.empty() && (guess != "allow" || allow_permitted))
    error += "; did you mean '" + guess + "'?";
  return std::nullopt;
}

bool load_policy_file(const std::string& path, Diagnostics& diags, std::vector<PolicyDocument>& out) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/true);
  if (!buffer) {
    diags.file_error(path, "cannot read policy file: " + buffer.getError().message(), diag::kCannotRead);
    return false;
  }
  const llvm::StringRef text = (*buffer)->getBuffer();
  const aasm::Sha256Digest digest =
      aasm::sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  const unsigned id = diags.sources().AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  unsigned index = 0;
  for (const YamlDocument& yaml : load_yaml_documents(id, diags)) {
    auto doc = DocumentParser(diags).parse(yaml);
    if (!doc) continue;
    doc->file = path;
    doc->file_name = llvm::sys::path::filename(path).str();
    doc->file_digest = digest;
    doc->index_in_file = index++;
    out.push_back(std::move(*doc));
  }
  return true;
}

}  // namespace aasmc
