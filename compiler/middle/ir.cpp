#include "middle/ir.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "frontend/quantity.h"

namespace aasmc {
namespace {

// Prints the IR; with a SourceMgr, each value also says where it came from.
class Printer {
 public:
  // With `origins`, the lines keep no origin text: each line()'s origins go
  // there instead, by the line's number (explain --json).
  Printer(const PolicyIR& ir, const llvm::SourceMgr* sources, std::map<size_t, nlohmann::ordered_json>* origins = nullptr)
      : ir_(ir), sources_(sources), origins_(origins) {}

  std::string print() {
    out_ << "sources:\n";
    for (size_t i = 0; i < ir_.sources.size(); ++i) {
      const SourceDocument& s = ir_.sources[i];
      out_ << "  [" << i << "] " << s.name << " (" << tier_name(s.tier) << ") " << s.file_name
           << " sha256:" << aasm::to_hex(s.file_digest) << "\n";
    }
    out_ << "targets:";
    for (const Target& target : ir_.targets) out_ << " " << target.name;
    out_ << "\n";
    for (const auto& [domain, source] : ir_.capabilities_denied)
      line("capabilities.deny: " + std::string(domain_name(domain)), source);
    filesystem();
    if (ir_.filesystem.empty() && !ir_.filesystem.readonly.empty()) verb("filesystem.readonly", ir_.filesystem.readonly);
    if (ir_.filesystem.empty() && !ir_.filesystem.pinned.empty())
      verb("filesystem.pinned", ir_.filesystem.pinned, "by content (SHA-256 when compiled)");
    flag("filesystem.templates_may_resolve_to_system_roots", ir_.filesystem.templates_may_resolve_to_system_roots,
         "true", "false");
    network("network.outbound", ir_.network.outbound);
    network("network.bind", ir_.network.bind);
    flag("ipc.abstract_unix_sockets", ir_.ipc.abstract_unix_sockets_denied);
    flag("ipc.signals", ir_.ipc.signals_denied);
    unix_sockets();
    syscalls();
    resources();
    environment();
    isolation();
    return out_.str();
  }

 private:
  std::string where(const SourceRef& source) const {
    if (!sources_ || source.document < 0 || !source.loc.isValid()) return "";
    const SourceDocument& doc = ir_.sources[size_t(source.document)];
    const auto [line, column] = sources_->getLineAndColumn(source.loc);
    return doc.name + " (" + tier_name(doc.tier) + ") " + doc.file + ":" + std::to_string(line) + ":" +
           std::to_string(column);
  }

  nlohmann::ordered_json origin_json(const SourceRef& source) const {
    if (!sources_ || source.document < 0 || !source.loc.isValid()) return nullptr;
    const SourceDocument& doc = ir_.sources[size_t(source.document)];
    const auto [line, column] = sources_->getLineAndColumn(source.loc);
    return {{"document", doc.name}, {"tier", tier_name(doc.tier)}, {"file", doc.file}, {"line", line}, {"column", column}};
  }

  // The origins of one line, as explain --json gives them.
  void record(const std::string& text, const SourceRef& from, const std::vector<SourceRef>& narrowed) {
    auto others = nlohmann::ordered_json::array();
    for (const SourceRef& other : narrowed)
      if (auto o = origin_json(other); !o.is_null()) {
        o["relation"] = is_broader(other, from) ? "narrows" : "overrules";
        others.push_back(o);
      }
    // The line's number: the newlines written so far, counted from where the last count stopped.
    const std::string_view written = out_.view();
    lines_ += size_t(std::count(written.begin() + long(counted_), written.end(), '\n'));
    counted_ = written.size();
    (*origins_)[lines_] = {{"from", origin_json(from)}, {"others", others}};
    out_ << text << "\n";
  }

  bool is_broader(const SourceRef& a, const SourceRef& b) const {
    if (a.document < 0 || b.document < 0) return true;
    return ir_.sources[size_t(a.document)].tier <= ir_.sources[size_t(b.document)].tier;
  }

  void line(const std::string& text, const SourceRef& from, const std::vector<SourceRef>& narrowed = {}) {
    if (origins_) return record(text, from, narrowed);
    out_ << text;
    const std::string origin = where(from);
    if (!origin.empty()) out_ << "    <- " << origin;
    // A broader tier's value that this one shrank, or a narrower tier's wider
    // request that the broader value overruled.
    for (const SourceRef& other : narrowed)
      if (const std::string o = where(other); !o.empty())
        out_ << (is_broader(other, from) ? "; narrows " : "; overrules a wider value from ") << o;
    out_ << "\n";
  }

  // `word` heads the list: "allow" for a verb, what the list is otherwise.
  void verb(const char* name, const std::optional<std::vector<PathGrant>>& grants, const char* word = "allow") {
    if (!grants) return;
    out_ << name << ": " << word << (grants->empty() ? " nothing\n" : "\n");
    for (const PathGrant& g : *grants) {
      std::vector<SourceRef> narrowed;
      if (g.narrowed) narrowed.push_back(*g.narrowed);
      line("  " + g.path.text() + (g.optional ? " (optional)" : "") + (g.from_write ? " (writable, so readable)" : ""),
           g.from, narrowed);
    }
  }

  // A verb no document constrains is stated, as is a filesystem no verb confines.
  void filesystem() {
    const FilesystemIR& fs = ir_.filesystem;
    if (fs.empty()) {
      out_ << "filesystem: unconstrained\n";
      return;
    }
    for (const auto& [name, grants] : {std::pair("filesystem.read", &fs.read), std::pair("filesystem.write", &fs.write),
                                       std::pair("filesystem.execute", &fs.execute)}) {
      if (*grants) verb(name, *grants);
      else out_ << name << ": unconstrained\n";
    }
    if (!fs.readonly.empty()) verb("filesystem.readonly", fs.readonly);
    if (!fs.pinned.empty()) verb("filesystem.pinned", fs.pinned, "by content (SHA-256 when compiled)");
  }

  void network(const char* name, const std::optional<NetworkRuleIR>& rule) {
    if (!rule) return;
    if (rule->none) {
      line(std::string(name) + ": none", rule->from);
      return;
    }
    if (rule->tcp_ports) {
      out_ << name << ": allow" << (rule->tcp_ports->empty() && !rule->udp ? " nothing\n" : "\n");
      for (const auto& [port, from] : *rule->tcp_ports) line("  tcp:" + std::to_string(port), from);
      if (rule->udp) line("  udp", *rule->udp);
    }
    if (rule->brokered) {
      if (!rule->hosts) line(std::string(name) + ": hosts every name, brokered", *rule->brokered);
      else out_ << name << ": hosts, brokered" << (rule->hosts->empty() ? ": none\n" : "\n");
      if (rule->hosts)
        for (const auto& [host, from] : *rule->hosts) line("  " + host, from);
      for (const auto& [host, from] : rule->hosts_denied) line("  deny " + host, from);
    }
  }

  void flag(const char* name, const std::optional<Effective<bool>>& value, const char* if_true = "deny",
            const char* if_false = "allow") {
    if (!value) return;
    const bool by_default = value->from.document < 0;  // a safe default no document wrote
    line(std::string(name) + ": " + (value->value ? if_true : if_false) + (by_default ? " (default)" : ""), value->from,
         value->narrowed);
  }

  void unix_sockets() {
    if (!ir_.ipc.unix_sockets) return;
    const UnixSocketsIR& u = *ir_.ipc.unix_sockets;
    if (u.deny) {
      line(std::string("ipc.unix_sockets: deny") + (u.implied() ? " (default: the filesystem is confined)" : ""), u.from);
      return;
    }
    verb("ipc.unix_sockets", u.allow);
  }

  void syscalls() {
    if (!ir_.syscalls) return;
    const SyscallIR& s = *ir_.syscalls;
    if (s.mode == SyscallIR::Mode::kAllowlist) {
      line("syscalls: allowlist, default " + s.default_action.value.text(), s.default_action.from,
           s.default_action.narrowed);
      for (const auto& [name, entry] : s.allowed)
        line("  allow " + name + (entry.origin == SyscallEntryIR::Origin::kStartup ? " (start-up set)" : ""),
             entry.from);
    } else {
      line("syscalls: denylist, denied calls answer " + s.default_action.value.text(), s.default_action.from,
           s.default_action.narrowed);
    }
    for (const auto& [name, from] : s.denied) line("  deny " + name, from);
    for (const auto& [name, why] : s.left_out_of_deny) out_ << "  not denied " << name << " (" << why << ")\n";
    for (const SafeDefaultIR& d : s.safe_defaults) {
      out_ << "  safe default @" << d.group << ": " << d.action.text() << "\n";
      for (const auto& [name, from] : d.allowed_by_policy) line("    allowed by the policy: " + name, from);
    }
    for (const SyscallRuleIR& rule : s.rules) {
      const std::string text =
          "  rule " + rule.syscall + (rule.when_text ? " when " + rule.when_text->value : "") + ": " + rule.action.text();
      line(rule.safe_default.empty() ? text : text + " (safe default @" + rule.safe_default + ")", rule.from);
      if (!rule.when) continue;
      for (const Target& target : ir_.targets)
        if (auto it = rule.normalized.find(target.name); it != rule.normalized.end())
          out_ << "    " << target.name << ": " << print_condition(it->second, rule.syscall, target) << "\n";
    }
  }

  void quantity(const char* name, const std::optional<Effective<uint64_t>>& value, const std::string& text) {
    if (value) line(std::string("resources.") + name + ": " + text, value->from, value->narrowed);
  }

  void resources() {
    const ResourcesIR& r = ir_.resources;
    auto bytes = [](const std::optional<Effective<uint64_t>>& v) { return v ? format_bytes(v->value) : ""; };
    auto number = [](const std::optional<Effective<uint64_t>>& v) { return v ? std::to_string(v->value) : ""; };
    quantity("memory", r.memory, bytes(r.memory));
    quantity("swap", r.swap, bytes(r.swap));
    quantity("pids", r.pids, number(r.pids));
    if (r.cpu_millicores) {
      const uint64_t m = r.cpu_millicores->value;
      std::string text = std::to_string(m / 1000);
      if (m % 1000) {
        char fraction[8];
        std::snprintf(fraction, sizeof fraction, ".%03u", unsigned(m % 1000));
        text += fraction;
        while (text.back() == '0') text.pop_back();
      }
      quantity("cpu", r.cpu_millicores, text);
    }
    quantity("wall_clock", r.wall_clock_seconds, number(r.wall_clock_seconds) + "s");
    quantity("stdout", r.stdout_bytes, bytes(r.stdout_bytes));
    quantity("stderr", r.stderr_bytes, bytes(r.stderr_bytes));
    quantity("open_files", r.open_files, number(r.open_files));
    quantity("file_size", r.file_size, bytes(r.file_size));
    quantity("tmp_size", r.tmp_size, bytes(r.tmp_size));
  }

  void environment() {
    const EnvironmentIR& e = ir_.environment;
    if (e.pass) {
      out_ << "environment.pass:" << (e.pass->empty() ? " nothing\n" : "\n");
      for (const auto& [name, from] : *e.pass) line("  " + name, from);
    }
    for (const auto& [name, value] : e.set) line("environment.set: " + name + "=" + value.value, value.from);
  }

  void isolation() {
    flag("isolation.filesystem_view", ir_.isolation.filesystem_view, "true", "false");
    for (const auto& [ns, from] : ir_.isolation.namespaces) line("isolation.namespaces: " + ns, from);
    if (ir_.isolation.linux_capabilities) {
      out_ << "isolation.linux_capabilities:" << (ir_.isolation.linux_capabilities->empty() ? " none\n" : "\n");
      for (const auto& [cap, from] : *ir_.isolation.linux_capabilities) line("  " + cap, from);
    }
    if (ir_.isolation.degraded)
      for (const auto& [domain, from] : *ir_.isolation.degraded)
        line(std::string("isolation.degraded: ") + domain_name(domain), from);
  }

  const PolicyIR& ir_;
  const llvm::SourceMgr* sources_;
  std::map<size_t, nlohmann::ordered_json>* origins_;
  std::ostringstream out_;
  size_t counted_ = 0, lines_ = 0;  // record(): out_'s newlines before counted_
};

}  // namespace

std::string print_ir(const PolicyIR& ir) { return Printer(ir, nullptr).print(); }

std::string explain_ir(const PolicyIR& ir, const llvm::SourceMgr& sources) { return Printer(ir, &sources).print(); }

nlohmann::ordered_json explain_ir_json(const PolicyIR& ir, const llvm::SourceMgr& sources) {
  std::map<size_t, nlohmann::ordered_json> origins;
  const std::string text = Printer(ir, &sources, &origins).print();
  nlohmann::ordered_json out = {{"schema", "aasm.dev/explain/v1"}};
  auto& docs = out["sources"] = nlohmann::ordered_json::array();
  for (const SourceDocument& s : ir.sources)
    docs.push_back({{"name", s.name}, {"tier", tier_name(s.tier)}, {"file", s.file_name},
                    {"sha256", aasm::to_hex(s.file_digest)}});
  auto& targets = out["targets"] = nlohmann::ordered_json::array();
  for (const Target& target : ir.targets) targets.push_back(target.name);
  // Every line of the text, its indentation as depth, its origins where it has one.
  auto& lines = out["lines"] = nlohmann::ordered_json::array();
  size_t number = 0, start = 0;
  for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1, ++number) {
    const std::string row = text.substr(start, end - start);
    const size_t indent = row.find_first_not_of(' ');
    nlohmann::ordered_json entry = {{"depth", (indent == std::string::npos ? 0 : indent) / 2},
                                    {"text", indent == std::string::npos ? "" : row.substr(indent)}};
    const auto found = origins.find(number);
    entry["from"] = found == origins.end() ? nlohmann::ordered_json(nullptr) : found->second["from"];
    entry["others"] = found == origins.end() ? nlohmann::ordered_json::array() : found->second["others"];
    lines.push_back(entry);
  }
  return out;
}

}  // namespace aasmc
