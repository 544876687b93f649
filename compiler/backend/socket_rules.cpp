#include "backend/socket_rules.h"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <vector>

#include "backend/egress_lowering.h"
#include "kernel/landlock_uapi.h"
#include "middle/resolve_syscalls.h"

namespace aasmc {
namespace {

struct SocketRule {
  const char* syscall;
  std::string when;
  int errno_value = EACCES;  // what Landlock answers, unless said otherwise
};

// network.outbound `none` or a `tcp:` allow-list: Landlock confines TCP
// connect() and the rules below the rest.
bool confines_outbound_tcp(const NetworkIR& network) {
  return network.outbound && (network.outbound->none || network.outbound->tcp_ports);
}

// Landlock covers TCP connect() and bind() only. A policy that constrains
// outbound TCP must also stop what Landlock does not see:
// - socket families: only AF_UNIX, AF_INET and AF_INET6, and no inet family
//   at all under outbound and bind `none` (nothing inet is left to do);
// - inet sockets other than TCP: datagram (unless `udp` is listed), raw, and
//   every stream protocol but TCP (SCTP, MPTCP, SMC: Landlock's hooks check
//   sk_is_tcp() and let them pass);
// - TCP Fast Open: sendto/sendmsg/sendmmsg with MSG_FASTOPEN open the
//   connection in tcp_sendmsg_fastopen() without the connect hook;
//   TCP_FASTOPEN_CONNECT defers the SYN to the first write (connect() is still
//   checked, refused for defence in depth) and TCP_REPAIR makes connect() skip
//   the handshake (CAP_NET_ADMIN only; refused all the same).
// The socket families a confined outbound leaves: AF_UNIX, AF_INET and
// AF_INET6. The others reach past any network namespace too (AF_VSOCK to
// the hypervisor), so the broker's namespace keeps this rule as well.
// libseccomp compares an argument once per rule, so "not in {...}" is
// written as the values around the allowed ones (a negative int is a large
// unsigned 32-bit value).
std::vector<SocketRule> family_rules() {
  return {{"socket", "domain == AF_UNSPEC || domain in {3, 4, 5, 6, 7, 8, 9} || domain > AF_INET6"},
          {"socketpair", "domain != AF_UNIX"}};
}

std::vector<SocketRule> outbound_rules(const NetworkIR& network) {
  const NetworkRuleIR& outbound = *network.outbound;
  const bool udp = !outbound.none && outbound.udp.has_value();
  const bool no_inet = outbound.none && network.bind && network.bind->none;
  std::vector<SocketRule> rules = family_rules();
  rules.insert(rules.end(), {
      {"sendto", "flags & MSG_FASTOPEN"},
      {"sendmsg", "flags & MSG_FASTOPEN"},
      {"sendmmsg", "flags & MSG_FASTOPEN"},
      {"setsockopt", "level == IPPROTO_TCP && optname in {TCP_FASTOPEN_CONNECT, TCP_REPAIR}"},
  });
  // EAFNOSUPPORT, what a kernel without the family answers: final for curl
  // and wget, which retry an EACCES (wget twenty times, for minutes).
  if (no_inet)
    rules.push_back({"socket", "domain in {AF_INET, AF_INET6}", EAFNOSUPPORT});
  else if (udp)  // every type the kernel defines but stream and datagram
    rules.push_back({"socket", "domain in {AF_INET, AF_INET6} && ((type & 15) == SOCK_RAW || (type & 15) == SOCK_RDM || "
                               "(type & 15) == SOCK_SEQPACKET || (type & 15) == SOCK_DCCP || (type & 15) == SOCK_PACKET)"});
  else
    rules.push_back({"socket", "domain in {AF_INET, AF_INET6} && (type & 15) != SOCK_STREAM"});
  if (!no_inet)  // a stream of any protocol but TCP (0 is TCP's default)
    rules.push_back({"socket", "domain in {AF_INET, AF_INET6} && (type & 15) == SOCK_STREAM && "
                               "(protocol in {1, 2, 3, 4, 5} || protocol > IPPROTO_TCP)"});
  if (udp)  // `udp` is UDP: not UDP-Lite (136), ICMP echo sockets (1, 58) or any other datagram protocol
    rules.push_back({"socket", "domain in {AF_INET, AF_INET6} && (type & 15) == SOCK_DGRAM && "
                               "(protocol in {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16} || protocol > IPPROTO_UDP)"});
  return rules;
}

// network.bind `none`: no endpoint of the command's may be reached by name.
// Landlock checks only TCP bind(), and these reach one without it:
// - listen() on a socket never bound: the kernel binds it to an ephemeral
//   port in inet_csk_listen_start(), without the bind hook;
// - bind() of a UDP (or any non-TCP inet) socket, which Landlock lets pass;
// - accept() on a listening socket the command inherited.
// A filter sees registers, not the socket's family, so each call is refused
// for every family: a unix socket server needs network.bind too. What is
// left is the port a UDP socket's first sendto() takes (docs/threat-model.md).
std::vector<SocketRule> bind_rules() { return {{"bind", ""}, {"listen", ""}, {"accept", ""}, {"accept4", ""}}; }

// network.bind `none`.
bool refuses_every_bind(const NetworkIR& network) { return network.bind && network.bind->none; }

// `(type & 15) == A || (type & 15) == B ...`: the condition language has no set
// test on a masked value.
std::string any_masked_type(std::initializer_list<int> types) {
  std::string out;
  for (int type : types) out += (out.empty() ? "" : " || ") + std::string("(type & 15) == ") + std::to_string(type);
  return out;
}

// ipc.unix_sockets `deny` without Landlock's RESOLVE_UNIX: no unix socket
// can be created, so none can connect or send to a path. socketpair()
// stays for stream and seqpacket pairs (libuv, Python and shells use them):
// a stream socket refuses a destination address (unix_stream_sendmsg:
// EISCONN/EOPNOTSUPP) and seqpacket ignores it, while a datagram socket
// honours one even when connected (unix_dgram_sendmsg), so a datagram pair
// (SOCK_RAW is a datagram socket for AF_UNIX) could still reach /dev/log or
// any datagram socket by path. Every type but stream and seqpacket is refused.
std::vector<SocketRule> unix_socket_rules() {
  return {{"socket", "domain == AF_UNIX"},
          {"socketpair", "domain == AF_UNIX && (" + any_masked_type({0, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}) + ")"}};
}

// Each rule answers its errno, in normal form for every target. `fallback`
// rules go to the programs the launcher installs only where a Landlock
// control with a seccomp fallback degrades.
llvm::Error add_errno_rules(std::vector<SyscallRuleIR>& out, const std::vector<SocketRule>& rules,
                            const SourceRef& from, bool fallback, const std::vector<Target>& targets) {
  for (const SocketRule& rule : rules) {
    ConditionError error;
    const bool always = rule.when.empty();
    std::optional<ConditionExpr> when = always ? std::nullopt : parse_condition(rule.when, error);
    std::optional<Located<std::string>> when_text;
    if (!always) when_text = Located<std::string>{rule.when, from};
    SyscallRuleIR lowered{rule.syscall, std::move(when_text), std::move(when),
                          Action{Action::Kind::kErrno, rule.errno_value}, from, {}, {}, fallback};
    const std::optional<NormalizeFailure> failure =
        always || lowered.when ? normalize_rule(lowered, targets) : NormalizeFailure{error, nullptr};
    if (failure)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "the socket rule for %s when %s%s%s: %s",
                                     rule.syscall, rule.when.c_str(), failure->target ? " on " : "",
                                     failure->target ? failure->target->name : "", failure->error.message.c_str());
    out.push_back(std::move(lowered));
  }
  return llvm::Error::success();
}

}  // namespace

llvm::Expected<std::vector<SocketRuleIR>> socket_rules_of(const PolicyIR& ir) {
  std::vector<SocketRuleIR> out;
  const auto add = [&](const char* node, const std::vector<SocketRule>& rules, const SourceRef& from, bool fallback) {
    std::vector<SyscallRuleIR> lowered;
    llvm::Error error = add_errno_rules(lowered, rules, from, fallback, ir.targets);
    for (SyscallRuleIR& rule : lowered) out.push_back({node, std::move(rule)});
    return error;
  };
  if (confines_outbound_tcp(ir.network))
    if (llvm::Error error = add("network.outbound", outbound_rules(ir.network), ir.network.outbound->from, false))
      return error;
  if (const NetworkRuleIR* brokered = brokered_outbound(ir.network))
    if (llvm::Error error = add("network.outbound.hosts", family_rules(), *brokered->brokered, false)) return error;
  if (refuses_every_bind(ir.network))
    if (llvm::Error error = add("network.bind", bind_rules(), ir.network.bind->from, false)) return error;
  // An allow-list needs Landlock's RESOLVE_UNIX; where the host lacks it and
  // ipc may degrade, these rules stand in (stricter); without degraded the
  // launch is refused, so no fallback is needed.
  if (const std::optional<UnixSocketsIR>& sockets = ir.ipc.unix_sockets; sockets && !sockets->unrestricted()) {
    const bool fallback = !sockets->deny;
    if (!fallback || ir.degraded_allowed(Domain::kIpc))
      if (llvm::Error error = add("ipc.unix_sockets", unix_socket_rules(), sockets->from, fallback))
        return error;
  }
  return out;
}

llvm::Expected<PolicyIR> with_socket_rules(PolicyIR ir) {
  llvm::Expected<std::vector<SocketRuleIR>> rules = socket_rules_of(ir);
  if (!rules) return rules.takeError();
  if (rules->empty()) return ir;
  std::vector<SyscallRuleIR>& all = syscalls_or_empty_denylist(ir).rules;
  auto at = std::find_if(all.begin(), all.end(), [](const SyscallRuleIR& rule) { return !rule.safe_default.empty(); });
  for (SocketRuleIR& rule : *rules) at = std::next(all.insert(at, std::move(rule.rule)));
  return ir;
}

namespace {

// Landlock's part of a network direction: "landlock connect_tcp (no port)".
std::string landlock_part(uint64_t right, const NetworkRuleIR& rule) {
  return std::string("landlock ") + aasm::landlock::right_name(aasm::landlock::RightKind::kNet, right) +
         (rule.none ? " (no port)" : " (listed ports)");
}

// The calls of `rules`, each once, as a sentence lists them: "a, b and c".
std::string calls_of(const std::vector<SocketRule>& rules) {
  std::vector<std::string> names;
  for (const SocketRule& rule : rules)
    if (std::find(names.begin(), names.end(), rule.syscall) == names.end()) names.emplace_back(rule.syscall);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace

std::optional<std::string> network_outbound_lowering(const NetworkIR& network) {
  if (!confines_outbound_tcp(network)) return std::nullopt;
  const NetworkRuleIR& out = *network.outbound;
  return landlock_part(aasm::landlock::net::kConnectTcp, out) +
         "; seccomp rules for what Landlock does not see: socket families, non-TCP inet sockets" +
         (!out.none && out.udp ? " but UDP datagrams" : "") + ", TCP Fast Open (docs/seccomp.md)";
}

std::optional<std::string> network_bind_lowering(const NetworkIR& network) {
  if (!network.bind) return std::nullopt;
  const std::string landlock = landlock_part(aasm::landlock::net::kBindTcp, *network.bind);
  if (refuses_every_bind(network))
    return landlock + "; seccomp refuses " + calls_of(bind_rules()) + " for every family (docs/seccomp.md)";
  return landlock + "; not checked: listen() on a socket never bound (an ephemeral port) and the bind() of a non-TCP "
                    "socket (docs/threat-model.md)";
}

}  // namespace aasmc
