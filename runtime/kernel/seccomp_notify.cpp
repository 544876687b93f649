#include "kernel/seccomp_notify.h"

#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

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

// What a copy of the main program returns in place of `answer`, run on an
// errno path `errno_answer` of a rule program before it: the kernel's
// answer of the two where it is not the main program's errno (a tie, which
// the main program, newer, would win), a notification where it is.
uint32_t deferred_answer(uint32_t answer, uint32_t errno_answer) {
  if (bpf::strictness(answer) < bpf::strictness(SECCOMP_RET_ERRNO)) return answer;
  if (bpf::strictness(answer) == bpf::strictness(SECCOMP_RET_ERRNO)) return SECCOMP_RET_USER_NOTIF;
  return errno_answer;
}

bool returns_accumulator(const plan::BpfInstruction& insn) {
  return BPF_CLASS(insn.code) == BPF_RET && BPF_RVAL(insn.code) != BPF_K;
}

}  // namespace

std::optional<PreparedFilter> with_errno_answers_deferred(const plan::SeccompProgram& rule,
                                                          const plan::SeccompProgram& main) {
  const auto& code = rule.instructions;
  if (std::any_of(code.begin(), code.end(), returns_accumulator) ||
      std::any_of(main.instructions.begin(), main.instructions.end(), returns_accumulator))
    return std::nullopt;
  std::vector<std::pair<uint32_t, size_t>> copies;  // errno answer, offset after the program
  std::vector<sock_filter> tail;
  for (const plan::BpfInstruction& insn : code)
    if (is_errno_return(insn) && std::none_of(copies.begin(), copies.end(), [&](const auto& c) { return c.first == insn.k; })) {
      copies.emplace_back(insn.k, tail.size());
      for (const plan::BpfInstruction& m : main.instructions)
        tail.push_back({m.code, m.jt, m.jf, BPF_CLASS(m.code) == BPF_RET ? deferred_answer(m.k, insn.k) : m.k});
    }
  if (code.size() + tail.size() > BPF_MAXINSNS) return std::nullopt;
  PreparedFilter filter;
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const plan::BpfInstruction& insn = code[pc];
    if (!is_errno_return(insn)) {
      filter.instructions.push_back({insn.code, insn.jt, insn.jf, insn.k});
      continue;
    }
    const auto copy = std::find_if(copies.begin(), copies.end(), [&](const auto& c) { return c.first == insn.k; });
    filter.instructions.push_back(BPF_STMT(BPF_JMP | BPF_JA, uint32_t(code.size() + copy->second - pc - 1)));
  }
  filter.instructions.insert(filter.instructions.end(), tail.begin(), tail.end());
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
