#include "kernel/seccomp_notify.h"

#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <set>

#include "kernel/bpf_interpreter.h"
#include "kernel/raw_syscall.h"

namespace aasm::seccomp {

namespace {

// `syscall_nr` of `audit_arch` to the listener; anything else on to the
// instruction after these five. Only loads of arch and nr, jumps on
// constants and a constant return: the kernel's cache check follows them.
std::vector<sock_filter> notify_one(uint32_t audit_arch, int syscall_nr) {
  return {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(syscall_nr), 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
}

}  // namespace

PreparedFilter notifier_for(uint32_t audit_arch, int syscall_nr) {
  PreparedFilter filter;
  filter.instructions = notify_one(audit_arch, syscall_nr);
  filter.instructions.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return filter;
}

namespace {

// More kept numbers than this and the first test's jump past them would
// not fit its 8 bits.
constexpr size_t kMaxKept = 250;

// What an errno return `answer` of the program becomes where some numbers
// keep it: the errno for `kept` of `audit_arch` (and for any other
// architecture, which the program's header kills before it answers
// anything), a notification for every other number. Loads of arch and nr
// and constant jumps only.
std::vector<sock_filter> errno_or_notify(uint32_t audit_arch, std::span<const int32_t> kept, uint32_t answer) {
  const size_t n = kept.size();
  std::vector<sock_filter> test = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 0, uint8_t(n + 2)),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
  };
  for (size_t i = 0; i < n; ++i) test.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(kept[i]), uint8_t(n - i), 0));
  test.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  test.push_back(BPF_STMT(BPF_RET | BPF_K, answer));
  return test;
}

bool is_errno_return(const plan::BpfInstruction& insn) {
  return BPF_CLASS(insn.code) == BPF_RET && (insn.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
}

}  // namespace

std::optional<PreparedFilter> with_errno_answers_notified(const plan::SeccompProgram& program,
                                                          std::optional<int> notify_nr,
                                                          std::span<const int32_t> kept_errno) {
  if (kept_errno.size() > kMaxKept) return std::nullopt;
  PreparedFilter filter;
  if (notify_nr) filter.instructions = notify_one(program.audit_arch, *notify_nr);
  // Where numbers keep their errno, one test per distinct answer after the
  // program, each errno return a forward jump to its answer's test.
  std::vector<std::pair<uint32_t, size_t>> tests;  // answer, offset after the program
  std::vector<sock_filter> tail;
  if (!kept_errno.empty())
    for (const plan::BpfInstruction& insn : program.instructions)
      if (is_errno_return(insn) && std::none_of(tests.begin(), tests.end(), [&](const auto& t) { return t.first == insn.k; })) {
        tests.emplace_back(insn.k, tail.size());
        const std::vector<sock_filter> test = errno_or_notify(program.audit_arch, kept_errno, insn.k);
        tail.insert(tail.end(), test.begin(), test.end());
      }
  const size_t end = filter.instructions.size() + program.instructions.size();
  if (end + tail.size() > BPF_MAXINSNS) return std::nullopt;
  for (const plan::BpfInstruction& insn : program.instructions) {
    sock_filter rewritten{insn.code, insn.jt, insn.jf, insn.k};
    if (BPF_CLASS(insn.code) == BPF_RET && BPF_RVAL(insn.code) != BPF_K) return std::nullopt;
    if (is_errno_return(insn) && kept_errno.empty()) rewritten.k = SECCOMP_RET_USER_NOTIF;
    if (is_errno_return(insn) && !kept_errno.empty()) {
      const auto test = std::find_if(tests.begin(), tests.end(), [&](const auto& t) { return t.first == insn.k; });
      const size_t here = filter.instructions.size();
      rewritten = BPF_STMT(BPF_JMP | BPF_JA, uint32_t(end + test->second - here - 1));
    }
    filter.instructions.push_back(rewritten);
  }
  filter.instructions.insert(filter.instructions.end(), tail.begin(), tail.end());
  return filter;
}

namespace {

bool returns_accumulator(const plan::BpfInstruction& insn) {
  return BPF_CLASS(insn.code) == BPF_RET && BPF_RVAL(insn.code) != BPF_K;
}

// Answers a rule's errno beats, as the kernel compares stacked filters'
// (a notification, a trace, a log, an allow).
bool errno_beats(uint32_t action) { return bpf::strictness(action) > bpf::strictness(SECCOMP_RET_ERRNO); }

// Copies of `rules` (those with an errno answer), one after the other, then
// `RET answer`: a copy's errno return notifies, its returns an errno beats
// go on to the next copy, and the stricter ones (a kill, a trap: the rule
// installed before answers the same) stay. Relative jumps stay valid inside
// each copy.
std::vector<sock_filter> rules_then(std::span<const plan::SeccompProgram* const> rules, uint32_t answer) {
  std::vector<sock_filter> chain;
  for (const plan::SeccompProgram* rule : rules) {
    if (std::none_of(rule->instructions.begin(), rule->instructions.end(), is_errno_return)) continue;
    const size_t end = chain.size() + rule->instructions.size();
    for (const plan::BpfInstruction& insn : rule->instructions) {
      sock_filter copy{insn.code, insn.jt, insn.jf, insn.k};
      if (is_errno_return(insn)) copy.k = SECCOMP_RET_USER_NOTIF;
      else if (BPF_CLASS(insn.code) == BPF_RET && errno_beats(insn.k))
        copy = BPF_STMT(BPF_JMP | BPF_JA, uint32_t(end - chain.size() - 1));
      chain.push_back(copy);
    }
  }
  chain.push_back(BPF_STMT(BPF_RET | BPF_K, answer));
  return chain;
}

}  // namespace

PreparedFilter notifying_rule(const plan::SeccompProgram& rule) {
  PreparedFilter filter;
  for (const plan::BpfInstruction& insn : rule.instructions)
    filter.instructions.push_back({insn.code, insn.jt, insn.jf, is_errno_return(insn) ? SECCOMP_RET_USER_NOTIF : insn.k});
  return filter;
}

std::optional<PreparedFilter> notifying_main(const plan::SeccompProgram& main, std::optional<int> notify_nr,
                                            std::span<const plan::SeccompProgram* const> rules,
                                            std::span<const int32_t> ruled) {
  std::optional<PreparedFilter> filter = with_errno_answers_notified(main, notify_nr);
  if (!filter || ruled.empty()) return filter;
  for (const plan::SeccompProgram* rule : rules)
    if (std::any_of(rule->instructions.begin(), rule->instructions.end(), returns_accumulator)) return std::nullopt;
  // The returns of main a ruled number reaches that a rule's errno beats,
  // by the answer.
  std::map<size_t, uint32_t> leaves;
  for (const int32_t nr : ruled) {
    const std::optional<std::set<size_t>> returns = bpf::reachable_returns(main.instructions, main.audit_arch, nr);
    if (!returns) return std::nullopt;
    for (const size_t pc : *returns)
      if (errno_beats(main.instructions[pc].k)) leaves.emplace(pc, main.instructions[pc].k);
  }
  std::map<uint32_t, size_t> chains;  // answer, offset after the program
  std::vector<sock_filter> tail;
  for (const auto& [pc, answer] : leaves)
    if (chains.emplace(answer, tail.size()).second) {
      const std::vector<sock_filter> chain = rules_then(rules, answer);
      tail.insert(tail.end(), chain.begin(), chain.end());
    }
  const size_t end = filter->instructions.size(), prefix = end - main.instructions.size();
  if (end + tail.size() > BPF_MAXINSNS) return std::nullopt;
  for (const auto& [pc, answer] : leaves)
    filter->instructions[prefix + pc] = BPF_STMT(BPF_JMP | BPF_JA, uint32_t(end + chains.at(answer) - (prefix + pc) - 1));
  filter->instructions.insert(filter->instructions.end(), tail.begin(), tail.end());
  return filter;
}

int install_with_listener(PreparedFilter& filter) {
  filter.program.len = static_cast<unsigned short>(filter.instructions.size());
  filter.program.filter = filter.instructions.data();
  return int(raw::syscall4(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                           long(&filter.program)));
}

namespace {

// One byte of data (a stream of none is end-of-file) and room for one
// descriptor: what both ends of the hand-over use.
struct DescriptorMessage {
  char byte = 0;
  iovec data{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr message{};

  DescriptorMessage() {
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage&) = delete;
};

}  // namespace

int send_descriptor(int socket, int fd) {
  DescriptorMessage m;
  cmsghdr* header = CMSG_FIRSTHDR(&m.message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  const long sent = raw::syscall4(SYS_sendmsg, socket, long(&m.message), MSG_NOSIGNAL);
  return sent < 0 ? int(-sent) : 0;
}

int receive_descriptor(int socket) {
  DescriptorMessage m;
  if (::recvmsg(socket, &m.message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1) return -1;
  const cmsghdr* header = CMSG_FIRSTHDR(&m.message);
  if (!header || header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS ||
      header->cmsg_len != CMSG_LEN(sizeof(int)))
    return -1;
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(header), sizeof fd);
  return fd;
}

bool receive_notification(int listener, seccomp_notif& notification) {
  std::memset(&notification, 0, sizeof notification);  // the kernel refuses a dirty buffer (EINVAL)
  return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &notification) == 0;
}

bool still_waiting(int listener, uint64_t id) { return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

void answer_continue(int listener, uint64_t id) {
  seccomp_notif_resp response{};
  response.id = id;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);  // ENOENT: the caller has gone meanwhile
}

void answer_error(int listener, uint64_t id, int error) {
  seccomp_notif_resp response{};
  response.id = id;
  response.error = -error;
  ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &response);
}

}  // namespace aasm::seccomp
