#include "kernel/seccomp_notify.h"

#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

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

std::optional<PreparedFilter> with_errno_answers_notified(const plan::SeccompProgram& program,
                                                          std::optional<int> notify_nr) {
  PreparedFilter filter;
  if (notify_nr) filter.instructions = notify_one(program.audit_arch, *notify_nr);
  if (filter.instructions.size() + program.instructions.size() > BPF_MAXINSNS) return std::nullopt;
  for (const plan::BpfInstruction& insn : program.instructions) {
    sock_filter rewritten{insn.code, insn.jt, insn.jf, insn.k};
    if (BPF_CLASS(insn.code) == BPF_RET && BPF_RVAL(insn.code) != BPF_K) return std::nullopt;
    if (BPF_CLASS(insn.code) == BPF_RET && (insn.k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
      rewritten.k = SECCOMP_RET_USER_NOTIF;
    filter.instructions.push_back(rewritten);
  }
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
