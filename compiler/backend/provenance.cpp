#include "backend/provenance.h"

#include <algorithm>
#include <set>

#include "backend/socket_rules.h"
#include "middle/syscall_semantics.h"
#include "tables/syscall_groups.h"
#include "tables/targets.h"

namespace aasmc {
namespace {

using aasm::plan::ProvenanceEntry;

// The deny sets whose calls widen the host's exposure when a policy allows
// them: the report warns before it suggests one.
constexpr llvm::StringRef kSensitiveGroups[] = {"privileged", "mount", "kernel", "debug"};

class Builder {
 public:
  Builder(const PolicyIR& ir, const llvm::SourceMgr& sources) : ir_(ir), sources_(sources) {}

  void add(const SourceRef& from, std::string key, std::string item = {}, std::string value = {}) {
    ProvenanceEntry entry{aasm::plan::kNoSource, 0, 0, std::move(key), std::move(item), std::move(value)};
    if (from.document >= 0 && from.loc.isValid()) {
      entry.source = uint16_t(from.document);
      std::tie(entry.line, entry.column) = sources_.getLineAndColumn(from.loc);
    }
    out_.entries.push_back(std::move(entry));
  }

  void paths(const std::string& key, const SourceRef& node, const std::vector<PathEntry>& entries) {
    add(node, key);
    for (const PathEntry& entry : entries) add(entry.source, key, entry.path.text());
  }

  void network(const std::string& key, const NetworkRule& rule) {
    static const char* const kKinds[] = {"none", "allow", "hosts"};
    add(rule.source, key, {}, kKinds[int(rule.kind)]);
    for (const PortEntry& port : rule.allow)
      add(port.source, key + ".allow",
          port.protocol == PortEntry::Protocol::kUdp ? "udp" : "tcp:" + std::to_string(port.port));
    if (rule.hosts) {  // the list's own entry: an empty allow-list refuses every name
      add(rule.source, key + ".hosts.allow");
      for (const NameEntry& host : *rule.hosts) add(host.source, key + ".hosts.allow", host.name);
    }
    for (const NameEntry& host : rule.hosts_deny) add(host.source, key + ".hosts.deny", host.name);
  }

  void flag(const std::string& key, const std::optional<Located<bool>>& denied) {
    if (denied) add(denied->source, key, {}, denied->value ? "deny" : "allow");
  }

  void document(const PolicyDocument& doc) {
    for (const Located<Domain>& domain : doc.capabilities_deny.value_or(std::vector<Located<Domain>>{}))
      add(domain.source, "capabilities.deny", domain_name(domain.value));
    if (doc.filesystem) {
      const FilesystemNode& fs = *doc.filesystem;
      for (const auto& [verb, list] : {std::pair("read", &fs.read), std::pair("write", &fs.write),
                                       std::pair("execute", &fs.execute)})
        if (*list) paths(std::string("filesystem.") + verb + ".allow", (*list)->source, (*list)->allow);
    }
    if (doc.network) {
      if (doc.network->outbound) network("network.outbound", *doc.network->outbound);
      if (doc.network->bind) network("network.bind", *doc.network->bind);
    }
    if (doc.ipc) {
      flag("ipc.abstract_unix_sockets", doc.ipc->abstract_unix_sockets_denied);
      flag("ipc.signals", doc.ipc->signals_denied);
      if (const auto& sockets = doc.ipc->unix_sockets) {
        add(sockets->source, "ipc.unix_sockets", {}, sockets->deny ? "deny" : "allow");
        for (const PathEntry& entry : sockets->allow) add(entry.source, "ipc.unix_sockets.allow", entry.path.text());
      }
    }
  }

  // A rule of the IR comes from a rule the policy wrote, a deny set with
  // argument rules, capabilities.deny or a safe default: the key says which,
  // so the edit goes to the right node.
  std::string rule_key(const SyscallRuleIR& rule, const std::vector<PolicyDocument>& documents) const {
    if (!rule.safe_default.empty()) return "syscalls.safe_default";
    if (rule.from.document < 0) return "syscalls.rules";
    const PolicyDocument& doc = documents[size_t(rule.from.document)];
    const auto same = [&](const SourceRef& s) { return s.loc == rule.from.loc; };
    if (doc.syscalls && std::any_of(doc.syscalls->rules.begin(), doc.syscalls->rules.end(),
                                    [&](const SyscallRule& r) { return same(r.action.source); }))
      return "syscalls.rules";
    if (doc.capabilities_deny && std::any_of(doc.capabilities_deny->begin(), doc.capabilities_deny->end(),
                                             [&](const Located<Domain>& d) { return same(d.source); }))
      return "capabilities.deny";
    return "syscalls.deny";
  }

  void syscalls(const std::vector<PolicyDocument>& documents) {
    if (!ir_.syscalls) return;
    const SyscallIR& s = *ir_.syscalls;
    add(s.default_action.from, "syscalls.default", {}, s.default_action.value.text());
    for (const DocumentAllowlist& list : s.allowlists) {
      add(list.node, "syscalls.allow");
      for (const auto& [name, from] : list.names) add(from, "syscalls.allow", name);
    }
    for (const auto& [name, from] : s.denied) add(from, "syscalls.deny", name, s.default_action.value.text());
    for (const SyscallRuleIR& rule : s.rules) {
      std::string value = rule.action.text() + (rule.when_text ? " when " + rule.when_text->value : "");
      if (!rule.safe_default.empty()) value = "@" + rule.safe_default + ": " + value;
      add(rule.safe_default.empty() ? rule.from : SourceRef{}, rule_key(rule, documents), rule.syscall, value);
    }
  }

  // The socket rules the seccomp lowering adds (backend/socket_rules.h),
  // under the node that asks for them, not a syscalls list: the report
  // names that line and edits that node.
  void socket_rules() {
    llvm::Expected<std::vector<SocketRuleIR>> rules = socket_rules_of(ir_);
    if (!rules) {
      llvm::consumeError(rules.takeError());  // the plan's lowering has said it
      return;
    }
    for (const auto& [node, rule] : *rules)
      add(rule.from, node, rule.syscall, rule.action.text() + (rule.when_text ? " when " + rule.when_text->value : ""));
  }

  // The calls the main program answers ENOSYS by design, where it does
  // (as the lowering decides): not a denial, so the report says so and
  // suggests nothing. Built in: no document wrote it.
  void fallbacks() {
    if (!ir_.syscalls) return;
    const SyscallIR& s = *ir_.syscalls;
    for (const FallbackCall& call : fallback_calls()) {
      const std::string name = call.name.str();
      const bool answered = s.mode == SyscallIR::Mode::kDenylist
                                ? !s.denied.count(name)
                                : s.allowed.count(name) || (!s.denied.count(name) &&
                                                            s.default_action.value.kind != Action::Kind::kKill);
      if (answered) add(SourceRef{}, "syscalls.fallback", name, "errno:ENOSYS, falls back to " + call.fallback.str());
    }
  }

  // The names and numbers of every target's calls, each with the sensitive
  // deny set it widens: x86_64's in the provenance's own table (where
  // launchers older than the call-tables section look), the others'
  // there, by architecture.
  void calls() {
    std::vector<Target> targets = ir_.targets;
    std::sort(targets.begin(), targets.end(), [](const Target& a, const Target& b) { return a.audit_arch < b.audit_arch; });
    for (const Target& target : targets) {
      std::vector<aasm::plan::ProvenanceCall> table = calls_of(target);
      if (target.audit_arch == aasm::plan::kProvenanceCallsArch) out_.calls = std::move(table);
      else out_.other_calls.push_back({target.audit_arch, std::move(table)});
    }
  }

  std::vector<aasm::plan::ProvenanceCall> calls_of(const Target& target) const {
    std::map<int, aasm::plan::ProvenanceCall> by_number;
    for (llvm::StringRef name : known_syscall_names())
      if (std::optional<int> number = syscall_number(target, name); number && *number >= 0 && *number < 0xFFFF)
        by_number.try_emplace(*number, aasm::plan::ProvenanceCall{uint16_t(*number), name.str(), {}});
    // A uid/gid call is privileged only where the policy keeps its capability
    // (GroupMember::capability): without it, it can only keep or lower ids.
    const auto& kept = ir_.isolation.linux_capabilities;
    for (llvm::StringRef group : kSensitiveGroups)
      for (const GroupMember& member : find_group(group)->members)
        if (member.capability.empty() || (kept && kept->count(member.capability.str())))
          if (std::optional<int> number = syscall_number(target, member.syscall))
            if (auto it = by_number.find(*number); it != by_number.end() && it->second.sensitive_group.empty())
              it->second.sensitive_group = group.str();
    std::vector<aasm::plan::ProvenanceCall> table;
    for (auto& [number, call] : by_number) table.push_back(std::move(call));
    return table;
  }

  aasm::plan::Provenance take(const std::vector<PolicyDocument>& documents) {
    for (const SourceDocument& source : ir_.sources)
      out_.sources.push_back({source.name, tier_name(source.tier), source.file});
    for (const PolicyDocument& doc : documents) document(doc);
    syscalls(documents);
    socket_rules();
    fallbacks();
    calls();
    return std::move(out_);
  }

 private:
  const PolicyIR& ir_;
  const llvm::SourceMgr& sources_;
  aasm::plan::Provenance out_;
};

}  // namespace

aasm::plan::Provenance build_provenance(const std::vector<PolicyDocument>& documents, const PolicyIR& ir,
                                        const llvm::SourceMgr& sources) {
  return Builder(ir, sources).take(documents);
}

}  // namespace aasmc
