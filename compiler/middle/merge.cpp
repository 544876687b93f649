#include "middle/merge.h"

#include "plan/host_pattern.h"
#include "plan/namespaces.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace aasmc {
namespace {

// Documents broad -> narrow, so a narrower value is attributed as the one that
// shrank a broader one. The meet itself does not depend on the order.
std::vector<const PolicyDocument*> by_tier(const std::vector<PolicyDocument>& documents) {
  std::vector<const PolicyDocument*> ordered;
  for (const PolicyDocument& doc : documents) ordered.push_back(&doc);
  std::stable_sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->tier < b->tier; });
  return ordered;
}

std::vector<PathGrant> grants_of(const std::vector<PathEntry>& entries, bool from_write = false) {
  std::vector<PathGrant> grants;
  for (const PathEntry& entry : entries) grants.push_back({entry.path, false, entry.source, std::nullopt, from_write});
  return normalize_paths(std::move(grants));
}

// `get` gives a document's grants, or nothing where it does not constrain.
template <typename Get>
std::optional<std::vector<PathGrant>> merge_grants(const std::vector<const PolicyDocument*>& docs, Get&& get) {
  std::optional<std::vector<PathGrant>> merged;
  for (const PolicyDocument* doc : docs) {
    std::optional<std::vector<PathGrant>> grants = get(*doc);
    if (!grants) continue;
    merged = merged ? intersect_paths(*merged, *grants) : std::move(*grants);
  }
  return merged;
}

template <typename Get>
std::optional<std::vector<PathGrant>> merge_paths(const std::vector<const PolicyDocument*>& docs, Get&& get) {
  return merge_grants(docs, [&](const PolicyDocument& doc) -> std::optional<std::vector<PathGrant>> {
    const std::vector<PathEntry>* entries = get(doc);
    if (!entries) return std::nullopt;
    return grants_of(*entries);
  });
}

// A document's readable trees: its reads and, a tree that may be written may be
// read (docs/policy-language.md), its writes: gcc reopens the temporary files
// it creates, git reads back the objects it writes. Per document, before the
// meet, so the merge permits nothing a document forbids (a document that
// confines reads but not writes adds nothing).
std::optional<std::vector<PathGrant>> readable(const PolicyDocument& doc) {
  if (!doc.filesystem || !doc.filesystem->read) return std::nullopt;
  std::vector<PathGrant> grants = grants_of(doc.filesystem->read->allow);
  if (doc.filesystem->write)
    for (PathGrant& w : grants_of(doc.filesystem->write->allow, true))
      if (std::none_of(grants.begin(), grants.end(), [&](const PathGrant& r) { return contains(r.path, w.path); }))
        grants.push_back(std::move(w));
  return normalize_paths(std::move(grants));
}

// Pins: the union (a pin narrows what may run, so any tier may add one, and
// none can take another's away). Two documents pinning one file are one pin,
// attributed to the broadest, then the first by name: whatever order the
// files were given in. Not normalized: a pin is a file, never a tree.
std::vector<PathGrant> merge_pinned(const std::vector<const PolicyDocument*>& docs) {
  std::vector<std::pair<PathGrant, const PolicyDocument*>> pins;
  for (const PolicyDocument* doc : docs)
    if (doc->filesystem && doc->filesystem->pinned)
      for (const PathEntry& entry : *doc->filesystem->pinned)
        pins.push_back({{entry.path, false, entry.source, std::nullopt, false}, doc});
  std::stable_sort(pins.begin(), pins.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.path, a.second->tier, a.second->name) < std::tie(b.first.path, b.second->tier, b.second->name);
  });
  std::vector<PathGrant> pinned;
  for (auto& [pin, doc] : pins)
    if (pinned.empty() || !(pinned.back() == pin)) pinned.push_back(std::move(pin));
  return pinned;
}

FilesystemIR merge_filesystem(const std::vector<const PolicyDocument*>& docs) {
  auto verb = [&](std::optional<PathAllowList> FilesystemNode::*member) {
    return merge_paths(docs, [&](const PolicyDocument& doc) -> const std::vector<PathEntry>* {
      if (!doc.filesystem || !((*doc.filesystem).*member)) return nullptr;
      return &((*doc.filesystem).*member)->allow;
    });
  };
  FilesystemIR fs{merge_grants(docs, readable), verb(&FilesystemNode::write), verb(&FilesystemNode::execute)};
  auto optional = merge_paths(docs, [](const PolicyDocument& doc) -> const std::vector<PathEntry>* {
    return doc.filesystem && doc.filesystem->optional ? &*doc.filesystem->optional : nullptr;
  });
  auto covered = [](const std::optional<std::vector<PathGrant>>& list, const PathTemplate& path) {
    return list && std::any_of(list->begin(), list->end(), [&](const PathGrant& o) { return contains(o.path, path); });
  };
  if (optional)
    for (auto* grants : {&fs.read, &fs.write, &fs.execute})
      if (*grants)
        for (PathGrant& grant : **grants) grant.optional = covered(optional, grant.path);
  // Protected subtrees: the union (any tier can protect). Whether one may be
  // missing is the word of the documents that protect it, not the meet of
  // every optional list: a tier that adds `${CWD}/.git/hooks` to a profile
  // whose own `optional` never names `.git` could otherwise never let a
  // workspace that is not a git repository launch (the meet of its optional
  // list with the profile's drops `${CWD}/.git`). A document that writes no
  // `optional` defers to the cascade's. A kept path stays required if any
  // protection at or beneath it is required, so no document's demand is lost
  // where normalizing keeps only the covering path.
  std::vector<PathGrant> readonly;
  for (const PolicyDocument* doc : docs)
    if (doc->filesystem && doc->filesystem->readonly) {
      std::optional<std::vector<PathGrant>> own;
      if (doc->filesystem->optional) own = grants_of(*doc->filesystem->optional);
      for (PathGrant& grant : grants_of(*doc->filesystem->readonly)) {
        grant.optional = covered(own ? own : optional, grant.path);
        readonly.push_back(std::move(grant));
      }
    }
  fs.readonly = normalize_paths(readonly);
  fs.pinned = merge_pinned(docs);
  for (PathGrant& kept : fs.readonly)
    kept.optional = std::all_of(readonly.begin(), readonly.end(),
                                [&](const PathGrant& g) { return g.optional || !contains(kept.path, g.path); });
  return fs;
}

// Host patterns as the parser checked them, by their canonical spelling.
std::map<std::string, SourceRef> canonical_hosts(const std::vector<NameEntry>& names) {
  std::map<std::string, SourceRef> out;
  for (const NameEntry& name : names)
    out.emplace(aasm::plan::host_pattern_text(*aasm::plan::parse_host_pattern(name.name)), name.source);
  return out;
}

// Two allow-lists of host patterns meet pattern by pattern: what both allow
// (`*.example.com` and `api.example.com` give `api.example.com`), from the
// narrower of the two.
void meet_hosts(std::optional<std::map<std::string, SourceRef>>& merged, std::map<std::string, SourceRef> next) {
  if (!merged) {
    merged = std::move(next);
    return;
  }
  std::map<std::string, SourceRef> out;
  for (const auto& [a_text, a_from] : *merged)
    for (const auto& [b_text, b_from] : next) {
      const aasm::plan::HostPattern a = *aasm::plan::parse_host_pattern(a_text);
      const std::optional<aasm::plan::HostPattern> both = aasm::plan::meet(a, *aasm::plan::parse_host_pattern(b_text));
      if (both) out.emplace(aasm::plan::host_pattern_text(*both), *both == a ? a_from : b_from);
    }
  merged = std::move(out);
}

// One document's TCP port list meets another's host names: each name keeps
// the ports both allow (`tcp:443` and `api.example.com` give
// `api.example.com:443`), and the ports go, since the broker, in the
// command's own network namespace, is what enforces them (Landlock's port
// list there would shut the command out of the broker). UDP goes too: the
// namespace has no route for it. A deny-only `hosts` has no names to put
// the ports on; check_lowerable.cpp refuses it.
void ports_onto_hosts(NetworkRuleIR& rule) {
  std::map<std::string, SourceRef> narrowed;
  for (const auto& [text, from] : *rule.hosts) {
    aasm::plan::HostPattern pattern = *aasm::plan::parse_host_pattern(text);
    std::vector<uint16_t> ports;
    if (pattern.port) ports.push_back(pattern.port);
    else ports.assign(std::begin(aasm::plan::kWebPorts), std::end(aasm::plan::kWebPorts));
    for (uint16_t port : ports) {
      if (!rule.tcp_ports->count(port)) continue;
      pattern.port = port;
      narrowed.emplace(aasm::plan::host_pattern_text(pattern), from);
    }
  }
  rule.hosts = std::move(narrowed);
  rule.tcp_ports.reset();
  rule.udp.reset();
}

std::optional<NetworkRuleIR> merge_direction(const std::vector<const PolicyDocument*>& docs,
                                             std::optional<NetworkRule> NetworkNode::*direction) {
  std::optional<NetworkRuleIR> merged;
  bool all_allow_lists_have_udp = true;
  std::optional<SourceRef> udp;
  for (const PolicyDocument* doc : docs) {
    if (!doc->network || !((*doc->network).*direction)) continue;
    const NetworkRule& rule = *((*doc->network).*direction);
    if (!merged) merged.emplace();
    if (rule.kind == NetworkRule::Kind::kNone) {
      if (!merged->none) merged->from = rule.source;
      merged->none = true;
    } else if (rule.kind == NetworkRule::Kind::kAllow) {
      std::map<uint16_t, SourceRef> ports;
      std::optional<SourceRef> this_udp;
      for (const PortEntry& entry : rule.allow) {
        if (entry.protocol == PortEntry::Protocol::kUdp) this_udp = entry.source;
        else ports.emplace(entry.port, entry.source);
      }
      all_allow_lists_have_udp = all_allow_lists_have_udp && this_udp.has_value();
      if (this_udp) udp = this_udp;
      meet_keys(merged->tcp_ports, std::move(ports));
    } else {
      if (!merged->brokered) merged->brokered = rule.source;
      if (rule.hosts) meet_hosts(merged->hosts, canonical_hosts(*rule.hosts));
      for (const NameEntry& host : rule.hosts_deny)
        merged->hosts_denied.emplace(aasm::plan::host_pattern_text(*aasm::plan::parse_host_pattern(host.name)), host.source);
    }
  }
  if (merged && merged->tcp_ports && all_allow_lists_have_udp) merged->udp = udp;
  if (merged && !merged->none && merged->brokered && merged->tcp_ports && merged->hosts) ports_onto_hosts(*merged);
  return merged;
}

// The strictest value wins (`true` for a deny, `false` for an opt-in); the
// laxer settings it overrode are noted.
void meet_flag(std::optional<Effective<bool>>& merged, const std::optional<Located<bool>>& next,
               bool strictest = true) {
  if (!next) return;
  if (!merged) {
    merged = Effective<bool>{next->value, next->source, {}};
  } else if (next->value == strictest && merged->value != strictest) {
    merged->narrowed.push_back(merged->from);
    merged->value = strictest;
    merged->from = next->source;
  } else if (next->value != strictest && merged->value == strictest) {
    merged->narrowed.push_back(next->source);
  }
}

void meet_minimum(std::optional<Effective<uint64_t>>& merged, const std::optional<Located<uint64_t>>& next) {
  if (!next) return;
  if (!merged) {
    merged = Effective<uint64_t>{next->value, next->source, {}};
  } else if (next->value < merged->value) {
    merged->narrowed.push_back(merged->from);
    merged->value = next->value;
    merged->from = next->source;
  } else if (next->value > merged->value) {
    merged->narrowed.push_back(next->source);
  }
}

ResourcesIR merge_resources(const std::vector<const PolicyDocument*>& docs) {
  ResourcesIR out;
  for (const PolicyDocument* doc : docs) {
    if (!doc->resources) continue;
    const ResourcesNode& r = *doc->resources;
    meet_minimum(out.memory, r.memory);
    meet_minimum(out.swap, r.swap);
    meet_minimum(out.pids, r.pids);
    meet_minimum(out.cpu_millicores, r.cpu_millicores);
    meet_minimum(out.wall_clock_seconds, r.wall_clock_seconds);
    meet_minimum(out.stdout_bytes, r.stdout_bytes);
    meet_minimum(out.stderr_bytes, r.stderr_bytes);
    meet_minimum(out.open_files, r.open_files);
    meet_minimum(out.file_size, r.file_size);
    meet_minimum(out.tmp_size, r.tmp_size);
  }
  return out;
}

// `LC_*` ∩ `LC_ALL` = `LC_ALL`; `A*` ∩ `AB*` = `AB*`; otherwise equal names.
std::optional<std::string> meet_pattern(const std::string& a, const std::string& b) {
  const bool a_prefix = !a.empty() && a.back() == '*', b_prefix = !b.empty() && b.back() == '*';
  const llvm::StringRef a_stem = a_prefix ? llvm::StringRef(a).drop_back() : llvm::StringRef(a);
  const llvm::StringRef b_stem = b_prefix ? llvm::StringRef(b).drop_back() : llvm::StringRef(b);
  if (a_prefix && llvm::StringRef(b).startswith(a_stem)) return b;
  if (b_prefix && llvm::StringRef(a).startswith(b_stem)) return a;
  if (a == b) return a;
  return std::nullopt;
}

EnvironmentIR merge_environment(const std::vector<const PolicyDocument*>& docs, Diagnostics& diags) {
  EnvironmentIR out;
  for (const PolicyDocument* doc : docs) {
    if (!doc->environment) continue;
    if (doc->environment->pass) {
      std::map<std::string, SourceRef> next;
      for (const NameEntry& entry : *doc->environment->pass) next.emplace(entry.name, entry.source);
      if (!out.pass) {
        out.pass = std::move(next);
      } else {
        std::map<std::string, SourceRef> met;
        for (const auto& [a, a_source] : *out.pass)
          for (const auto& [b, b_source] : next)
            if (auto both = meet_pattern(a, b)) met.emplace(*both, *both == b ? b_source : a_source);
        out.pass = std::move(met);
      }
    }
    for (const auto& [name, value] : doc->environment->set.value_or(std::vector<std::pair<NameEntry, NameEntry>>{})) {
      auto [it, inserted] = out.set.emplace(name.name, Effective<std::string>{value.name, value.source, {}});
      if (inserted || it->second.value == value.name) continue;
      diags.error(value.source.loc,
                  "environment.set gives " + name.name + " a second value ('" + value.name + "', was '" +
                      it->second.value + "'); the cascade must agree on one",
                  diag::kConflict, value.source.range);
      diags.note(it->second.from.loc, "the other value was set here");
    }
  }
  return out;
}

IsolationIR merge_isolation(const std::vector<const PolicyDocument*>& docs) {
  IsolationIR out;
  for (const PolicyDocument* doc : docs) {
    if (!doc->isolation) continue;
    const IsolationNode& iso = *doc->isolation;
    for (const NameEntry& ns : iso.namespaces.value_or(std::vector<NameEntry>{})) out.namespaces.emplace(ns.name, ns.source);
    if (iso.linux_capabilities) {
      std::map<std::string, SourceRef> caps;
      for (const NameEntry& cap : *iso.linux_capabilities) caps.emplace(cap.name, cap.source);
      meet_keys(out.linux_capabilities, std::move(caps));
    }
    if (iso.degraded) {
      std::map<Domain, SourceRef> domains;
      for (const Located<Domain>& d : *iso.degraded) domains.emplace(d.value, d.source);
      meet_keys(out.degraded, std::move(domains));
    }
    meet_flag(out.filesystem_view, iso.filesystem_view);
  }
  // The view needs its own mount namespace, and a PID namespace for its
  // /proc (docs/filesystem-view.md); the launcher adds a user namespace
  // where it runs without root. Whether the policy asks for neither itself
  // tells the launcher whether a view left out may take them along.
  if (out.view()) {
    out.namespaces_for_the_view_alone = true;
    for (const aasm::plan::NamespaceName& ns : aasm::plan::kNamespaceNames)
      if (ns.bit & (aasm::plan::kNamespaceMount | aasm::plan::kNamespacePid))
        if (!out.namespaces.emplace(ns.name, out.filesystem_view->from).second) out.namespaces_for_the_view_alone = false;
  }
  return out;
}

// `deny` wins; allow-lists intersect over subtrees, as filesystem ones do.
std::optional<UnixSocketsIR> merge_unix_sockets(const std::vector<const PolicyDocument*>& docs) {
  const auto node = [](const PolicyDocument& doc) -> const UnixSocketsNode* {
    return doc.ipc && doc.ipc->unix_sockets ? &*doc.ipc->unix_sockets : nullptr;
  };
  std::optional<UnixSocketsIR> merged;
  for (const PolicyDocument* doc : docs)
    if (const UnixSocketsNode* n = node(*doc); n && n->deny && !merged)
      merged = UnixSocketsIR{true, std::nullopt, n->source};
  if (merged) return merged;
  auto allow = merge_paths(docs, [&](const PolicyDocument& doc) -> const std::vector<PathEntry>* {
    const UnixSocketsNode* n = node(doc);
    return n ? &n->allow : nullptr;
  });
  if (!allow) return std::nullopt;
  return UnixSocketsIR{false, std::move(allow), {}};
}

// The default of an absent ipc.unix_sockets: deny when the filesystem is
// confined (the filesystem rules do not stop connect() to a socket file).
void default_unix_sockets(PolicyIR& ir) {
  if (!ir.ipc.unix_sockets && !ir.filesystem.empty()) ir.ipc.unix_sockets = UnixSocketsIR{true, std::nullopt, {}};
}

// A denied domain outranks every allow-list of that domain.
void apply_capability_denials(PolicyIR& ir) {
  for (const auto& [domain, source] : ir.capabilities_denied) {
    auto deny_paths = [&](std::optional<std::vector<PathGrant>>& verb) { verb = std::vector<PathGrant>{}; };
    auto deny_network = [&, &source = source](std::optional<NetworkRuleIR>& direction) {
      if (!direction) direction.emplace();
      direction->none = true;
      direction->from = source;
    };
    switch (domain) {
      case Domain::kFileRead: deny_paths(ir.filesystem.read); break;
      case Domain::kFileWrite: deny_paths(ir.filesystem.write); break;
      case Domain::kFileExecute: deny_paths(ir.filesystem.execute); break;
      case Domain::kNetworkOutbound: deny_network(ir.network.outbound); break;
      case Domain::kNetworkBind: deny_network(ir.network.bind); break;
      case Domain::kIpc:
        ir.ipc.unix_sockets = UnixSocketsIR{true, std::nullopt, source};
        ir.ipc.abstract_unix_sockets_denied = Effective<bool>{true, source, {}};
        ir.ipc.signals_denied = Effective<bool>{true, source, {}};
        break;
      case Domain::kCredential:
        ir.environment.pass = std::map<std::string, SourceRef>{};
        break;
      // process_creation and syscall act on the syscall IR (resolve_syscalls.cpp);
      // resource and filesystem_view have no allow-list to shrink.
      case Domain::kProcessCreation:
      case Domain::kSyscall:
      case Domain::kResource:
      case Domain::kFilesystemView: break;
    }
  }
}

}  // namespace

bool UnixSocketsIR::unrestricted() const {
  return !deny && allow && std::any_of(allow->begin(), allow->end(), [](const PathGrant& g) {
    return g.path.base == PathBase::kAbsolute && g.path.rest == "/";
  });
}

bool ResourcesIR::empty() const {
  return !memory && !swap && !pids && !cpu_millicores && !wall_clock_seconds && !stdout_bytes && !stderr_bytes &&
         !open_files && !file_size;
}

namespace {

// Tree order: like string order, but '/' before every other byte, so that a
// path's descendants follow it without a gap ("/a", "/a/b", "/a-b").
bool tree_less(const PathTemplate& a, const PathTemplate& b) {
  if (a.base != b.base) return a.base < b.base;
  const std::string &x = a.rest, &y = b.rest;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (x[i] == y[i]) continue;
    if (x[i] == '/') return true;
    if (y[i] == '/') return false;
    return uint8_t(x[i]) < uint8_t(y[i]);
  }
  return x.size() < y.size();
}

// Sorted in tree order, without a grant another one covers. Stable, so the
// first of two equal grants (the broader document's) keeps its provenance.
std::vector<PathGrant> covering_set(std::vector<PathGrant> grants) {
  std::stable_sort(grants.begin(), grants.end(), [](const PathGrant& a, const PathGrant& b) {
    return tree_less(a.path, b.path);
  });
  std::vector<PathGrant> kept;
  for (PathGrant& grant : grants)
    if (kept.empty() || !contains(kept.back().path, grant.path)) kept.push_back(std::move(grant));
  return kept;
}

// Every proper ancestor of `path` with the same base, nearest first.
std::vector<PathTemplate> ancestors(const PathTemplate& path) {
  std::vector<PathTemplate> out;
  std::string rest = path.rest;
  while (!rest.empty() && rest != "/") {
    rest.resize(rest.rfind('/'));
    if (rest.empty() && path.base == PathBase::kAbsolute) rest = "/";
    out.push_back({path.base, rest});
  }
  return out;
}

std::vector<PathGrant> in_path_order(std::vector<PathGrant> grants) {
  std::sort(grants.begin(), grants.end());
  return grants;
}

}  // namespace

std::vector<PathGrant> normalize_paths(std::vector<PathGrant> grants) {
  return in_path_order(covering_set(std::move(grants)));
}

// O((n + m) log m): for each grant of `a`, its one possible ancestor in `b`
// (b covers nothing twice) by lookup, its descendants in `b` as a range.
std::vector<PathGrant> intersect_paths(const std::vector<PathGrant>& a, const std::vector<PathGrant>& b) {
  const std::vector<PathGrant> left = covering_set(a), right = covering_set(b);
  auto find = [&](const PathTemplate& path) -> const PathGrant* {
    auto it = std::lower_bound(right.begin(), right.end(), path,
                               [](const PathGrant& g, const PathTemplate& p) { return tree_less(g.path, p); });
    return it != right.end() && it->path == path ? &*it : nullptr;
  };
  std::vector<PathGrant> out;
  for (const PathGrant& x : left) {
    // y in b covering x: x survives as it is.
    const PathGrant* cover = find(x.path);
    for (const PathTemplate& up : ancestors(x.path))
      if (!cover) cover = find(up);
    if (cover) {
      out.push_back(cover->path == x.path ? *cover : x);
      // Read because written only where neither side grants it as a read.
      if (cover->path == x.path) out.back().from_write = cover->from_write && x.from_write;
      continue;
    }
    // y in b beneath x: y survives, cut from x.
    auto it = std::upper_bound(right.begin(), right.end(), x.path,
                               [](const PathTemplate& p, const PathGrant& g) { return tree_less(p, g.path); });
    for (; it != right.end() && contains(x.path, it->path); ++it) {
      PathGrant kept = *it;
      kept.narrowed = x.from;
      out.push_back(std::move(kept));
    }
  }
  return normalize_paths(std::move(out));
}

MergedPolicy merge_cascade(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                           Diagnostics& diags) {
  const auto docs = by_tier(documents);
  MergedPolicy merged;
  PolicyIR& ir = merged.ir;
  ir.targets = targets;
  for (const PolicyDocument& doc : documents)
    ir.sources.push_back({doc.name, doc.tier, doc.file, doc.file_name, doc.file_digest});
  for (const PolicyDocument* doc : docs)
    for (const Located<Domain>& d : doc->capabilities_deny.value_or(std::vector<Located<Domain>>{}))
      ir.capabilities_denied.emplace(d.value, d.source);
  ir.filesystem = merge_filesystem(docs);
  for (const PolicyDocument* doc : docs)
    if (doc->filesystem)
      meet_flag(ir.filesystem.templates_may_resolve_to_system_roots,
                doc->filesystem->templates_may_resolve_to_system_roots, false);
  ir.network = {merge_direction(docs, &NetworkNode::outbound), merge_direction(docs, &NetworkNode::bind)};
  for (const PolicyDocument* doc : docs) {
    if (!doc->ipc) continue;
    meet_flag(ir.ipc.abstract_unix_sockets_denied, doc->ipc->abstract_unix_sockets_denied);
    meet_flag(ir.ipc.signals_denied, doc->ipc->signals_denied);
  }
  ir.ipc.unix_sockets = merge_unix_sockets(docs);
  ir.resources = merge_resources(docs);
  ir.environment = merge_environment(docs, diags);
  ir.isolation = merge_isolation(docs);
  apply_capability_denials(ir);
  default_unix_sockets(ir);
  // A safe default of every plan (docs/policy-language.md): the command never
  // signals outside its own tree, so it cannot stop or kill its supervisor and
  // janitor, nor, as root without capabilities, every root process of the host.
  // Only `ipc.signals: allow` widens it.
  if (!ir.ipc.signals_denied) ir.ipc.signals_denied = Effective<bool>{true, SourceRef{}, {}};
  merged.syscalls = merge_syscalls(documents, ir.isolation.linux_capabilities, targets, diags);
  return merged;
}

}  // namespace aasmc
