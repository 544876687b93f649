#include "supervisor/denial_report.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "base/path_tree.h"
#include "kernel/arch.h"
#include "plan/host_pattern.h"
#include "kernel/landlock_uapi.h"
#include "supervisor/landlock_audit.h"

namespace aasm::denials {
namespace {

using plan::ControlDomain;
using plan::Provenance;
using plan::ProvenanceEntry;
namespace fs = landlock::fs;

// The policy node each Landlock control domain's rights come from.
constexpr std::pair<ControlDomain, const char*> kDomainNodes[] = {
    {ControlDomain::kFileRead, "filesystem.read"},        {ControlDomain::kFileWrite, "filesystem.write"},
    {ControlDomain::kFileExecute, "filesystem.execute"},  {ControlDomain::kNetworkOutbound, "network.outbound"},
    {ControlDomain::kNetworkBind, "network.bind"},        {ControlDomain::kIpc, "ipc"},
};

// Paths whose reading or writing hands the command a secret or the host: an
// edit granting one of them, or a tree holding one, carries a warning.
constexpr const char* kSensitivePaths[] = {
    "/root", "${HOME}/.ssh", "${HOME}/.gnupg", "${HOME}/.aws", "${HOME}/.azure", "${HOME}/.config/gcloud",
    "${HOME}/.kube", "${HOME}/.docker", "${HOME}/.netrc", "${HOME}/.git-credentials", "${HOME}/.password-store",
    "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
};

// Rights checked on the directory an entry is made in or removed from
// (Landlock's own rule), so the edit names the parent, not the new name.
constexpr uint64_t kParentRights = fs::kRemoveDir | fs::kRemoveFile | fs::kMakeChar | fs::kMakeDir | fs::kMakeReg |
                                   fs::kMakeSock | fs::kMakeFifo | fs::kMakeBlock | fs::kMakeSym | fs::kRefer;

// A template's path here, "" when its variable is unset.
std::string resolve(const std::string& text, const LaunchContext& context) {
  for (const auto& [variable, value] : {std::pair("${CWD}", &context.cwd), std::pair("${HOME}", &context.home)})
    if (text.compare(0, std::strlen(variable), variable) == 0) return value->empty() ? "" : *value + text.substr(std::strlen(variable));
  return text;
}

// A path as a template, under the deeper of ${CWD} and ${HOME}: what a
// policy writes, and what the receipt may keep (no home directory string).
std::string as_template(const std::string& path, const LaunchContext& context) {
  std::pair<size_t, std::string> best{0, path};
  for (const auto& [variable, value] : {std::pair("${CWD}", &context.cwd), std::pair("${HOME}", &context.home)})
    if (!value->empty() && *value != "/" && at_or_beneath(path, *value) && value->size() > best.first)
      best = {value->size(), variable + path.substr(value->size())};
  return best.second;
}

std::string sensitive_path_widened(const std::string& grant, const LaunchContext& context) {
  for (const char* sensitive : kSensitivePaths) {
    const std::string here = resolve(sensitive, context);
    if (!here.empty() && (at_or_beneath(grant, here) || at_or_beneath(here, grant))) return sensitive;
  }
  return "";
}

// A rule's action as the provenance writes it (Action::text): an `allow` or
// `log` rule never refused anything.
bool refuses(const std::string& value) { return value.rfind("kill", 0) == 0 || value.rfind("errno:", 0) == 0; }

std::string errno_name(int error) {
  const char* name = error ? strerrorname_np(error) : nullptr;
  return name ? name : std::to_string(error);
}

// An architecture by name, or its AUDIT_ARCH value where it has none here
// (a 32-bit call on a 64-bit host).
std::string arch_text(uint32_t arch) {
  const std::string name = plan::audit_arch_name(arch);
  if (name != "unknown-arch") return name;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", arch);
  return std::string("architecture ") + hex;
}

class Join {
 public:
  Join(const Denial& denial, const plan::Plan& plan, const LaunchContext& context)
      : d_(denial), plan_(plan), context_(context), p_(*plan.provenance) {}

  Explanation run() {
    out_.path = d_.path.empty() || d_.layer == Layer::kBroker ? d_.path : as_template(d_.path, context_);
    switch (d_.layer) {
      case Layer::kSeccomp: seccomp(); break;
      case Layer::kLandlockFs: filesystem(); break;
      case Layer::kLandlockNet: network(); break;
      case Layer::kLandlockScope: scope(); break;
      case Layer::kBroker: broker(); break;
    }
    if (out_.policy.empty() && out_.note.empty())
      out_.note = "no document of the plan refuses it: a rule skipped as optional here, or a mechanism outside "
                  "the policy's lists (the filesystem view, a safe default of the launcher)";
    return std::move(out_);
  }

 private:
  PolicyLine line_of(const ProvenanceEntry& e) const {
    PolicyLine l{"", "", e.line, e.column, e.key, e.item, e.value};
    if (e.source != plan::kNoSource) {
      l.document = p_.sources[e.source].document;
      l.file = p_.sources[e.source].file;
    }
    return l;
  }

  void refused_by(const ProvenanceEntry& e, std::string list, std::string op, std::string item, std::string widens) {
    out_.policy.push_back(line_of(e));
    const PolicyLine& l = out_.policy.back();
    const bool at_line = op != "add";
    out_.edits.push_back({l.document, l.file, std::move(list), std::move(op), std::move(item), at_line ? l.line : 0,
                          at_line ? l.column : 0, std::move(widens)});
  }

  template <typename Pred>
  std::vector<const ProvenanceEntry*> find(Pred pred) const {
    std::vector<const ProvenanceEntry*> found;
    for (const ProvenanceEntry& e : p_.entries)
      if (pred(e)) found.push_back(&e);
    return found;
  }

  // capabilities.deny of a domain refuses all of it.
  void capability_denials(ControlDomain domain, const std::string& widens) {
    const std::string name = plan::control_domain_name(domain);
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.key == "capabilities.deny" && e.item == name; }))
      refused_by(*e, "capabilities.deny", "remove", name, widens);
  }

  // Whether one of the document's entries of these lists grants the path.
  bool granted(uint16_t source, std::initializer_list<std::string_view> lists) const {
    return !find([&](const ProvenanceEntry& e) {
              return e.source == source && !e.item.empty() && std::find(lists.begin(), lists.end(), e.key) != lists.end() &&
                     at_or_beneath(d_.path, resolve(e.item, context_));
            }).empty();
  }

  // The documents whose `list` does not grant the path; for reading, a
  // writable tree counts too (a tree that may be written may be read).
  void path_lists(const std::string& list, const std::string& grant) {
    const std::string also = list == "filesystem.read.allow" ? "filesystem.write.allow" : list;
    for (const ProvenanceEntry* head : find([&](const ProvenanceEntry& e) { return e.key == list && e.item.empty(); }))
      if (!granted(head->source, {list, also}))
        refused_by(*head, list, "add", as_template(grant, context_), sensitive_path_widened(grant, context_));
  }

  void filesystem() {
    for (uint64_t bit = 1; bit && bit <= d_.rights; bit <<= 1)
      if (d_.rights & bit)
        if (const char* name = landlock::right_name(landlock::RightKind::kFs, bit)) out_.rights.push_back(name);
    if (d_.path.empty()) {
      out_.note = "the witness did not resolve the path";
      return;
    }
    const std::string grant = d_.rights & kParentRights ? std::string(parent_of(d_.path)) : d_.path;
    if (d_.rights & fs::kResolveUnix) unix_sockets(grant);
    if (!plan_.landlock) return;
    for (const plan::LandlockControl& control : plan_.landlock->controls) {
      if (!(control.fs & d_.rights & ~fs::kResolveUnix)) continue;
      const auto node = std::find_if(std::begin(kDomainNodes), std::end(kDomainNodes),
                                     [&](const auto& n) { return n.first == control.domain; });
      if (node == std::end(kDomainNodes)) continue;
      const std::string name = node->second;
      path_lists(name + ".allow", grant);
      capability_denials(control.domain, sensitive_path_widened(grant, context_));
    }
  }

  void unix_sockets(const std::string& socket) {
    const std::string allow = "{allow: [" + as_template(socket, context_) + "]}";
    for (const ProvenanceEntry* e : find([](const ProvenanceEntry& e) { return e.key == "ipc.unix_sockets" && e.item.empty(); })) {
      if (e->value == "deny") refused_by(*e, e->key, "set", allow, "");
      else if (!granted(e->source, {"ipc.unix_sockets.allow"}))
        refused_by(*e, "ipc.unix_sockets.allow", "add", as_template(socket, context_), "");
    }
  }

  void network() {
    const bool bind = d_.rights & landlock::net::kBindTcp;
    out_.rights.push_back(landlock::right_name(landlock::RightKind::kNet, bind ? landlock::net::kBindTcp : landlock::net::kConnectTcp));
    const std::string node = bind ? "network.bind" : "network.outbound";
    const std::string port = "tcp:" + std::to_string(d_.port);
    const std::string widens = "the network";
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.key == node && e.item.empty(); })) {
      const bool listed = !find([&](const ProvenanceEntry& x) {
                             return x.source == e->source && x.key == node + ".allow" && x.item == port;
                           }).empty();
      if (e->value == "allow" && !listed) refused_by(*e, node + ".allow", "add", port, widens);
      else if (e->value != "allow") refused_by(*e, node, "set", "{allow: [" + port + "]}", widens);
    }
    capability_denials(bind ? ControlDomain::kNetworkBind : ControlDomain::kNetworkOutbound, widens);
  }

  // A host the broker refused: each document whose allow-list does not list
  // it (`hosts` written as a list or as hosts.allow), and each deny entry of it.
  void broker() {
    const std::string host = plan::host_port_text(d_.path, d_.port == 80 || d_.port == 443 ? 0 : d_.port);
    const std::string widens = "the network: " + host;
    const Result<plan::HostRequest> request = plan::parse_host_request(host, d_.port);
    const auto matches = [&](const ProvenanceEntry& e) {
      const Result<plan::HostPattern> pattern = plan::parse_host_pattern(e.item);
      return request && pattern && plan::host_matches(*pattern, *request, e.key.ends_with(".deny"));
    };
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.key == "network.outbound.hosts.deny" && matches(e); }))
      refused_by(*e, e->key, "remove", e->item, widens);
    for (const ProvenanceEntry* list : find([](const ProvenanceEntry& e) { return e.key == "network.outbound.hosts.allow" && e.item.empty(); }))
      if (find([&](const ProvenanceEntry& e) { return e.source == list->source && e.key == list->key && matches(e); }).empty())
        refused_by(*list, list->key, "add", host, widens);
    capability_denials(ControlDomain::kNetworkOutbound, widens);
  }

  void scope() {
    const bool signal = d_.rights & landlock::scope::kSignal;
    out_.rights.push_back(landlock::right_name(landlock::RightKind::kScope,
                                               signal ? landlock::scope::kSignal : landlock::scope::kAbstractUnixSocket));
    const std::string node = signal ? "ipc.signals" : "ipc.abstract_unix_sockets";
    const std::string widens = signal ? "signals to processes outside the run" : "abstract unix sockets outside the run";
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.key == node && e.value == "deny"; }))
      refused_by(*e, node, "set", "allow", widens);
    capability_denials(ControlDomain::kIpc, widens);
  }

  void seccomp() {
    const uint32_t arch = d_.arch ? d_.arch : kNativeAuditArch;
    const plan::ProvenanceCall* call = d_.syscall < 0 ? nullptr : plan::find_call(p_, arch, d_.syscall);
    if (!call) {
      std::string tables;
      for (const uint32_t known : plan::call_table_arches(p_))
        tables += (tables.empty() ? "" : ", ") + std::string(plan::audit_arch_name(known)) + "'s";
      out_.note = d_.syscall < 0 ? "the command was killed by SIGSYS; the exit status does not say which call"
                                 : "call number " + std::to_string(d_.syscall) + " of " + arch_text(arch) +
                                       " is not in the plan's call tables (" + (tables.empty() ? "none" : tables) +
                                       " calls)";
      return;
    }
    out_.call = call->name;
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.key == "syscalls.fallback" && e.item == call->name; }))
      if (d_.error && e->value.rfind("errno:" + errno_name(d_.error), 0) == 0) {
        out_.by_design = true;
        out_.note = "by design, not a denial: the plan answers " + call->name + " " + e->value +
                    " (a filter cannot read its flags); nothing to edit";
        return;
      }
    const std::string widens = call->sensitive_group.empty() ? "" : "@" + call->sensitive_group;
    const std::string allow_rule = "{syscall: " + call->name + ", action: allow}";
    for (const ProvenanceEntry* e : find([&](const ProvenanceEntry& e) { return e.item == call->name; })) {
      if (e->key == "syscalls.deny") refused_by(*e, e->key, "remove", call->name, widens);
      else if ((e->key == "syscalls.rules" || e->key == "capabilities.deny") && refuses(e->value))
        refused_by(*e, e->key, "change", call->name, widens);
      else if (e->key == "syscalls.safe_default") safe_default(*e, allow_rule, widens);
      else if (e->key == "ipc.unix_sockets" || e->key == "network.outbound" || e->key == "network.bind")
        socket_rule(*e, call->name);
    }
    if (!out_.policy.empty()) return;
    // Not denied by name: an allowlist without it, answered with the default.
    for (const ProvenanceEntry* head : find([](const ProvenanceEntry& e) { return e.key == "syscalls.allow" && e.item.empty(); }))
      if (find([&](const ProvenanceEntry& e) { return e.source == head->source && e.key == "syscalls.allow" && e.item == call->name; }).empty())
        refused_by(*head, "syscalls.allow", "add", call->name, widens);
    if (out_.policy.empty()) return;
    for (const ProvenanceEntry* e : find([](const ProvenanceEntry& e) { return e.key == "syscalls.default"; }))
      out_.policy.push_back(line_of(*e));
  }

  // A socket rule of ipc.unix_sockets `deny`, network.outbound or
  // network.bind (compiler/backend/socket_rules.h), by its errno and, for
  // socket() and socketpair(), the domain: only the ipc rules refuse AF_UNIX.
  void socket_rule(const ProvenanceEntry& e, const std::string& call) {
    if (!d_.error || e.value.rfind("errno:" + errno_name(d_.error), 0) != 0) return;
    if (e.key == "network.bind") {
      if (d_.port) {
        refused_by(e, e.key, "set", "{allow: [tcp:" + std::to_string(d_.port) + "]}", "the network");
        return;
      }
      out_.policy.push_back(line_of(e));  // no TCP port named: the edit is the user's
      out_.note = "network.bind: none refuses " + call +
                  "() for every family (a filter cannot see a socket's family there, and listen() on a socket never "
                  "bound would serve an ephemeral port); a server needs network.bind: {allow: [tcp:PORT]}";
      return;
    }
    const bool ipc = e.key == "ipc.unix_sockets";
    const std::optional<uint64_t> domain = denials::argument_of(d_, 0);
    if ((call == "socket" || call == "socketpair") && (domain == uint64_t(AF_UNIX)) != ipc) return;
    if (!ipc) {  // the call names no port: the edit is the user's
      out_.policy.push_back(line_of(e));
      const bool inet = domain == uint64_t(AF_INET) || domain == uint64_t(AF_INET6);
      out_.note = call == "socket" && domain && !inet
                      ? "network.outbound's socket rules refuse every family but unix, inet and inet6 (family " +
                            std::to_string(*domain) +
                            " here; netlink, packet, vsock and the others are beyond any port rule): no network key "
                            "allows it; a syscalls.rules allow rule for socket would, for every family"
                      : "network.outbound's socket rules refuse what Landlock does not see; listing the TCP ports the "
                        "command connects to (network.outbound: {allow: [tcp:PORT]}) lets it make inet stream sockets";
    } else if (e.source == plan::kNoSource) {  // the default where the filesystem is confined
      out_.policy.push_back(line_of(e));
      out_.note = "ipc.unix_sockets is deny by default where the filesystem is confined; a document that sets it "
                  "to an allow-list lets unix sockets by path";
    } else {
      refused_by(e, e.key, "set", "{allow: [/]}", "unix sockets by path, every one the filesystem rules reach");
    }
  }

  // A safe default no document wrote: an `allow` rule opts out of it (for
  // every safe default; a bare name does only for some), in the narrowest
  // document that writes syscalls, or the narrowest of all.
  void safe_default(const ProvenanceEntry& e, const std::string& allow_rule, const std::string& widens) {
    out_.policy.push_back(line_of(e));
    uint16_t narrowest = p_.sources.empty() ? plan::kNoSource : uint16_t(p_.sources.size() - 1);
    for (const ProvenanceEntry& x : p_.entries)
      if (x.source != plan::kNoSource && x.key.compare(0, 9, "syscalls.") == 0) narrowest = x.source;
    if (narrowest == plan::kNoSource) return;
    out_.edits.push_back({p_.sources[narrowest].document, p_.sources[narrowest].file, "syscalls.rules", "add",
                          allow_rule, 0, 0, widens});
  }

  const Denial& d_;
  const plan::Plan& plan_;
  const LaunchContext& context_;
  const Provenance& p_;
  Explanation out_;
};

std::string describe(const Denial& d, const Explanation& e) {
  std::string text;
  if (d.layer == Layer::kSeccomp) {
    text = e.call.empty() ? (d.syscall < 0 ? "a system call" : "call number " + std::to_string(d.syscall)) : e.call;
    text += d.error ? " -> " + errno_name(d.error) : " -> killed (SIGSYS)";
    return text;
  }
  for (const std::string& right : e.rights) text += (text.empty() ? "" : ",") + right;
  if (d.layer == Layer::kBroker) return "broker refused " + plan::host_port_text(d.path, d.port) + " -> HTTP 403, SOCKS5 reply 2";
  if (d.layer == Layer::kLandlockNet) text += " port " + std::to_string(d.port);
  if (!e.path.empty()) text += " " + e.path;
  return d.error ? text + " -> " + errno_name(d.error) : text;
}

}  // namespace

// The sentences' fixed words, which parse_edit_text reads back.
constexpr std::string_view kGroupThere = " (or the group there that holds it)";
constexpr std::string_view kWidens = "  [warning: widens ";

std::string edit_text(const Edit& e) {
  const std::string where = e.file.empty() ? "" : " in " + e.file;
  const std::string at = e.line ? " at " + e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) : where;
  std::string text;
  if (e.op == "add") text = "add " + e.item + " to " + e.list + where;
  else if (e.op == "remove") text = "remove " + e.item + " from " + e.list + at + std::string(kGroupThere);
  else if (e.op == "set") text = "set " + e.list + " to " + e.item + at;
  else text = "change the " + e.list + " entry" + at + " that refuses " + e.item;
  return e.widens.empty() ? text : text + std::string(kWidens) + e.widens + "]";
}

namespace {

bool take_prefix(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool take_suffix(std::string_view& s, std::string_view suffix) {
  if (!s.ends_with(suffix)) return false;
  s.remove_suffix(suffix.size());
  return true;
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "FILE:LINE:COL" into the edit's place; false when it is not one.
bool parse_place(std::string_view text, Edit& e) {
  const size_t col = text.rfind(':');
  const size_t line = col == std::string_view::npos || col == 0 ? std::string_view::npos : text.rfind(':', col - 1);
  if (line == std::string_view::npos || line == 0) return false;
  const std::string_view l = text.substr(line + 1, col - line - 1), c = text.substr(col + 1);
  if (!all_digits(l) || !all_digits(c)) return false;
  e.file = text.substr(0, line);
  e.line = uint32_t(std::stoul(std::string(l)));
  e.column = uint32_t(std::stoul(std::string(c)));
  return true;
}

// A list key: a dotted name without spaces.
bool is_list(std::string_view s) { return !s.empty() && s.find(' ') == std::string_view::npos; }

// "ITEM <word> LIST[ in FILE]" (add, remove): the first <word> after which
// a list and nothing or " in FILE" follow.
bool parse_item_then_list(std::string_view s, std::string_view word, bool at_allowed, Edit& e) {
  for (size_t at = s.find(word); at != std::string_view::npos; at = s.find(word, at + 1)) {
    std::string_view rest = s.substr(at + word.size());
    const size_t space = rest.find(' ');
    const std::string_view list = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space);
    Edit parsed = e;
    const bool placed = rest.empty() || (take_prefix(rest, " in ") && !rest.empty() && (parsed.file = rest, true)) ||
                        (at_allowed && take_prefix(rest, " at ") && parse_place(rest, parsed));
    if (at == 0 || !is_list(list) || !placed) continue;
    e = parsed;
    e.item = s.substr(0, at);
    e.list = list;
    return true;
  }
  return false;
}

// A trailing " at FILE:L:C" or " in FILE" of `s`, taken off into the edit.
void take_place(std::string_view& s, Edit& e) {
  if (const size_t at = s.rfind(" at "); at != std::string_view::npos && parse_place(s.substr(at + 4), e)) {
    s = s.substr(0, at);
    return;
  }
  if (const size_t in = s.rfind(" in "); in != std::string_view::npos && in + 4 < s.size()) {
    e.file = s.substr(in + 4);
    s = s.substr(0, in);
  }
}

}  // namespace

std::optional<Edit> parse_edit_text(std::string_view s) {
  Edit e;
  if (const size_t widens = s.rfind(kWidens); widens != std::string_view::npos && s.ends_with("]")) {
    e.widens = s.substr(widens + kWidens.size(), s.size() - widens - kWidens.size() - 1);
    s = s.substr(0, widens);
  }
  if (take_prefix(s, "add ")) {
    e.op = "add";
    if (!parse_item_then_list(s, " to ", false, e)) return std::nullopt;
  } else if (take_prefix(s, "remove ")) {
    e.op = "remove";
    if (!take_suffix(s, kGroupThere) || !parse_item_then_list(s, " from ", true, e)) return std::nullopt;
  } else if (take_prefix(s, "set ")) {
    e.op = "set";
    const size_t to = s.find(" to ");
    if (to == std::string_view::npos || !is_list(s.substr(0, to))) return std::nullopt;
    e.list = s.substr(0, to);
    s.remove_prefix(to + 4);
    take_place(s, e);
    e.item = s;
  } else if (take_prefix(s, "change the ")) {
    e.op = "change";
    const size_t entry = s.find(" entry"), refuses = s.rfind(" that refuses ");
    if (entry == std::string_view::npos || refuses == std::string_view::npos || refuses < entry) return std::nullopt;
    e.list = s.substr(0, entry);
    e.item = s.substr(refuses + 14);
    std::string_view place = s.substr(entry + 6, refuses - entry - 6);
    take_place(place, e);
    if (!place.empty() || !is_list(e.list)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (e.item.empty()) return std::nullopt;
  return e;
}

const char* layer_name(Layer layer) {
  switch (layer) {
    case Layer::kSeccomp: return "seccomp";
    case Layer::kLandlockFs: return "landlock_fs";
    case Layer::kLandlockNet: return "landlock_net";
    case Layer::kLandlockScope: return "landlock_scope";
    case Layer::kBroker: return "broker";
  }
  return "unknown";
}

const char* witness_name(Witness witness) {
  switch (witness) {
    case Witness::kListener: return "listener";
    case Witness::kKernelRecord: return "kernel_record";
    case Witness::kExitStatus: return "exit_status";
    case Witness::kTracer: return "tracer";
    case Witness::kLauncher: return "launcher";
    case Witness::kBroker: return "broker";
  }
  return "unknown";
}

std::string call_name(const plan::Plan& plan, int number) {
  if (plan.provenance)
    if (const plan::ProvenanceCall* call = plan::find_call(*plan.provenance, kNativeAuditArch, number)) return call->name;
  return "call number " + std::to_string(number);
}

std::string PolicyLine::where() const {
  if (file.empty()) return "built in";
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Explanation explain(const Denial& denial, const plan::Plan& plan, const LaunchContext& context) {
  if (!plan.provenance) {
    Explanation e;
    e.path = denial.path.empty() ? "" : as_template(denial.path, context);
    e.note = kNoProvenance;
    return e;
  }
  return Join(denial, plan, context).run();
}

namespace {

// kSummary's pointer, for a failed run, to the kinds this host did not
// show: --explain only where Landlock's refusals are among them (the tracer
// records those, not the view's EROFS nor a kill in a descendant).
bool landlock_unseen(const std::vector<std::string>& unseen) {
  return std::any_of(unseen.begin(), unseen.end(),
                     [](const std::string& s) { return s.starts_with(landlock_audit::kUnseenSubject); });
}

std::string unseen_hint(const std::vector<std::string>& unseen) {
  return std::string("this host cannot show every kind: run with ") +
         (landlock_unseen(unseen) ? "--explain to trace the filesystem and network refusals, or " : "") +
         "--denials=full to list what cannot be seen here and why";
}

// A path, an argument or an edit's item as one line of the report: the
// command names its files, and a name holding a newline would otherwise
// print report lines of its own (a forged "edit:" that aasmc suggest reads).
std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f && c != '\\') {
      out += c;
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", u);
    out += escaped;
  }
  return out;
}

}  // namespace

std::string render_report(const Log& log, const plan::Plan& plan, const LaunchContext& context,
                          const std::vector<std::string>& unseen, bool command_failed, Detail detail) {
  if (detail == Detail::kOff || (log.empty() && (unseen.empty() || !command_failed))) return "";
  std::string out;
  const auto say = [&out](const std::string& line) { out += "aasm-launch: denials: " + line + "\n"; };
  if (command_failed && detail == Detail::kFull)
    for (const std::string& sentence : unseen) say("not seen on this host: " + sentence);
  const bool hint = command_failed && !unseen.empty() && detail == Detail::kSummary;
  if (log.empty()) {
    if (detail == Detail::kSummary) say("none recorded, and " + unseen_hint(unseen));
    return out;
  }
  // By-design answers (Explanation::by_design) are no denials: counted
  // apart, listed only under kFull.
  std::vector<std::pair<const Log::Entry*, Explanation>> explained;
  size_t by_design = 0;
  for (const Log::Entry& entry : log.entries()) {
    explained.emplace_back(&entry, explain(entry.denial, plan, context));
    by_design += explained.back().second.by_design;
  }
  if (by_design == log.entries().size() && !log.dropped() && detail == Detail::kSummary) {
    if (hint) say("none recorded, and " + unseen_hint(unseen));
    return out;
  }
  say(std::to_string(log.entries().size() - by_design) + " distinct" +
      (by_design ? " (and " + std::to_string(by_design) + " by design, not denials)" : "") +
      (log.dropped() ? ", " + std::to_string(log.dropped()) + " more records dropped past the cap of " +
                           std::to_string(Log::kMaxDistinct) + " distinct"
                     : ""));
  if (!plan.provenance) say(kNoProvenance);
  for (const auto& [at, e] : explained) {
    const Log::Entry& entry = *at;
    if (e.by_design && detail != Detail::kFull) continue;
    out += "  " + one_line(describe(entry.denial, e)) + "  x" + std::to_string(entry.count) + (e.by_design ? "  (by design)" : "") + "\n";
    if (detail == Detail::kFull) {
      out += std::string("    seen by: ") + witness_name(entry.denial.witness) + " (" + layer_name(entry.denial.layer) + ")\n";
      if (!entry.denial.arguments.empty()) out += "    arguments: " + one_line(entry.denial.arguments) + "\n";
    }
    for (const PolicyLine& l : e.policy)
      out += "    refused by " + l.where() + (l.document.empty() ? "" : " (" + l.document + ")") + ": " + l.key +
             (l.item.empty() ? "" : " " + l.item) + (l.value.empty() ? "" : " = " + l.value) + "\n";
    for (const Edit& edit : e.edits) out += "    edit: " + one_line(edit_text(edit)) + "\n";
    if (!e.note.empty() && plan.provenance) out += "    " + one_line(e.note) + "\n";
  }
  // What was seen may not be what failed the command (a refused utimensat
  // beside the Landlock refusal of the file's creation).
  if (hint && landlock_unseen(unseen))
    say("Landlock's refusals are not seen on this host and may be among the causes: run with --explain to trace "
        "them");
  return out;
}

}  // namespace aasm::denials
