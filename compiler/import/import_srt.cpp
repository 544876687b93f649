// `aasmc import --from srt`: the settings file of Anthropic's sandbox runtime
// (@anthropic-ai/sandbox-runtime, `srt`; its schema is
// src/sandbox/sandbox-config.ts, its semantics the README's "Configuration")
// as an aasm filesystem, network and ipc node. docs/import.md has the
// mapping; where srt's model (reads denied by exception, every port of an
// allowed domain) has no form here, the note says so and the policy is the
// stricter one. Its domains are host patterns of network.outbound.hosts.
#include <algorithm>

#include "import/import_policy.h"
#include "frontend/paths.h"
#include "plan/host_pattern.h"

namespace aasmc {
namespace {

using namespace json_input;
using Strings = std::vector<std::pair<std::string, const YamlNode*>>;

// srt's path as a policy path: `~` is ${HOME}, a relative path is beneath
// ${CWD} (srt resolves both so); a glob or a path the policy cannot hold is
// nullopt with why.
std::optional<PathTemplate> policy_path(const std::string& text, std::string& why) {
  if (text.find_first_of("*?[") != std::string::npos) {
    why = "a glob, which srt reads on macOS only and a policy, naming trees, does not";
    return std::nullopt;
  }
  std::string path = text;
  if (path == "~" || path.starts_with("~/")) path = "${HOME}" + path.substr(1);
  else if (path.starts_with("~")) return why = "another user's home (~user)", std::nullopt;
  else if (path == "." || path == "./") path = "${CWD}";
  else if (path.starts_with("./")) path = "${CWD}/" + path.substr(2);
  else if (!path.starts_with("/") && !path.starts_with("${")) path = "${CWD}/" + path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  PathError error;
  std::optional<PathTemplate> parsed = parse_path(path, error);
  if (!parsed) why = "'" + path + "': " + error.message;
  return parsed;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) out += (out.size() > 1 ? ", " : "") + yaml_quoted(item);
  return out + "]";
}

// srt's members that no policy node carries, and why.
struct Unmapped {
  const char* key;
  const char* why;
};
constexpr Unmapped kUnmappedTop[] = {
    {"ignoreViolations", "which denials srt leaves out of its report: a plan reports every denial (the receipt)"},
    {"ripgrep", "the tool srt searches for dangerous files with"},
    {"mandatoryDenySearchDepth", "how deep srt searches for dangerous files to protect (see 'the settings')"},
    {"allowPty", "a macOS-only setting of srt"},
};
constexpr Unmapped kUnmappedNetwork[] = {
    {"httpProxyPort", "an external HTTP proxy srt hands the traffic to, which filters by its own rules: a policy's "
                      "hosts go through aasm's broker, which applies the domain lists itself"},
    {"socksProxyPort", "an external SOCKS proxy srt hands the traffic to, which filters by its own rules: a policy's "
                       "hosts go through aasm's broker, which applies the domain lists itself"},
};

class SettingsImport {
 public:
  SettingsImport(ImportedPolicy& policy, Diagnostics& diags) : policy_(policy), diags_(diags) {}

  bool run(const YamlNode& root) {
    if (!expect_object(root, "the settings", diags_) ||
        !check_keys(root, {"network", "filesystem", "ignoreViolations", "enableWeakerNestedSandbox", "ripgrep",
                           "mandatoryDenySearchDepth", "allowPty"},
                    "the settings", diags_))
      return false;
    const YamlNode* network = required_member(root, "network", "the settings", diags_);
    const YamlNode* filesystem = required_member(root, "filesystem", "the settings", diags_);
    if (!network || !filesystem || !read_filesystem(*filesystem) || !read_network(*network)) return false;
    if (const YamlNode* weaker = member(root, "enableWeakerNestedSandbox")) {
      auto value = bool_value(*weaker, "enableWeakerNestedSandbox", diags_);
      if (!value) return false;
      // false is srt's default; true asks for less, which the policy does not give
      policy_.note(*weaker, "enableWeakerNestedSandbox", *value ? ImportOutcome::kTightened : ImportOutcome::kCarried,
                   *value ? "srt's weaker mode inside containers: a policy has none, so it runs at full strength"
                          : "false: a policy has no weaker mode");
    }
    note_unmapped(root, "", kUnmappedTop);
    policy_.note(root, "the settings", ImportOutcome::kNotExpressible,
                 "srt's own write protection of the dangerous files it finds beneath writable trees (.gitconfig, "
                 ".bashrc, .git/hooks, ...): list those that matter in filesystem.readonly");
    write_spec();
    return true;
  }

 private:
  void note_unmapped(const YamlNode& object, const std::string& prefix, llvm::ArrayRef<Unmapped> table) {
    for (const Unmapped& entry : table)
      if (const YamlNode* node = member(object, entry.key))
        policy_.note(*node, prefix + entry.key, ImportOutcome::kNotExpressible, entry.why);
  }

  std::optional<Strings> list(const YamlNode& object, const char* key, const std::string& where) {
    const YamlNode* node = required_member(object, key, where, diags_);
    if (!node) return std::nullopt;
    return string_list(*node, where + "." + key, diags_);
  }

  bool read_filesystem(const YamlNode& node) {
    if (!expect_object(node, "filesystem", diags_) ||
        !check_keys(node, {"denyRead", "allowWrite", "denyWrite", "allowGitConfig"}, "filesystem", diags_))
      return false;
    auto deny_read = list(node, "denyRead", "filesystem");
    auto allow_write = list(node, "allowWrite", "filesystem");
    auto deny_write = list(node, "denyWrite", "filesystem");
    if (!deny_read || !allow_write || !deny_write) return false;
    if (const YamlNode* git = member(node, "allowGitConfig")) {
      if (!bool_value(*git, "filesystem.allowGitConfig", diags_)) return false;
      policy_.note(*git, "filesystem.allowGitConfig", ImportOutcome::kNotExpressible,
                   "srt's own exception for .git/config; a policy protects paths it lists in filesystem.readonly");
    }
    const YamlNode& deny_read_node = *member(node, "denyRead");
    if (deny_read->empty())
      policy_.note(deny_read_node, "filesystem.denyRead", ImportOutcome::kCarried,
                   "nothing denied: read and execute allow / (srt confines neither beyond denyRead)");
    for (const auto& [path, at] : *deny_read)
      policy_.note(*at, "filesystem.denyRead", ImportOutcome::kNotExpressible,
                   path + " stays readable: Landlock and the filesystem view grant trees and cannot take one out of a "
                          "readable tree; list the trees to read in filesystem.read instead of /");
    for (const auto& [text, at] : *allow_write) {
      std::string why;
      if (std::optional<PathTemplate> path = policy_path(text, why)) {
        writable_.push_back(*path);
        policy_.note(*at, "filesystem.allowWrite", ImportOutcome::kCarried, text + " is " + path->text() + " in write.allow");
      } else {
        policy_.note(*at, "filesystem.allowWrite", ImportOutcome::kTightened, text + " is left out, so not writable: " + why);
      }
    }
    if (allow_write->empty())
      policy_.note(*member(node, "allowWrite"), "filesystem.allowWrite", ImportOutcome::kCarried,
                   "nothing writable: write.allow is []");
    for (const auto& [text, at] : *deny_write) protect(text, *at);
    return true;
  }

  // denyWrite inside a writable tree: a protected subtree would need the
  // filesystem view, which cannot bind the host's root (srt reads everywhere).
  void protect(const std::string& text, const YamlNode& at) {
    std::string why;
    std::optional<PathTemplate> path = policy_path(text, why);
    if (!path) {
      policy_.note(at, "filesystem.denyWrite", ImportOutcome::kNotExpressible, text + " stays writable: " + why);
      return;
    }
    const bool inside = std::any_of(writable_.begin(), writable_.end(), [&](const PathTemplate& tree) {
      return contains(tree, *path);
    });
    if (!inside) {
      policy_.note(at, "filesystem.denyWrite", ImportOutcome::kCarried,
                   text + ": no allowWrite tree holds it, so it is not writable already");
      return;
    }
    policy_.note(at, "filesystem.denyWrite", ImportOutcome::kNotExpressible,
                 text + " stays writable: a protected subtree (filesystem.readonly) needs the filesystem view, which "
                        "cannot hold the host's root that srt's reads need; list the trees to read, set "
                        "isolation.filesystem_view: true and add " + path->text() + " to filesystem.readonly");
  }

  // srt's domain list as aasm host patterns, each read by the one parser of
  // a pattern (plan/host_pattern.h); an entry aasm refuses is reported at
  // its element with aasm's reason. The canonical spelling, each pattern once.
  std::vector<std::string> host_patterns(const Strings& entries, const char* element, bool& refused) {
    std::vector<std::string> out;
    for (const auto& [text, at] : entries) {
      const aasm::Result<aasm::plan::HostPattern> pattern = aasm::plan::parse_host_pattern(text);
      if (!pattern) {
        refused = true;
        policy_.note(*at, element, ImportOutcome::kTightened, rejected_domain(element, pattern.error().message));
        continue;
      }
      const std::string canonical = aasm::plan::host_pattern_text(*pattern);
      if (std::find(out.begin(), out.end(), canonical) == out.end()) out.push_back(canonical);
    }
    return out;
  }

  // Why an entry aasm refuses leaves the policy stricter: an allowed one is
  // left out; a denied one left out would open what srt closes, so no
  // network at all.
  static std::string rejected_domain(const std::string& element, const std::string& why) {
    return element == "network.allowedDomains"
               ? why + "; left out, so not reachable"
               : why + "; a denial the policy cannot hold would leave it open, so network.outbound is none";
  }

  // allowedDomains and deniedDomains: srt's proxies let a request through
  // when no denied pattern and some allowed one match its host (exact, or
  // `*.d` for the names beneath d and not d itself, lowercase), on any port;
  // an empty allow list is no network (src/sandbox/sandbox-manager.ts,
  // filterNetworkRequest). aasm's broker decides the same on the web ports.
  void read_domains(const YamlNode& allowed_node, const Strings& allowed, const YamlNode& denied_node,
                    const Strings& denied) {
    bool refused_allow = false, refused_deny = false;
    allowed_hosts_ = host_patterns(allowed, "network.allowedDomains", refused_allow);
    denied_hosts_ = host_patterns(denied, "network.deniedDomains", refused_deny);
    if (allowed_hosts_.empty() || refused_deny) {
      const bool none_asked = allowed.empty();
      if (refused_deny) allowed_hosts_.clear();
      policy_.note(allowed_node, "network.allowedDomains", none_asked ? ImportOutcome::kCarried : ImportOutcome::kTightened,
                   none_asked ? "no domain: no network, network.outbound none"
                   : refused_deny ? "network.outbound none: a deniedDomains entry cannot be carried (see it)"
                                  : "network.outbound none: no entry is a host pattern aasm reads");
      if (!denied.empty() && !refused_deny)
        policy_.note(denied_node, "network.deniedDomains", ImportOutcome::kCarried, "unreachable: network.outbound is none");
      return;
    }
    policy_.note(allowed_node, "network.allowedDomains", ImportOutcome::kTightened,
                 "network.outbound.hosts.allow " + quoted_list(allowed_hosts_) +
                     ", through aasm's broker (an HTTP proxy; HTTPS_PROXY, ALL_PROXY) on ports 80 and 443 only, where "
                     "srt's proxies (HTTP and SOCKS5) reach an allowed host on every port: add HOST:PORT to hosts.allow "
                     "for another; *.d is the names beneath d and not d itself in both (a name beneath it never reaches "
                     "the host's loopback or link-local addresses here)");
    if (!denied.empty())
      policy_.note(denied_node, "network.deniedDomains", ImportOutcome::kCarried,
                   "network.outbound.hosts.deny " + quoted_list(denied_hosts_) +
                       ": every port, checked before the allow list, as srt does");
  }

  bool read_network(const YamlNode& node) {
    if (!expect_object(node, "network", diags_) ||
        !check_keys(node, {"allowedDomains", "deniedDomains", "allowUnixSockets", "allowAllUnixSockets",
                           "allowLocalBinding", "httpProxyPort", "socksProxyPort"},
                    "network", diags_))
      return false;
    auto allowed = list(node, "allowedDomains", "network");
    auto denied = list(node, "deniedDomains", "network");
    if (!allowed || !denied) return false;
    read_domains(*member(node, "allowedDomains"), *allowed, *member(node, "deniedDomains"), *denied);
    bool local_binding = false;
    if (const YamlNode* binding = member(node, "allowLocalBinding")) {
      auto value = bool_value(*binding, "network.allowLocalBinding", diags_);
      if (!value) return false;
      local_binding = *value;
      policy_.note(*binding, "network.allowLocalBinding",
                   local_binding ? ImportOutcome::kTightened : ImportOutcome::kCarried,
                   local_binding ? "network.bind stays none: srt lets the command listen on localhost only (its "
                                   "Seatbelt rule; a policy's bind has no loopback-only form), so nothing listens"
                                 : "network.bind none");
    }
    note_unmapped(node, "network.", kUnmappedNetwork);
    return read_unix_sockets(node);
  }

  bool read_unix_sockets(const YamlNode& node) {
    if (const YamlNode* all = member(node, "allowAllUnixSockets")) {
      auto value = bool_value(*all, "network.allowAllUnixSockets", diags_);
      if (!value) return false;
      if (*value) {
        unix_sockets_ = "{allow: [\"/\"]}";
        policy_.note(*all, "network.allowAllUnixSockets", ImportOutcome::kCarried,
                     "ipc.unix_sockets allows / (no restriction)");
        return true;
      }
    }
    const YamlNode* list_node = member(node, "allowUnixSockets");
    if (!list_node) {
      policy_.note(node, "network", ImportOutcome::kCarried,
                   "no allowUnixSockets: ipc.unix_sockets deny, as srt's seccomp filter refuses socket(AF_UNIX) on Linux");
      return true;
    }
    auto sockets = string_list(*list_node, "network.allowUnixSockets", diags_);
    if (!sockets) return false;
    std::vector<std::string> paths;
    for (const auto& [text, at] : *sockets) {
      std::string why;
      if (std::optional<PathTemplate> path = policy_path(text, why)) paths.push_back(path->text());
      else policy_.note(*at, "network.allowUnixSockets", ImportOutcome::kTightened, text + " is left out, so refused: " + why);
    }
    unix_sockets_ = paths.empty() ? "deny" : "{allow: " + quoted_list(paths) + "}";
    policy_.note(*list_node, "network.allowUnixSockets", ImportOutcome::kCarried,
                 "ipc.unix_sockets " + unix_sockets_ +
                     " (srt's list is macOS-only; here Landlock ABI 9 enforces it, and the launch is refused on an older "
                     "kernel unless isolation.degraded lists ipc)");
    return true;
  }

  void write_spec() {
    std::vector<std::string> writable;
    for (const PathTemplate& path : writable_) writable.push_back(path.text());
    std::vector<std::string>& out = policy_.spec;
    out.push_back("  filesystem:");
    out.push_back("    read: {allow: [\"/\"]}");
    out.push_back("    write: {allow: " + quoted_list(writable) + "}");
    out.push_back("    execute: {allow: [\"/\"]}");
    out.push_back("  network:");
    out.push_back("    outbound: " + outbound());
    out.push_back("    bind: none");
    out.push_back("  ipc:");
    out.push_back("    unix_sockets: " + unix_sockets_);
  }

  // `none`, or the host lists: srt's network is its allowed domains only.
  std::string outbound() const {
    if (allowed_hosts_.empty()) return "none";
    std::string hosts = "{allow: " + quoted_list(allowed_hosts_);
    if (!denied_hosts_.empty()) hosts += ", deny: " + quoted_list(denied_hosts_);
    return "{hosts: " + hosts + "}}";
  }

  ImportedPolicy& policy_;
  Diagnostics& diags_;
  std::vector<std::string> allowed_hosts_, denied_hosts_;
  std::vector<PathTemplate> writable_;
  std::string unix_sockets_ = "deny";
};

}  // namespace

std::optional<ImportedPolicy> import_srt_settings(const YamlNode& root, const std::vector<Target>& targets,
                                                  Diagnostics& diags) {
  ImportedPolicy policy;
  policy.targets = targets;
  if (!SettingsImport(policy, diags).run(root) || diags.error_count() > 0) return std::nullopt;
  return policy;
}

}  // namespace aasmc
