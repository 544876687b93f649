#include "kernel/seccomp.h"

#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace aasm::seccomp {

PreparedFilter prepare(const plan::SeccompProgram& program) {
  PreparedFilter filter;
  filter.instructions.reserve(program.instructions.size());
  for (const plan::BpfInstruction& insn : program.instructions)
    filter.instructions.push_back({insn.code, insn.jt, insn.jf, insn.k});
  return filter;
}

int install(PreparedFilter& filter) {
  filter.program.len = static_cast<unsigned short>(filter.instructions.size());
  filter.program.filter = filter.instructions.data();
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter.program) == 0 ? 0 : errno;
}

bool action_available(uint32_t action) {
  return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

}  // namespace aasm::seccomp
