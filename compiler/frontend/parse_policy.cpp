#include "frontend/parse_policy.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>

#include <algorithm>
#include <iterator>
#include <tuple>

#include "frontend/quantity.h"
#include "kernel/capabilities.h"
#include "plan/host_pattern.h"
#include "plan/namespaces.h"
#include "tables/errno_names.h"

namespace aasmc {
namespace {

using Kind = YamlNode::Kind;

bool is_name_char(char c, bool head) {
  const bool lower_digit = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  return head ? lower_digit : lower_digit || c == '.' || c == '_' || c == '-';
}

bool is_env_name(llvm::StringRef name) {
  if (name.empty() || !(std::isalpha(uint8_t(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
}

// Values that look like credentials: a policy checked into git must not carry them.
bool looks_like_credential(llvm::StringRef name, llvm::StringRef value) {
  static const char* const kPrefixes[] = {"AKIA", "ghp_", "gho_", "github_pat_", "glpat-", "sk-", "xoxb-", "xoxp-",
                                          "-----BEGIN"};
  for (const char* prefix : kPrefixes)
    if (value.startswith(prefix)) return true;
  const std::string upper = name.upper();
  for (const char* word : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "PRIVATE_KEY", "CREDENTIAL"})
    if (llvm::StringRef(upper).contains(word) && !value.empty()) return true;
  return false;
}

// RFC 1123 host names: dot-separated labels of letters, digits and '-', each
// 1-63 bytes, not starting or ending with '-'; 253 bytes at most.
// In Tier's order.
constexpr llvm::StringRef kTiers[] = {"org", "team", "agent", "run"};

std::vector<llvm::StringRef> namespace_names() {
  std::vector<llvm::StringRef> names;
  for (const aasm::plan::NamespaceName& n : aasm::plan::kNamespaceNames) names.push_back(n.name);
  return names;
}

class DocumentParser {
 public:
  DocumentParser(Diagnostics& diags, int document) : diags_(diags), document_(document) {}

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
    // A document with errors still goes on to the later passes, so that one
    // run reports every error; the driver writes no plan after any error.
    doc.has_errors = diags_.error_count() != errors_before;
    return doc;
  }

 private:
  SourceRef ref(const YamlNode& node) const { return {node.loc, node.range(), document_}; }

  void error_at(const YamlNode& node, const std::string& message, const char* id) {
    diags_.error(node.loc, message, id, node.range());
  }

  // An error at `offset` inside a scalar's text (quoted scalars start a byte later).
  void error_inside(const YamlNode& node, size_t offset, const std::string& message, const char* id) {
    const char* at = node.loc.getPointer() + (node.quoted ? 1 : 0) + offset;
    diags_.error(llvm::SMLoc::getFromPointer(at), message, id, node.range());
  }

  static std::string with_guess(std::string message, llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> known) {
    if (auto guess = closest_match(word, known); !guess.empty()) message += "; did you mean '" + guess + "'?";
    return message;
  }

  bool expect(const YamlNode& node, Kind kind, const std::string& what) {
    if (node.kind == kind) return true;
    const char* wanted = kind == Kind::kMap ? "a mapping" : kind == Kind::kSequence ? "a list" : "a scalar";
    error_at(node, what + " must be " + wanted + ", not " + node.kind_name(), diag::kWrongType);
    return false;
  }

  void require(bool seen, const YamlNode& map, const std::string& key) {
    if (!seen) diags_.error(map.loc, "missing required key '" + key + "'", diag::kMissingKey);
  }

  template <typename OnKey>
  void for_each_key(const YamlNode& map, llvm::ArrayRef<llvm::StringRef> known, const std::string& where,
                    OnKey&& on_key) {
    for (const auto& [key, value] : map.entries) {
      if (!expect(key, Kind::kScalar, "a key in " + where)) continue;
      if (std::find(known.begin(), known.end(), key.scalar) == known.end()) {
        error_at(key, with_guess("unknown key '" + key.scalar + "' in " + where, key.scalar, known), diag::kUnknownKey);
        continue;
      }
      on_key(key.scalar, value);
    }
  }

  std::optional<std::string> scalar(const YamlNode& node, const std::string& what) {
    if (!expect(node, Kind::kScalar, what)) return std::nullopt;
    return node.scalar;
  }

  // A value from a closed set: the set's index, or an error with a guess.
  std::optional<size_t> choice(const YamlNode& node, const std::string& what, llvm::ArrayRef<llvm::StringRef> options) {
    auto text = scalar(node, what);
    if (!text) return std::nullopt;
    for (size_t i = 0; i < options.size(); ++i)
      if (*text == options[i]) return i;
    std::string list;
    for (llvm::StringRef option : options) list += std::string(list.empty() ? "" : ", ") + option.str();
    error_at(node, with_guess(what + ": unknown value '" + *text + "' (" + list + ")", *text, options),
             diag::kBadValue);
    return std::nullopt;
  }

  // A YAML 1.2 core-schema boolean, as the schema reads it: unquoted true or
  // false in any of the three spellings ("true" in quotes is a string).
  std::optional<Located<bool>> boolean(const YamlNode& node, const std::string& what) {
    auto text = scalar(node, what);
    if (!text) return std::nullopt;
    if (!node.quoted) {
      for (llvm::StringRef word : {"true", "True", "TRUE"})
        if (*text == word) return Located<bool>{true, ref(node)};
      for (llvm::StringRef word : {"false", "False", "FALSE"})
        if (*text == word) return Located<bool>{false, ref(node)};
    }
    error_at(node, what + " must be true or false, not " + (node.quoted ? "the string '" : "'") + *text + "'",
             diag::kBadValue);
    return std::nullopt;
  }

  void expect_literal(const YamlNode& node, const std::string& key, const std::string& wanted) {
    auto value = scalar(node, key);
    if (value && *value != wanted)
      error_at(node, key + " must be '" + wanted + "', not '" + *value + "'", diag::kBadValue);
  }

  // A list of scalars; `check` may refuse an entry (and report it).
  template <typename Check>
  std::optional<std::vector<NameEntry>> names(const YamlNode& node, const std::string& where, Check&& check) {
    if (!expect(node, Kind::kSequence, where)) return std::nullopt;
    std::vector<NameEntry> out;
    for (const YamlNode& item : node.items) {
      auto text = scalar(item, "an entry of " + where);
      if (!text || !check(item, *text)) continue;
      out.push_back({*text, ref(item)});
    }
    return out;
  }
  std::optional<std::vector<NameEntry>> names(const YamlNode& node, const std::string& where) {
    return names(node, where, [](const YamlNode&, const std::string&) { return true; });
  }

  std::optional<std::vector<Located<Domain>>> domains(const YamlNode& node, const std::string& where) {
    const std::vector<llvm::StringRef> known = domain_names();
    if (!expect(node, Kind::kSequence, where)) return std::nullopt;
    std::vector<Located<Domain>> out;
    for (const YamlNode& item : node.items)
      if (auto index = choice(item, "an entry of " + where, known)) out.push_back({Domain(*index), ref(item)});
    return out;
  }

  void parse_metadata(const YamlNode& node, PolicyDocument& doc) {
    if (!expect(node, Kind::kMap, "metadata")) return;
    bool seen_name = false, seen_tier = false;
    for_each_key(node, {"name", "tier", "description"}, "metadata", [&](const std::string& key, const YamlNode& value) {
      if (key == "tier") {
        seen_tier = true;
        if (auto index = choice(value, "metadata.tier", kTiers)) doc.tier = Tier(*index);
        return;
      }
      auto text = scalar(value, "metadata." + key);
      if (!text || key != "name") return;
      seen_name = true;
      doc.name = *text;
      if (!is_policy_name(*text))
        error_at(value, "metadata.name '" + *text + "' must match [a-z0-9][a-z0-9._-]*", diag::kBadValue);
    });
    require(seen_name, node, "metadata.name");
    require(seen_tier, node, "metadata.tier");
  }

  void parse_spec(const YamlNode& node, PolicyDocument& doc) {
    if (!expect(node, Kind::kMap, "spec")) return;
    for_each_key(node,
                 {"capabilities", "filesystem", "network", "ipc", "syscalls", "resources", "environment", "isolation"},
                 "spec", [&](const std::string& key, const YamlNode& value) {
                   if (key == "capabilities") doc.capabilities_deny = parse_capabilities(value);
                   if (key == "filesystem") doc.filesystem = parse_filesystem(value);
                   if (key == "network") doc.network = parse_network(value);
                   if (key == "ipc") doc.ipc = parse_ipc(value);
                   if (key == "syscalls") doc.syscalls = parse_syscalls(value);
                   if (key == "resources") doc.resources = parse_resources(value);
                   if (key == "environment") doc.environment = parse_environment(value);
                   if (key == "isolation") doc.isolation = parse_isolation(value);
                 });
  }

  std::optional<std::vector<Located<Domain>>> parse_capabilities(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.capabilities")) return std::nullopt;
    std::optional<std::vector<Located<Domain>>> deny;
    for_each_key(node, {"deny"}, "spec.capabilities",
                 [&](const std::string&, const YamlNode& value) { deny = domains(value, "spec.capabilities.deny"); });
    return deny;
  }

  std::optional<FilesystemNode> parse_filesystem(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.filesystem")) return std::nullopt;
    FilesystemNode fs;
    for_each_key(node, {"read", "write", "execute", "optional", "readonly", "pinned", "templates_may_resolve_to_system_roots"},
                 "spec.filesystem", [&](const std::string& key, const YamlNode& value) {
                   const std::string where = "spec.filesystem." + key;
                   if (key == "pinned") {
                     fs.pinned = parse_pinned(value, where);
                     return;
                   }
                   if (key == "optional" || key == "readonly") {
                     (key == "optional" ? fs.optional : fs.readonly) = parse_path_list(value, where);
                     return;
                   }
                   if (key == "templates_may_resolve_to_system_roots") {
                     fs.templates_may_resolve_to_system_roots = boolean(value, where);
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
      if (paths) list = PathAllowList{ref(value), std::move(*paths)};
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
        error_inside(item, error.offset, error.message, diag::kBadPath);
        continue;
      }
      entries.push_back({std::move(*path), ref(item)});
    }
    return entries;
  }

  // A pin is hashed when the plan is compiled, so it names the file itself:
  // ${CWD} and ${HOME} mean directories of the launch, which the compiler
  // never sees.
  std::optional<std::vector<PathEntry>> parse_pinned(const YamlNode& node, const std::string& where) {
    auto entries = parse_path_list(node, where);
    if (!entries) return entries;
    std::erase_if(*entries, [&](const PathEntry& entry) {
      if (entry.path.base == PathBase::kAbsolute) return false;
      diags_.error(entry.source.loc, "filesystem.pinned: '" + entry.path.text() +
                       "' is resolved at launch, but a pin is hashed when the plan is compiled; pin the file's "
                       "absolute path",
                   diag::kPinnedTemplate, entry.source.range);
      return true;
    });
    return entries;
  }

  std::optional<NetworkNode> parse_network(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.network")) return std::nullopt;
    NetworkNode network;
    for_each_key(node, {"outbound", "bind"}, "spec.network", [&](const std::string& key, const YamlNode& value) {
      auto rule = parse_network_rule(value, "spec.network." + key, key == "outbound");
      (key == "outbound" ? network.outbound : network.bind) = std::move(rule);
    });
    return network;
  }

  std::optional<NetworkRule> parse_network_rule(const YamlNode& node, const std::string& where, bool outbound) {
    NetworkRule rule;
    rule.source = ref(node);
    if (node.kind == Kind::kScalar) {
      if (node.scalar == "none") return rule;
      // A port written where the map goes: say the shape it belongs in.
      const std::string port = node.scalar.find(':') != std::string::npos ? node.scalar : "tcp:443";
      error_at(node,
               where + ": unknown value '" + node.scalar + "' (none, or a map of ports: {allow: [\"" + port + "\"]})",
               diag::kBadValue);
      return std::nullopt;
    }
    if (!expect(node, Kind::kMap, where)) return std::nullopt;
    static const llvm::StringRef kOutboundKeys[] = {"allow", "hosts"};
    const llvm::ArrayRef<llvm::StringRef> keys = outbound ? llvm::ArrayRef(kOutboundKeys) : llvm::ArrayRef(kOutboundKeys).take_front();
    bool seen = false;
    for_each_key(node, keys, where, [&](const std::string& key, const YamlNode& value) {
      if (seen) error_at(value, where + " takes one of 'allow' or 'hosts', not both", diag::kBadValue);
      seen = true;
      if (key == "hosts") {
        rule.kind = NetworkRule::Kind::kHosts;
        parse_hosts(value, where + ".hosts", rule);
        return;
      }
      rule.kind = NetworkRule::Kind::kAllow;
      if (!expect(value, Kind::kSequence, where + ".allow")) return;
      for (const YamlNode& item : value.items)
        if (auto port = parse_port(item, where + ".allow", outbound)) rule.allow.push_back(*port);
    });
    if (!seen) require(false, node, "allow");
    return rule;
  }

  // `hosts: [patterns]` (the allow-list) or `hosts: {allow: [...], deny: [...]}`.
  void parse_hosts(const YamlNode& node, const std::string& where, NetworkRule& rule) {
    const auto patterns = [&](const YamlNode& list, const std::string& key) {
      return names(list, key, [&](const YamlNode& item, const std::string& text) {
        auto pattern = aasm::plan::parse_host_pattern(text);
        if (!pattern) error_at(item, key + ": " + pattern.error().message, diag::kBadValue);
        return bool(pattern);
      });
    };
    if (node.kind == Kind::kSequence) {
      rule.hosts = patterns(node, where);
      if (!rule.hosts) rule.hosts.emplace();
      return;
    }
    if (!expect(node, Kind::kMap, where)) return;
    bool any = false;
    for_each_key(node, {"allow", "deny"}, where, [&](const std::string& key, const YamlNode& value) {
      any = true;
      auto list = patterns(value, where + "." + key);
      if (key == "allow") rule.hosts = list ? std::move(*list) : std::vector<NameEntry>{};
      else if (list) rule.hosts_deny = std::move(*list);
    });
    if (!any) require(false, node, "allow");
  }

  std::optional<PortEntry> parse_port(const YamlNode& node, const std::string& where, bool udp_permitted) {
    auto text = scalar(node, "an entry of " + where);
    if (!text) return std::nullopt;
    if (*text == "udp" && udp_permitted) return PortEntry{PortEntry::Protocol::kUdp, 0, ref(node)};
    const llvm::StringRef entry(*text);
    unsigned port = 0;
    if (!entry.startswith("tcp:") || entry.drop_front(4).getAsInteger(10, port) || port == 0 || port > 65535) {
      error_at(node,
               where + ": '" + *text + "' is not " + (udp_permitted ? "'tcp:PORT' (1-65535) or 'udp'" : "'tcp:PORT' (1-65535)") +
                   (entry.startswith("udp:") ? "; the kernel cannot scope UDP by port, so UDP is all or nothing: 'udp'" : ""),
               diag::kBadValue);
      return std::nullopt;
    }
    return PortEntry{PortEntry::Protocol::kTcp, uint16_t(port), ref(node)};
  }

  std::optional<IpcNode> parse_ipc(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.ipc")) return std::nullopt;
    IpcNode ipc;
    static const llvm::StringRef kSettings[] = {"allow", "deny"};
    for_each_key(node, {"abstract_unix_sockets", "signals", "unix_sockets"}, "spec.ipc",
                 [&](const std::string& key, const YamlNode& value) {
      if (key == "unix_sockets") {
        ipc.unix_sockets = parse_unix_sockets(value);
        return;
      }
      auto index = choice(value, "spec.ipc." + key, kSettings);
      if (!index) return;
      Located<bool> denied{*index == 1, ref(value)};
      (key == "signals" ? ipc.signals_denied : ipc.abstract_unix_sockets_denied) = denied;
    });
    return ipc;
  }

  // `deny`, or `{allow: [paths]}` (paths as in filesystem allow-lists).
  std::optional<UnixSocketsNode> parse_unix_sockets(const YamlNode& node) {
    const std::string where = "spec.ipc.unix_sockets";
    if (node.kind == Kind::kScalar) {
      static const llvm::StringRef kDeny[] = {"deny"};
      if (!choice(node, where, kDeny)) return std::nullopt;
      return UnixSocketsNode{true, {}, ref(node)};
    }
    if (node.kind != Kind::kMap) {
      error_at(node, where + " must be 'deny' or a mapping {allow: [paths]}, not " + node.kind_name(), diag::kWrongType);
      return std::nullopt;
    }
    auto list = parse_allow_list(node, where);
    if (!list) return std::nullopt;
    return UnixSocketsNode{false, std::move(list->allow), list->source};
  }

  std::optional<SyscallsNode> parse_syscalls(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.syscalls")) return std::nullopt;
    SyscallsNode syscalls;
    syscalls.source = ref(node);
    for_each_key(node, {"default", "allow", "deny", "rules"}, "spec.syscalls",
                 [&](const std::string& key, const YamlNode& value) {
                   if (key == "default") syscalls.default_action = parse_action_node(value, "spec.syscalls.default", false);
                   if (key == "allow") syscalls.allow = names(value, "spec.syscalls.allow");
                   if (key == "deny") syscalls.deny = names(value, "spec.syscalls.deny");
                   if (key == "rules") parse_rules(value, syscalls.rules);
                 });
    return syscalls;
  }

  std::optional<Located<Action>> parse_action_node(const YamlNode& node, const std::string& where, bool allow_permitted) {
    auto text = scalar(node, where);
    if (!text) return std::nullopt;
    std::string error;
    auto action = parse_action(*text, allow_permitted, error);
    if (!action) {
      error_at(node, where + ": " + error, diag::kBadAction);
      return std::nullopt;
    }
    return Located<Action>{*action, ref(node)};
  }

  void parse_rules(const YamlNode& node, std::vector<SyscallRule>& rules) {
    if (!expect(node, Kind::kSequence, "spec.syscalls.rules")) return;
    for (const YamlNode& item : node.items) {
      const std::string where = "a rule of spec.syscalls.rules";
      if (!expect(item, Kind::kMap, where)) continue;
      SyscallRule rule;
      bool seen_syscall = false;
      std::optional<Located<Action>> action;
      for_each_key(item, {"syscall", "when", "action"}, where, [&](const std::string& key, const YamlNode& value) {
        if (key == "action") action = parse_action_node(value, "action", true);
        auto text = key == "action" ? std::nullopt : scalar(value, key);
        if (!text) return;
        if (key == "syscall") {
          seen_syscall = true;
          rule.syscall = {*text, ref(value)};
        } else {
          rule.when_text = Located<std::string>{*text, ref(value)};
          ConditionError error;
          rule.when = parse_condition(*text, error);
          if (!rule.when) error_inside(value, error.offset, "in when: " + error.message, diag::kConditionSyntax);
        }
      });
      require(seen_syscall, item, "syscall");
      require(action.has_value() || item.entries.empty(), item, "action");
      if (seen_syscall && action) {
        rule.action = *action;
        rules.push_back(std::move(rule));
      }
    }
  }

  std::optional<ResourcesNode> parse_resources(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.resources")) return std::nullopt;
    ResourcesNode resources;
    for_each_key(
        node,
        {"memory", "swap", "pids", "cpu", "wall_clock", "stdout", "stderr", "open_files", "file_size", "tmp_size"},
        "spec.resources", [&](const std::string& key, const YamlNode& value) {
          const std::string where = "spec.resources." + key;
          auto text = scalar(value, where);
          if (!text) return;
          QuantityError error;
          std::optional<uint64_t> parsed;
          std::optional<Located<uint64_t>>* slot = nullptr;
          if (key == "pids") parsed = parse_count(*text, 1u << 22, error), slot = &resources.pids;
          else if (key == "open_files") parsed = parse_count(*text, 1u << 20, error), slot = &resources.open_files;
          else if (key == "cpu") parsed = parse_cpu_millicores(*text, error), slot = &resources.cpu_millicores;
          else if (key == "wall_clock") parsed = parse_duration_seconds(*text, error), slot = &resources.wall_clock_seconds;
          else {
            parsed = parse_bytes(*text, error);
            slot = key == "memory"   ? &resources.memory
                   : key == "swap"   ? &resources.swap
                   : key == "stdout" ? &resources.stdout_bytes
                   : key == "stderr" ? &resources.stderr_bytes
                   : key == "tmp_size" ? &resources.tmp_size
                                     : &resources.file_size;
          }
          if (!parsed) {
            error_inside(value, error.offset, where + ": " + error.message, diag::kBadQuantity);
            return;
          }
          *slot = Located<uint64_t>{*parsed, ref(value)};
        });
    return resources;
  }

  std::optional<EnvironmentNode> parse_environment(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.environment")) return std::nullopt;
    EnvironmentNode env;
    for_each_key(node, {"pass", "set"}, "spec.environment", [&](const std::string& key, const YamlNode& value) {
      if (key == "pass") {
        env.pass = names(value, "spec.environment.pass", [&](const YamlNode& item, const std::string& text) {
          llvm::StringRef name(text);
          if (is_env_name(name.endswith("*") ? name.drop_back() : name) && name.count('*') <= 1) return true;
          error_at(item, "'" + text + "' is not a variable name (or a prefix ending in one '*')", diag::kBadValue);
          return false;
        });
        return;
      }
      if (!expect(value, Kind::kMap, "spec.environment.set")) return;
      env.set.emplace();
      for (const auto& [name, setting] : value.entries) {
        auto name_text = scalar(name, "a variable name in spec.environment.set");
        auto value_text = scalar(setting, "the value of " + name.scalar);
        if (!name_text || !value_text) continue;
        if (!is_env_name(*name_text)) {
          error_at(name, "'" + *name_text + "' is not a variable name", diag::kBadValue);
          continue;
        }
        if (looks_like_credential(*name_text, *value_text))
          diags_.warning(setting.loc,
                         "the value of " + *name_text +
                             " looks like a credential; a checked-in policy is no place for secrets (pass it with "
                             "environment.pass instead)",
                         diag::kCredentialValue, setting.range());
        env.set->push_back({{*name_text, ref(name)}, {*value_text, ref(setting)}});
      }
    });
    return env;
  }

  std::optional<IsolationNode> parse_isolation(const YamlNode& node) {
    if (!expect(node, Kind::kMap, "spec.isolation")) return std::nullopt;
    IsolationNode isolation;
    for_each_key(node, {"namespaces", "linux_capabilities", "degraded", "filesystem_view"}, "spec.isolation",
                 [&](const std::string& key, const YamlNode& value) {
                   if (key == "filesystem_view") isolation.filesystem_view = boolean(value, "spec.isolation.filesystem_view");
                   if (key == "degraded") isolation.degraded = domains(value, "spec.isolation.degraded");
                   if (key == "namespaces")
                     isolation.namespaces = names(value, "spec.isolation.namespaces", [&](const YamlNode& item, const std::string& text) {
                       return choice(item, "an entry of spec.isolation.namespaces", namespace_names()).has_value() && !text.empty();
                     });
                   if (key == "linux_capabilities")
                     isolation.linux_capabilities =
                         names(value, "spec.isolation.linux_capabilities", [&](const YamlNode& item, const std::string& text) {
                           return check_capability(item, text);
                         });
                 });
    return isolation;
  }

  bool check_capability(const YamlNode& node, const std::string& text) {
    if (aasm::capabilities::number(text)) return true;
    // NET_RAW for CAP_NET_RAW: too far for the edit distance to guess.
    if (aasm::capabilities::number("CAP_" + text)) {
      error_at(node, "unknown Linux capability '" + text + "'; did you mean 'CAP_" + text + "'?", diag::kBadValue);
      return false;
    }
    std::vector<llvm::StringRef> known;
    for (int n = 0; n < aasm::capabilities::kCount; ++n) known.push_back(aasm::capabilities::name(n));
    error_at(node, with_guess("unknown Linux capability '" + text + "'", text, known), diag::kBadValue);
    return false;
  }

  Diagnostics& diags_;
  int document_;
};

}  // namespace

const char* tier_name(Tier tier) { return size_t(tier) < std::size(kTiers) ? kTiers[size_t(tier)].data() : "?"; }

std::vector<llvm::StringRef> domain_names() {
  return {
#define AASM_DOMAIN(id, name) name,
#include "plan/controls.def"
  };
}

const char* domain_name(Domain domain) { return domain_names()[size_t(domain)].data(); }

std::optional<Domain> find_domain(llvm::StringRef name) {
  const auto names = domain_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return Domain(i);
  return std::nullopt;
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
    // A number is accepted too, within what the kernel's SECCOMP_RET_ERRNO
    // can carry and the C library reports as an error (1..4095).
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      const unsigned long value = name.size() > 5 ? 99999 : std::stoul(name);
      if (value == 0) {
        error = "errno 0 means success: the denied call would look as if it worked";
        return std::nullopt;
      }
      if (value > 4095) {
        error = "errno " + name + " is out of range (1 to 4095)";
        return std::nullopt;
      }
      return Action{Action::Kind::kErrno, int(value)};
    }
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
  load_policy_buffer(std::move(*buffer), diags, out);
  return true;
}

std::vector<std::string> canonical_input_order(const std::vector<std::string>& paths) {
  struct Keyed {
    int tier = 0;
    std::vector<std::string> names;
    aasm::Sha256Digest digest{};
    std::string path;
    auto key() const { return std::tie(tier, names, digest, path); }
  };
  std::vector<Keyed> keyed;
  for (const std::string& path : paths) {
    // A parse of its own, its diagnostics dropped: the real load reports them.
    llvm::SourceMgr scratch;
    Diagnostics ignored(scratch);
    std::vector<PolicyDocument> documents;
    // A cascade that will not compile keeps the order given, so its
    // diagnostics come in the order the user wrote the files.
    if (!load_policy_file(path, ignored, documents) || ignored.error_count() > 0) return paths;
    Keyed k;
    k.path = path;
    k.tier = int(Tier::kRun) + 1;
    for (const PolicyDocument& doc : documents) {
      k.tier = std::min(k.tier, int(doc.tier));
      k.names.push_back(doc.name);
      k.digest = doc.file_digest;
    }
    keyed.push_back(std::move(k));
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) { return a.key() < b.key(); });
  std::vector<std::string> ordered;
  for (const Keyed& k : keyed) ordered.push_back(k.path);
  return ordered;
}

bool is_policy_name(const std::string& name) {
  if (name.empty() || name.size() > 253 || !is_name_char(name[0], true)) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_name_char(c, false); });
}

void load_policy_buffer(std::unique_ptr<llvm::MemoryBuffer> buffer, Diagnostics& diags,
                        std::vector<PolicyDocument>& out) {
  const std::string path = buffer->getBufferIdentifier().str();
  const llvm::StringRef text = buffer->getBuffer();
  const aasm::Sha256Digest digest = aasm::sha256({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  const unsigned id = diags.sources().AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  unsigned index = 0;
  for (const YamlDocument& yaml : load_yaml_documents(id, diags)) {
    auto doc = DocumentParser(diags, int(out.size())).parse(yaml);
    const unsigned index_in_file = index++;
    if (!doc) continue;
    doc->file = path;
    doc->file_name = llvm::sys::path::filename(path).str();
    doc->file_digest = digest;
    doc->index_in_file = index_in_file;
    out.push_back(std::move(*doc));
  }
}

}  // namespace aasmc
