#include "supervisor/landlock_audit.h"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "kernel/landlock_uapi.h"

namespace aasm::landlock_audit {
namespace {

// Linux 6.15's record types (include/uapi/linux/audit.h); Debian 12's
// headers predate them.
constexpr int kAuditLandlockAccess = 1423;
constexpr int kAuditLandlockDomain = 1424;

// The value of `key=` in `text`: a quoted string, a hex-encoded one (what
// audit_log_untrustedstring writes for a string with spaces, quotes or
// control characters), or a bare word; nothing when absent.
std::optional<std::string> field(std::string_view text, std::string_view key) {
  for (size_t at = 0; (at = text.find(key, at)) != std::string_view::npos; at += key.size()) {
    if ((at > 0 && text[at - 1] != ' ') || text.substr(at + key.size(), 1) != "=") continue;
    std::string_view value = text.substr(at + key.size() + 1);
    if (!value.empty() && value.front() == '"') {
      const size_t end = value.find('"', 1);
      return std::string(value.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1));
    }
    return std::string(value.substr(0, value.find(' ')));
  }
  return std::nullopt;
}

// A path field: quoted as is, or hex-encoded.
std::string untrusted(std::string_view text, std::string_view key) {
  const std::optional<std::string> value = field(text, key);
  if (!value) return "";
  const size_t at = text.find(std::string(key) + "=");
  if (at != std::string_view::npos && text.substr(at + key.size() + 1, 1) == "\"") return *value;
  std::string decoded;
  for (size_t i = 0; i + 1 < value->size(); i += 2) decoded += char(std::strtoul(value->substr(i, 2).c_str(), nullptr, 16));
  return decoded;
}

// "fs.read_file,fs.write_file": the layer and the rights, by their names in
// kernel/landlock_rights.def, which are the kernel's.
bool blockers(const std::string& list, denials::Denial& d) {
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string one = list.substr(start, end - start);
    start = end + 1;
    const size_t dot = one.find('.');
    if (dot == std::string::npos) return false;  // "ptrace" and the like: not a right of the ruleset
    const std::string kind = one.substr(0, dot), name = one.substr(dot + 1);
    const landlock::RightKind wanted = kind == "fs"    ? landlock::RightKind::kFs
                                       : kind == "net" ? landlock::RightKind::kNet
                                                       : landlock::RightKind::kScope;
    if (kind != "fs" && kind != "net" && kind != "scope") return false;
    d.layer = wanted == landlock::RightKind::kFs    ? denials::Layer::kLandlockFs
              : wanted == landlock::RightKind::kNet ? denials::Layer::kLandlockNet
                                                    : denials::Layer::kLandlockScope;
    bool known = false;
    for (const landlock::Right& right : landlock::kRights)
      if (right.kind == wanted && name == right.name) d.rights |= right.bit, known = true;
    if (!known) return false;
  }
  return d.rights != 0;
}

std::string errno_text(int error) { return std::strerror(error); }

}  // namespace

uint32_t restrict_flags() { return landlock::kRestrictSelfLogNewExecOn; }

std::string unseen_sentence(const std::string& unavailable) {
  return std::string(kUnseenSubject) + "this host does not deliver Landlock audit records (" + unavailable +
         "); run with --explain to trace them, or have the host's administrator enable auditing (auditctl -e 1)";
}

namespace {

// An audit netlink socket (close-on-exec), or -1 with why not in `why`.
int audit_socket(std::string& why) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
  if (fd >= 0) return fd;
  const int error = errno;
  why = "no audit socket: " + errno_text(error) +
        (error == EPROTONOSUPPORT ? ", the kernel is built without CONFIG_AUDIT" : "");
  return -1;
}

}  // namespace

Subscription subscribe(int landlock_abi) {
  if (landlock_abi < landlock::kLogAbi)
    return {-1, "Landlock ABI " + std::to_string(landlock_abi) + " writes none; ABI " + std::to_string(landlock::kLogAbi) +
                    " (Linux 6.15) does"};
  std::string why;
  const int fd = audit_socket(why);
  if (fd < 0) return {-1, why};
  sockaddr_nl group{};
  group.nl_family = AF_NETLINK;
  group.nl_groups = 1u << (AUDIT_NLGRP_READLOG - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&group), sizeof group) != 0) {
    const int error = errno;
    ::close(fd);
    return {-1, "the audit log group: " + errno_text(error) + (error == EPERM ? ", it needs CAP_AUDIT_READ" : "")};
  }
  return {fd, ""};
}

std::optional<std::string> auditing_off() {
  std::string why;
  const int fd = audit_socket(why);
  if (fd < 0) return why;
  const auto answer = [fd](std::optional<std::string> why) {
    ::close(fd);
    return why;
  };
  struct {
    nlmsghdr header;
    audit_status status;
  } request{}, reply{};
  request.header = {sizeof request, AUDIT_GET, NLM_F_REQUEST, 1, 0};
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (::sendto(fd, &request, sizeof request, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
    return answer("AUDIT_GET: " + errno_text(errno));
  const ssize_t n = ::recv(fd, &reply, sizeof reply, 0);
  if (n < ssize_t(sizeof(nlmsghdr))) return answer("AUDIT_GET: no answer");
  if (reply.header.nlmsg_type == NLMSG_ERROR) {
    nlmsgerr error_answer{};
    std::memcpy(&error_answer, &reply.status, std::min(sizeof error_answer, sizeof reply.status));
    const int error = -error_answer.error;
    return answer("AUDIT_GET: " + errno_text(error) + (error == EPERM ? ", it needs CAP_AUDIT_CONTROL" : ""));
  }
  if (reply.header.nlmsg_type != AUDIT_GET || n < ssize_t(sizeof reply)) return answer("AUDIT_GET: an answer of another kind");
  if (!reply.status.enabled) return answer("auditing is disabled on this host");
  return answer(std::nullopt);
}

std::optional<Record> parse(int type, std::string_view text) {
  const std::optional<std::string> domain = field(text, "domain");
  if (!domain) return std::nullopt;
  Record record;
  record.domain = std::strtoull(domain->c_str(), nullptr, 16);
  if (type == kAuditLandlockDomain) {
    const std::optional<std::string> pid = field(text, "pid");
    if (field(text, "status") != "allocated" || !pid) return std::nullopt;  // a domain's end says nothing more
    record.creator = pid_t(std::strtol(pid->c_str(), nullptr, 10));
    return record;
  }
  if (type != kAuditLandlockAccess) return std::nullopt;
  const std::optional<std::string> blocked = field(text, "blockers");
  denials::Denial d;
  d.witness = denials::Witness::kKernelRecord;
  if (!blocked || !blockers(*blocked, d)) return std::nullopt;
  d.error = d.layer == denials::Layer::kLandlockScope ? EPERM : EACCES;
  if (d.layer == denials::Layer::kLandlockNet) {
    const std::optional<std::string> port = field(text, "dest") ? field(text, "dest") : field(text, "src");
    if (port) d.port = uint16_t(std::strtoul(port->c_str(), nullptr, 10));
  } else if (d.rights == landlock::scope::kSignal && d.layer == denials::Layer::kLandlockScope) {
    if (const std::optional<std::string> pid = field(text, "opid")) d.arguments = "pid " + *pid;
  } else {
    d.path = untrusted(text, "path");
    if (d.layer == denials::Layer::kLandlockScope && !d.path.empty()) d.path = "@" + d.path.substr(1);  // the abstract name's NUL
  }
  record.denial = std::move(d);
  return record;
}

// Not NLMSG_OK/NLMSG_NEXT over a size_t: NLMSG_NEXT subtracts the aligned
// length, which for audit's unaligned last message wrapped `left` around
// and walked the stack past the datagram (a crash seen under load).
void for_each_message(std::string_view datagram, const std::function<void(int type, std::string_view text)>& take) {
  size_t at = 0;
  while (datagram.size() - at >= NLMSG_HDRLEN) {
    nlmsghdr header;
    std::memcpy(&header, datagram.data() + at, sizeof header);  // the datagram need not be aligned
    if (header.nlmsg_len < NLMSG_HDRLEN || header.nlmsg_len > datagram.size() - at) return;
    const std::string_view text = datagram.substr(at + NLMSG_HDRLEN, header.nlmsg_len - NLMSG_HDRLEN);
    take(header.nlmsg_type, text.substr(0, text.find('\0')));
    at += std::min<size_t>(NLMSG_ALIGN(header.nlmsg_len), datagram.size() - at);
  }
}

void Reader::read_pending() {
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) return;
    for_each_message(std::string_view(buffer, size_t(n)), [this](int type, std::string_view text) {
      const std::optional<Record> record = parse(type, text);
      if (!record) return;
      if (record->creator && *record->creator == command_) domains_.insert(record->domain);
      if (record->denial && domains_.count(record->domain)) log_.add(*record->denial);
    });
  }
}

}  // namespace aasm::landlock_audit
