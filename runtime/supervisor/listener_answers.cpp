#include "supervisor/listener_answers.h"

#include <linux/filter.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <optional>
#include <set>
#include <vector>

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

// Where a program looks at the number only by comparing it with constants
// (the rule programs: a jump tree on the number, then the arguments), its
// verdict is the same between two of those constants, so one number per
// stretch tells which numbers it may answer with an errno. The stretches'
// starts, below kNumbersChecked; nullopt when the program computes on the
// number or keeps it anywhere but the accumulator, and every number must be
// tried. Forward jumps only, so one pass carries "the accumulator may hold
// the number" to every instruction.
std::optional<std::vector<int32_t>> stretch_starts(const plan::SeccompProgram& program) {
  const auto& code = program.instructions;
  std::vector<char> holds_nr(code.size() + 1, 0);
  std::set<int32_t> starts{0, kNumbersChecked};
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const plan::BpfInstruction& insn = code[pc];
    const uint16_t cls = BPF_CLASS(insn.code);
    const bool nr = holds_nr[pc];
    const auto flow = [&](size_t to, bool value) {
      if (to < holds_nr.size()) holds_nr[to] |= char(value);
    };
    if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
      flow(pc + 1, insn.k == offsetof(bpf::SeccompData, nr));
    } else if (cls == BPF_JMP && BPF_OP(insn.code) == BPF_JA) {
      flow(pc + 1 + insn.k, nr);
    } else if (cls == BPF_JMP) {
      if (nr && (BPF_SRC(insn.code) != BPF_K || BPF_OP(insn.code) == BPF_JSET)) return std::nullopt;
      if (nr)
        for (const uint64_t at : {uint64_t(insn.k), uint64_t(insn.k) + 1})
          if (at < uint64_t(kNumbersChecked)) starts.insert(int32_t(at));
      flow(pc + 1 + insn.jt, nr);
      flow(pc + 1 + insn.jf, nr);
    } else if (cls == BPF_RET) {
    } else if (nr || cls == BPF_MISC || insn.code == (BPF_LD | BPF_MEM)) {
      return std::nullopt;  // arithmetic on the number, or a copy of it elsewhere
    } else {
      flow(pc + 1, cls == BPF_LD ? false : nr);  // an immediate, or X and memory written
    }
  }
  return std::vector<int32_t>(starts.begin(), starts.end());
}

// Adds to `numbers` each number `rule` may answer with an errno. The cheap
// test of the kernel's cache first: most numbers a rule allows outright,
// and the walk of every path is what costs.
void add_errno_numbers(const plan::SeccompProgram& rule, std::set<int32_t>& numbers) {
  std::optional<std::vector<int32_t>> starts = stretch_starts(rule);
  if (!starts) {
    starts.emplace();
    for (int32_t nr = 0; nr <= kNumbersChecked; ++nr) starts->push_back(nr);
  }
  for (size_t i = 0; i + 1 < starts->size(); ++i) {
    const int32_t first = (*starts)[i], end = (*starts)[i + 1];
    if (bpf::is_constant_allow(rule.instructions, rule.audit_arch, first) || !may_answer_errno(rule, first)) continue;
    for (int32_t nr = first; nr < end; ++nr) numbers.insert(nr);
  }
}

}  // namespace

std::vector<int32_t> rule_errno_numbers(const std::vector<const plan::SeccompProgram*>& rules) {
  std::set<int32_t> numbers;
  for (const plan::SeccompProgram* rule : rules) add_errno_numbers(*rule, numbers);
  return std::vector<int32_t>(numbers.begin(), numbers.end());
}

std::vector<int32_t> shared_errno_numbers(const plan::SeccompProgram& main,
                                          const std::vector<const plan::SeccompProgram*>& rules) {
  std::vector<int32_t> numbers = rule_errno_numbers(rules);
  std::erase_if(numbers, [&](int32_t nr) {
    return bpf::is_constant_allow(main.instructions, main.audit_arch, nr) || !may_answer_errno(main, nr);
  });
  return numbers;
}

std::optional<int> errno_of(uint32_t action) {
  if ((action & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO) return std::nullopt;
  return int(std::min<uint32_t>(action & SECCOMP_RET_DATA, kMaxErrno));
}

std::string rewrite_conflict(const plan::SeccompProgram& main, bool connect) {
  if (!connect) return "";
  const auto actions = bpf::possible_actions(main.instructions, main.audit_arch, SYS_connect);
  const bool kills = !actions || std::any_of(actions->begin(), actions->end(), [](uint32_t a) {
    return !lets_through(a) && (a & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ERRNO;
  });
  return kills ? "the main program may kill or trap connect(), which the supervisor answers first" : "";
}

void ListenerAnswers::answer_one(int listener, denials::Log* log) {
  seccomp_notif call;
  if (!seccomp::receive_notification(listener, call)) return;
  const bpf::SeccompData data = data_of(call);
  std::optional<bpf::StackOutcome> decided;
  if (!observed_.empty()) decided = bpf::run_stack(observed_, data);
  if (const std::optional<int> answer = decided ? errno_of(decided->action) : std::nullopt) {
    const int error = *answer;
    // A refused TCP bind() names its port, so the report's edit can list it;
    // read while the caller still waits.
    const std::optional<uint16_t> port = log && call.data.nr == SYS_bind ? tcp_port_named(call) : std::nullopt;
    seccomp::answer_error(listener, call.id, error);
    if (log) {
      denials::Denial denial;
      denial.layer = denials::Layer::kSeccomp;
      denial.witness = denials::Witness::kListener;
      denial.syscall = call.data.nr;
      denial.error = error;
      denial.arguments = denials::argument_text(data.args, decided->arguments_read);  // what decided it
      if (port) denial.port = *port;
      log->add(std::move(denial));
    }
    return;
  }
  if (connect_ && call.data.nr == SYS_connect && (observed_.empty() || (decided && lets_through(decided->action)))) {
    connect_->answer(listener, call, log);
    return;
  }
  seccomp::answer_error(listener, call.id, ENOSYS);
}

}  // namespace aasm
