// Property tests of the cascade merge over random documents: the meet permits
// nothing either document forbids, and it is commutative and idempotent.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "frontend/quantity.h"
#include "backend/egress_lowering.h"
#include "middle/build_ir.h"
#include "middle/resolve_syscalls.h"
#include "supervisor/egress_broker.h"

namespace aasmc {
namespace {

const char* const kPaths[] = {"/", "/a", "/a/b", "/a/b/c", "/a/c", "/d", "${CWD}", "${CWD}/x", "${HOME}"};
const char* const kProbePaths[] = {"/",    "/a",  "/a/b",      "/a/b/c",     "/a/b/c/d", "/a/bb", "/a/c",
                                   "/d/e", "/e",  "${CWD}",    "${CWD}/x/y", "${CWD}/z", "${HOME}/z"};
const char* const kSyscalls[] = {"read", "write", "openat", "close", "getppid", "ptrace", "mount", "kill", "futex",
                                 "uname", "brk", "mmap"};
const char* const kEnv[] = {"PATH", "HOME", "LC_*", "LC_ALL", "LANG*", "LANG"};
const char* const kEnvProbes[] = {"PATH", "HOME", "LC_ALL", "LC_CTYPE", "LANG", "LANGUAGE", "X"};
const char* const kNamespaces[] = {"pid", "ipc", "uts", "net"};
const char* const kCaps[] = {"CAP_NET_BIND_SERVICE", "CAP_CHOWN", "CAP_KILL"};
const uint16_t kPorts[] = {80, 443, 8080};
// Patterns that nest (*.example.com over a.example.com), differ by port, and an address.
const char* const kHostPatterns[] = {"a.example.com", "*.example.com", "*.b.example.com", "a.example.com:8443",
                                     "192.0.2.1", "other.test"};
const char* const kHostProbes[] = {"a.example.com:443", "a.example.com:8443", "x.b.example.com:80", "example.com:443",
                                   "192.0.2.1:443", "other.test:443", "a.example.com:22"};
const char* const kPins[] = {"/a/b/tool", "/a/c", "/d/lib.so"};

PathTemplate path(const char* text) {
  PathError error;
  auto parsed = parse_path(text, error);
  REQUIRE(parsed);
  return *parsed;
}

class RandomPolicy {
 public:
  explicit RandomPolicy(uint32_t seed) : rng_(seed) {}

  PolicyDocument document(int index) {
    PolicyDocument doc;
    doc.name = "doc" + std::to_string(index);
    doc.tier = Tier(pick(4));
    if (coin()) doc.filesystem = filesystem(index);
    if (coin()) doc.syscalls = syscalls(index);
    if (coin()) doc.network = NetworkNode{maybe_rule(index, true), maybe_rule(index, false)};
    if (coin()) doc.ipc = IpcNode{maybe_flag(index), maybe_flag(index), std::nullopt};
    if (coin()) doc.resources = resources(index);
    if (coin()) doc.environment = EnvironmentNode{names(kEnv, index), std::nullopt};
    if (coin()) doc.isolation = IsolationNode{names(kNamespaces, index), maybe_names(kCaps, index), std::nullopt, std::nullopt};
    return doc;
  }

 private:
  bool coin() { return rng_() % 2 == 0; }
  size_t pick(size_t n) { return rng_() % n; }
  SourceRef ref(int index) { return {llvm::SMLoc(), {}, index}; }

  std::vector<PathEntry> paths(int index) {
    std::vector<PathEntry> out;
    for (const char* p : kPaths)
      if (pick(4) == 0) out.push_back({path(p), ref(index)});
    return out;
  }
  std::optional<PathAllowList> maybe_paths(int index) {
    if (coin()) return std::nullopt;
    return PathAllowList{ref(index), paths(index)};
  }
  FilesystemNode filesystem(int index) {
    return {maybe_paths(index), maybe_paths(index), maybe_paths(index), std::nullopt, maybe_flag(index), std::nullopt,
            maybe_pins(index)};
  }
  std::optional<std::vector<PathEntry>> maybe_pins(int index) {
    if (coin()) return std::nullopt;
    std::vector<PathEntry> out;
    for (const char* p : kPins)
      if (coin()) out.push_back({path(p), ref(index)});
    return out;
  }
  template <size_t N>
  std::vector<NameEntry> names(const char* const (&pool)[N], int index) {
    std::vector<NameEntry> out;
    for (const char* name : pool)
      if (coin()) out.push_back({name, ref(index)});
    return out;
  }
  template <size_t N>
  std::optional<std::vector<NameEntry>> maybe_names(const char* const (&pool)[N], int index) {
    if (coin()) return std::nullopt;
    return names(pool, index);
  }
  SyscallsNode syscalls(int index) {
    SyscallsNode node;
    static const Action kDefaults[] = {{Action::Kind::kKill, 0}, {Action::Kind::kErrno, 1}, {Action::Kind::kLog, 0}};
    node.allow = maybe_names(kSyscalls, index);
    node.deny = maybe_names(kSyscalls, index);
    if (node.allow && node.deny)  // one document may not both allow and deny a name
      std::erase_if(*node.deny, [&](const NameEntry& d) {
        return std::any_of(node.allow->begin(), node.allow->end(), [&](const NameEntry& a) { return a.name == d.name; });
      });
    if ((node.allow || node.deny) && coin()) node.default_action = Located<Action>{kDefaults[pick(3)], ref(index)};
    return node;
  }
  std::optional<NetworkRule> maybe_rule(int index, bool outbound) {
    if (coin()) return std::nullopt;
    NetworkRule rule;
    rule.source = ref(index);
    const size_t kind = pick(outbound ? 3 : 2);
    rule.kind = NetworkRule::Kind(kind);
    if (rule.kind == NetworkRule::Kind::kAllow) {
      for (uint16_t port : kPorts)
        if (coin()) rule.allow.push_back({PortEntry::Protocol::kTcp, port, ref(index)});
      if (outbound && coin()) rule.allow.push_back({PortEntry::Protocol::kUdp, 0, ref(index)});
    } else if (rule.kind == NetworkRule::Kind::kHosts) {
      if (coin()) {
        rule.hosts.emplace();
        for (const char* host : kHostPatterns)
          if (coin()) rule.hosts->push_back({host, ref(index)});
      }
      for (const char* host : kHostPatterns)
        if (coin() && coin()) rule.hosts_deny.push_back({host, ref(index)});
    }
    return rule;
  }
  std::optional<Located<bool>> maybe_flag(int index) {
    if (coin()) return std::nullopt;
    return Located<bool>{coin(), ref(index)};
  }
  ResourcesNode resources(int index) {
    ResourcesNode r;
    auto value = [&](uint64_t scale) -> std::optional<Located<uint64_t>> {
      if (coin()) return std::nullopt;
      return Located<uint64_t>{(1 + pick(8)) * scale, ref(index)};
    };
    r.memory = value(1u << 20);
    r.pids = value(16);
    r.wall_clock_seconds = value(60);
    return r;
  }

  std::mt19937 rng_;
};

// The merged cascade, with its syscalls resolved as build_ir resolves them.
struct Merged {
  PolicyIR ir;
  std::optional<SyscallIR> syscalls;
};

Merged merge(const std::vector<PolicyDocument>& docs) {
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const std::vector<Target> targets = {*find_target("x86_64")};
  MergedPolicy merged = merge_cascade(docs, targets, diags);
  std::optional<SyscallIR> syscalls = resolve_syscalls(merged.syscalls, merged.ir.capabilities_denied, targets, diags);
  return {std::move(merged.ir), std::move(syscalls)};
}

bool path_allowed(const std::optional<std::vector<PathGrant>>& verb, const PathTemplate& probe) {
  if (!verb) return true;
  return std::any_of(verb->begin(), verb->end(), [&](const PathGrant& g) { return contains(g.path, probe); });
}

bool syscall_allowed(const std::optional<SyscallIR>& s, const std::string& name) {
  if (!s) return true;
  if (s->mode == SyscallIR::Mode::kDenylist) return !s->denied.count(name);
  return s->allowed.count(name) > 0;
}

bool env_passed(const std::optional<std::map<std::string, SourceRef>>& pass, llvm::StringRef name) {
  if (!pass) return true;
  for (const auto& [pattern, from] : *pass) {
    llvm::StringRef p(pattern);
    if (p.endswith("*") ? name.startswith(p.drop_back()) : name == p) return true;
  }
  return false;
}

// Everything `merged` permits, `one` permits too.
void check_no_wider(const PolicyIR& merged, const std::optional<SyscallIR>& merged_syscalls, const PolicyIR& one,
                    const std::optional<SyscallIR>& one_syscalls) {
  for (const char* p : kProbePaths) {
    const PathTemplate probe = path(p);
    INFO("path ", p);
    CHECK((!path_allowed(merged.filesystem.read, probe) || path_allowed(one.filesystem.read, probe)));
    CHECK((!path_allowed(merged.filesystem.write, probe) || path_allowed(one.filesystem.write, probe)));
    CHECK((!path_allowed(merged.filesystem.execute, probe) || path_allowed(one.filesystem.execute, probe)));
  }
  for (const char* name : kSyscalls) {
    INFO("syscall ", name);
    CHECK((!syscall_allowed(merged_syscalls, name) || syscall_allowed(one_syscalls, name)));
  }
  // A document that refuses calls takes part with its default (errno:EPERM unwritten).
  if (merged_syscalls && one_syscalls &&
      (one_syscalls->mode == SyscallIR::Mode::kAllowlist || !one_syscalls->denied.empty()))
    CHECK(merged_syscalls->default_action.value.strictness() >= one_syscalls->default_action.value.strictness());
  for (auto direction : {&NetworkIR::outbound, &NetworkIR::bind}) {
    const auto& m = merged.network.*direction;
    const auto& o = one.network.*direction;
    if (!o) continue;
    REQUIRE(m);
    if (o->none) CHECK(m->none);
    if (m->none) continue;
    // The ports went onto the merge's names: every one allowed is listed. (With no
    // names, a deny-only hosts, the ports stay, and the compile is refused.)
    if (o->tcp_ports && m->brokered && !m->tcp_ports) {
      for (const char* probe : kHostProbes) {
        INFO("host ", probe);
        const auto request = *aasm::plan::parse_host_request(probe, 443);
        if (aasm::egress::decide(*lower_egress(merged.network), request).allowed) CHECK(o->tcp_ports->count(request.port));
      }
    } else if (o->tcp_ports) {
      REQUIRE(m->tcp_ports);
      for (const auto& [port, from] : *m->tcp_ports) CHECK(o->tcp_ports->count(port));
      if (m->udp) CHECK(o->udp);
    }
    // A host the merge's broker lets through, every document's lets through.
    if (o->brokered) {
      REQUIRE(m->brokered);
      const aasm::plan::Egress merged_rules = *lower_egress(merged.network), one_rules = *lower_egress(one.network);
      for (const char* probe : kHostProbes) {
        INFO("host ", probe);
        const auto request = *aasm::plan::parse_host_request(probe, 443);
        CHECK((!aasm::egress::decide(merged_rules, request).allowed || aasm::egress::decide(one_rules, request).allowed));
      }
    }
  }
  // A pin only refuses more: every document's pins stay.
  for (const PathGrant& pin : one.filesystem.pinned)
    CHECK(std::count(merged.filesystem.pinned.begin(), merged.filesystem.pinned.end(), pin) == 1);
  // An opt-in: any document's `false` keeps the merge out.
  if (one.filesystem.templates_may_resolve_to_system_roots && !one.filesystem.templates_may_resolve_to_system_roots->value)
    CHECK(!merged.filesystem.system_root_templates_allowed());
  // A document's own deny, not the safe default every merge adds (no document).
  if (one.ipc.signals_denied && one.ipc.signals_denied->value && one.ipc.signals_denied->from.document >= 0)
    CHECK(merged.ipc.signals_denied->value);
  if (one.ipc.abstract_unix_sockets_denied && one.ipc.abstract_unix_sockets_denied->value)
    CHECK(merged.ipc.abstract_unix_sockets_denied->value);
  for (auto field : {&ResourcesIR::memory, &ResourcesIR::pids, &ResourcesIR::wall_clock_seconds})
    if (one.resources.*field) {
      REQUIRE(merged.resources.*field);
      CHECK((merged.resources.*field)->value <= (one.resources.*field)->value);
    }
  for (const char* name : kEnvProbes)
    CHECK((!env_passed(merged.environment.pass, name) || env_passed(one.environment.pass, name)));
  for (const auto& [ns, from] : one.isolation.namespaces) CHECK(merged.isolation.namespaces.count(ns));
  if (one.isolation.linux_capabilities) {
    REQUIRE(merged.isolation.linux_capabilities);
    for (const auto& [cap, from] : *merged.isolation.linux_capabilities) CHECK(one.isolation.linux_capabilities->count(cap));
  }
}

// print_ir without the source list, which names the documents in order.
std::string semantics(const Merged& merged) {
  PolicyIR copy = merged.ir;
  copy.sources.clear();
  copy.syscalls = merged.syscalls;
  return print_ir(copy);
}

TEST_CASE("merge: the meet of random documents permits nothing either forbids") {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    INFO("seed ", seed);
    RandomPolicy random(seed);
    const std::vector<PolicyDocument> a = {random.document(0)};
    const std::vector<PolicyDocument> b = {random.document(0)};
    const std::vector<PolicyDocument> ab = {a[0], b[0]};
    const Merged m = merge(ab), ia = merge(a), ib = merge(b);
    check_no_wider(m.ir, m.syscalls, ia.ir, ia.syscalls);
    check_no_wider(m.ir, m.syscalls, ib.ir, ib.syscalls);
  }
}

TEST_CASE("merge: the meet is commutative and idempotent") {
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    INFO("seed ", seed);
    RandomPolicy random(seed);
    PolicyDocument a = random.document(0), b = random.document(1);
    b.tier = a.tier;  // the same tier: order alone differs
    const std::vector<PolicyDocument> ab = {a, b}, ba = {b, a}, aa = {a, a}, just_a = {a};
    CHECK(semantics(merge(ab)) == semantics(merge(ba)));
    CHECK(semantics(merge(aa)) == semantics(merge(just_a)));
  }
}

}  // namespace
}  // namespace aasmc
