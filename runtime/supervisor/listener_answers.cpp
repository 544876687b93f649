#include "supervisor/listener_answers.h"

#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <iterator>

#include "kernel/bpf_interpreter.h"
#include "kernel/seccomp_notify.h"
#include "supervisor/connect_answers.h"

namespace aasm {
namespace {

constexpr uint32_t kMaxErrno = 4095;  // the kernel caps a filter's errno there (MAX_ERRNO)

bpf::SeccompData data_of(const seccomp_notif& call) {
  bpf::SeccompData data;
  data.nr = call.data.nr;
  data.arch = call.data.arch;
  data.instruction_pointer = call.data.instruction_pointer;
  std::copy(std::begin(call.data.args), std::end(call.data.args), data.args);
  return data;
}

// The arguments the program looked at to refuse the call: what decided it.
std::string decisive_arguments(const seccomp_notif& call, uint8_t read) {
  std::string text;
  char word[40];
  for (int i = 0; i < 6; ++i) {
    if (!(read & (1u << i))) continue;
    std::snprintf(word, sizeof word, "%sarg%d=0x%" PRIx64, text.empty() ? "" : " ", i, uint64_t(call.data.args[i]));
    text += word;
  }
  return text;
}

bool lets_through(uint32_t action) {
  const uint32_t kind = action & SECCOMP_RET_ACTION_FULL;
  return kind == SECCOMP_RET_ALLOW || kind == SECCOMP_RET_LOG;
}

bool may_answer_errno(const plan::SeccompProgram& program, int32_t nr) {
  if (bpf::is_constant_allow(program.instructions, program.audit_arch, nr)) return false;
  const auto actions = bpf::possible_actions(program.instructions, program.audit_arch, nr);
  if (!actions) return true;
  return std::any_of(actions->begin(), actions->end(),
                     [](uint32_t a) { return (a & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO; });
}

// Above every syscall table the plan's programs know (the x32 range and
// beyond is killed by their header).
constexpr int32_t kNumbersChecked = 1024;

}  // namespace

std::string rewrite_conflict(const plan::SeccompProgram& main, const std::vector<const plan::SeccompProgram*>& rules,
                             bool connect) {
  for (int32_t nr = 0; nr < kNumbersChecked; ++nr)
    for (const plan::SeccompProgram* rule : rules)
      if (may_answer_errno(*rule, nr) && may_answer_errno(main, nr))
        return "system call " + std::to_string(nr) +
               " may be answered with an errno both by the main program and by an argument rule";
  if (connect) {
    const auto actions = bpf::possible_actions(main.instructions, main.audit_arch, SYS_connect);
    const bool kills = !actions || std::any_of(actions->begin(), actions->end(), [](uint32_t a) {
      return !lets_through(a) && (a & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO;
    });
    if (kills) return "the main program may kill or trap connect(), which the supervisor answers first";
  }
  return "";
}

void ListenerAnswers::answer_one(int listener, denials::Log* log) {
  seccomp_notif call;
  if (!seccomp::receive_notification(listener, call)) return;
  std::optional<bpf::Outcome> decided;
  if (observed_) decided = bpf::run(observed_->instructions, data_of(call));
  if (decided && (decided->action & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO) {
    const int error = int(std::min<uint32_t>(decided->action & SECCOMP_RET_DATA, kMaxErrno));
    seccomp::answer_error(listener, call.id, error);
    if (log) {
      denials::Denial denial;
      denial.layer = denials::Layer::kSeccomp;
      denial.witness = denials::Witness::kListener;
      denial.syscall = call.data.nr;
      denial.error = error;
      denial.arguments = decisive_arguments(call, decided->arguments_read);
      log->add(std::move(denial));
    }
    return;
  }
  if (connect_ && call.data.nr == SYS_connect && (!observed_ || (decided && lets_through(decided->action)))) {
    connect_->answer(listener, call, log);
    return;
  }
  seccomp::answer_error(listener, call.id, ENOSYS);
}

}  // namespace aasm
