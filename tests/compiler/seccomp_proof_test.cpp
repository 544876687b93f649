// Proof of the seccomp lowering: for every policy in testdata/policies,
// testdata/seccomp and the shipped profiles (profiles/), every target, every
// syscall number from -1 to the table's highest + 64, the x32 range, the right and two wrong architecture
// values, and argument values at the boundaries of every constant the rules
// compare with, the emitted programs - run by the userspace interpreter and
// combined as the kernel combines stacked filters - answer exactly what the
// reference semantics (middle/syscall_semantics.h) says. Also: every
// unconditionally allowed call is one the kernel's action cache can serve.
#include <dirent.h>
#include <doctest/doctest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <set>

#include "backend/seccomp_lowering.h"
#include "backend/syscall_regions.h"
#include "backend/socket_rules.h"
#include "kernel/bpf_interpreter.h"
#include "kernel/arch.h"
#include "kernel/seccomp_notify.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"
#include "middle/syscall_semantics.h"
#include "supervisor/listener_answers.h"

namespace aasmc {
namespace {

using aasm::plan::SeccompProgram;
namespace bpf = aasm::bpf;

std::vector<std::string> policy_files() {
  const char* root = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(root != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  std::vector<std::string> files;
  for (const char* sub : {"/policies", "/seccomp", "/../profiles"}) {
    const std::string dir = std::string(root) + sub;
    DIR* d = ::opendir(dir.c_str());
    REQUIRE_MESSAGE(d != nullptr, dir);
    while (dirent* entry = ::readdir(d))
      if (std::string_view(entry->d_name).ends_with(".yaml")) files.push_back(dir + "/" + entry->d_name);
    ::closedir(d);
  }
  std::sort(files.begin(), files.end());
  return files;
}

// What the kernel returns for stacked filters: every filter runs, the
// strictest action wins, and among equals the most recently installed one's.
struct StackOutcome {
  uint32_t action = 0;
  size_t executed = 0;
};

StackOutcome run_stack(const std::vector<const SeccompProgram*>& programs, const bpf::SeccompData& data) {
  StackOutcome out{SECCOMP_RET_ALLOW, 0};
  for (auto it = programs.rbegin(); it != programs.rend(); ++it) {
    auto outcome = bpf::run((*it)->instructions, data);
    REQUIRE_MESSAGE(outcome, "a program the kernel would refuse");
    out.executed += outcome->executed;
    if (action_rank(outcome->action) > action_rank(out.action)) out.action = outcome->action;
  }
  return out;
}

// Values worth trying for each argument: 0, every constant of a comparison
// and its neighbours, with the upper half set, sign-extended.
std::vector<uint64_t> interesting_values(const SyscallIR& ir, const Target& target, unsigned arg) {
  std::set<uint64_t> values = {0, 1, 0xffffffff, ~uint64_t(0), uint64_t(1) << 32};
  auto add_around = [&](uint64_t v) {
    for (uint64_t x : std::initializer_list<uint64_t>{v, v - 1, v + 1, v | (uint64_t(1) << 32), v | 0xffffffff00000000ull, v & 0xffffffff})
      values.insert(x);
  };
  auto scan = [&](const NormalizedCondition& condition) {
    for (const Conjunct& conjunct : condition.disjuncts)
      for (const ArgComparison& c : conjunct.comparisons)
        if (c.arg == arg) {
          add_around(c.value);
          add_around(c.mask);
          add_around(c.value ^ c.mask);
        }
  };
  for (const SyscallRuleIR& rule : ir.rules)
    if (auto it = rule.normalized.find(target.name); it != rule.normalized.end()) scan(it->second);
  for (const auto& [name, by_target] : ir.conditionally_allowed)
    if (auto it = by_target.find(target.name); it != by_target.end()) scan(it->second);
  return {values.begin(), values.end()};
}

// `call` with each argument through its interesting values, the others at
// zero; then the first three in pairs.
void for_each_argument_variant(const SyscallIR& ir, const Target& target, const SyscallCall& call,
                               const std::function<void(const SyscallCall&)>& body) {
  for (unsigned arg = 0; arg < 6; ++arg)
    for (uint64_t v : interesting_values(ir, target, arg)) {
      SyscallCall c = call;
      c.args[arg] = v;
      body(c);
    }
  for (unsigned a = 0; a < 3; ++a)
    for (unsigned b = a + 1; b < 3; ++b)
      for (uint64_t va : interesting_values(ir, target, a))
        for (uint64_t vb : interesting_values(ir, target, b)) {
          SyscallCall c = call;
          c.args[a] = va;
          c.args[b] = vb;
          body(c);
        }
}

struct Proof {
  size_t calls = 0;
  size_t worst_executed = 0;
};

void check_call(const SyscallIR& ir, const Target& target, const std::vector<const SeccompProgram*>& programs,
                const SyscallCall& call, Proof& proof) {
  bpf::SeccompData data;
  data.nr = call.nr;
  data.arch = call.arch;
  std::copy(std::begin(call.args), std::end(call.args), data.args);
  const StackOutcome got = run_stack(programs, data);
  const uint32_t want = expected_action(ir, target, call);
  ++proof.calls;
  proof.worst_executed = std::max(proof.worst_executed, got.executed);
  if (got.action != want) {
    char text[256];
    std::snprintf(text, sizeof text, "%s nr %d (%s) arch %#x args %#llx,%#llx,%#llx: filters answer %#x, the semantics %#x",
                  target.name, call.nr, syscall_name(target, call.nr).c_str(), call.arch,
                  (unsigned long long)call.args[0], (unsigned long long)call.args[1], (unsigned long long)call.args[2],
                  got.action, want);
    FAIL_CHECK(text);
  }
}

std::vector<int32_t> numbers_to_try(const Target& target) {
  std::vector<int32_t> numbers;
  const int32_t max = max_syscall_number(target);
  for (int32_t nr = -1; nr <= max + 64; ++nr) numbers.push_back(nr);
  for (int32_t x32 : {0, 1, 2, 59, 231, 512, 547, 0xffff})  // the x32 ABI sets bit 30
    numbers.push_back(int32_t(0x40000000 | x32));
  for (uint32_t odd : {0x3fffffffu, 0x7fffffffu, 0x80000000u, 0xfffffffeu}) numbers.push_back(int32_t(odd));
  return numbers;
}

void prove(const SyscallIR& ir, const Target& target, const std::vector<const SeccompProgram*>& programs) {
  Proof proof;
  const uint32_t wrong_arches[] = {0x40000003 /* i386 */, target.audit_arch == 0xC000003E ? 0xC00000B7u : 0xC000003Eu};
  std::set<std::string> with_arguments;
  for (const SyscallRuleIR& rule : ir.rules) with_arguments.insert(rule.syscall);
  for (const auto& [name, by_target] : ir.conditionally_allowed) with_arguments.insert(name);

  for (int32_t nr : numbers_to_try(target)) {
    for (uint32_t arch : wrong_arches) check_call(ir, target, programs, {arch, nr, {}}, proof);
    SyscallCall call{target.audit_arch, nr, {}};
    check_call(ir, target, programs, call, proof);
    if (!with_arguments.count(syscall_name(target, nr))) continue;
    for_each_argument_variant(ir, target, call,
                              [&](const SyscallCall& c) { check_call(ir, target, programs, c, proof); });
  }
  MESSAGE(std::string(target.name), ": ", proof.calls, " calls checked, at most ", proof.worst_executed,
          " BPF instructions executed for one call (all filters)");
}

// The kernel caches "allow" for a call whose every filter allows it looking
// at nothing but the number and architecture (kernel/seccomp.c).
void check_cacheable(const SyscallIR& ir, const Target& target, const std::vector<const SeccompProgram*>& programs) {
  if (ir.mode != SyscallIR::Mode::kAllowlist) return;
  std::set<std::string> with_arguments;
  for (const SyscallRuleIR& rule : ir.rules) with_arguments.insert(rule.syscall);
  for (const auto& [name, entry] : ir.allowed) {
    if (with_arguments.count(name) || name == "clone3") continue;
    const std::optional<int> nr = syscall_number(target, name);
    if (!nr) continue;
    for (const SeccompProgram* program : programs)
      CHECK_MESSAGE(bpf::is_constant_allow(program->instructions, target.audit_arch, *nr),
                    std::string(target.name), ": ", name, " is not cacheable");
  }
}

std::vector<aasm::plan::BpfInstruction> as_plan(const aasm::seccomp::PreparedFilter& filter) {
  std::vector<aasm::plan::BpfInstruction> program;
  for (const sock_filter& insn : filter.instructions) program.push_back({insn.code, insn.jt, insn.jf, insn.k});
  return program;
}

// The definition shared_errno_numbers() decides by stretches of numbers:
// the numbers below 1024 both the main program and a rule may answer with an
// errno, every number tried by a walk of every path.
bool may_answer_errno(const SeccompProgram& program, int32_t nr) {
  const auto actions = bpf::possible_actions(program.instructions, program.audit_arch, nr);
  return !actions || std::any_of(actions->begin(), actions->end(), [](uint32_t a) {
    return (a & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO;
  });
}
std::vector<int32_t> errno_overlap_by_every_number(const SeccompProgram& main,
                                                   const std::vector<const SeccompProgram*>& rules) {
  std::vector<int32_t> numbers;
  for (int32_t nr = 0; nr < 1024; ++nr)
    if (may_answer_errno(main, nr) &&
        std::any_of(rules.begin(), rules.end(), [nr](const SeccompProgram* rule) { return may_answer_errno(*rule, nr); }))
      numbers.push_back(nr);
  return numbers;
}

// The launcher installs the main program rewritten, its errno answers sent
// to the supervisor's listener and connect() too (kernel/seccomp_notify.h),
// but for the numbers a rule program before it may also answer with an
// errno, which keep the program's own errno: every other answer is the
// program's own, so every call the kernel's cache serves as written it
// still serves, and the answers are the ones the listener's supervisor
// replays.
void check_observed(const Target& target, const std::vector<const SeccompProgram*>& stack, bool shipped) {
  const SeccompProgram& main = *stack.back();
  const std::vector<const SeccompProgram*> rules(stack.begin(), stack.end() - 1);
  const std::optional<int> connect = syscall_number(target, "connect");
  REQUIRE(connect);
  const std::vector<int32_t> kept = aasm::shared_errno_numbers(main, rules);
  CHECK(kept == errno_overlap_by_every_number(main, rules));
  const auto rewritten = aasm::seccomp::with_errno_answers_notified(main, *connect, kept);
  const auto in_place = aasm::seccomp::with_errno_answers_notified(main, *connect);
  REQUIRE((rewritten && in_place));
  const std::vector<aasm::plan::BpfInstruction> observed = as_plan(*rewritten);
  const std::vector<aasm::plan::BpfInstruction> observed_in_place = as_plan(*in_place);
  for (int32_t nr : numbers_to_try(target)) {
    bpf::SeccompData data;
    data.nr = nr;
    data.arch = target.audit_arch;
    const auto original = bpf::run(main.instructions, data);
    const auto now = bpf::run(observed, data);
    REQUIRE((original && now));
    const bool keeps = std::find(kept.begin(), kept.end(), nr) != kept.end();
    uint32_t want = original->action;
    if (((want & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO && !keeps) || nr == *connect) want = SECCOMP_RET_USER_NOTIF;
    CHECK_MESSAGE(now->action == want, nr);
    if (nr != *connect && bpf::is_constant_allow(main.instructions, target.audit_arch, nr))
      CHECK_MESSAGE(bpf::is_constant_allow(observed, target.audit_arch, nr), nr, " is no longer cacheable");
    // The kept numbers' tests sit on errno paths only: an allowed call runs
    // what it runs without them.
    if (original->action == SECCOMP_RET_ALLOW)
      CHECK_MESSAGE(now->executed == bpf::run(observed_in_place, data)->executed, nr);
  }
  const std::string conflict = aasm::rewrite_conflict(main, true);
  if (!conflict.empty()) MESSAGE("not observed: ", conflict);
  if (shipped) CHECK_MESSAGE(conflict.empty(), "a shipped profile's errno answers would not be observed: ", conflict);
}

// The definition rule_errno_numbers() decides by stretches of numbers.
std::vector<int32_t> rule_errno_numbers_by_every_number(const std::vector<const SeccompProgram*>& rules) {
  std::vector<int32_t> numbers;
  for (int32_t nr = 0; nr < 1024; ++nr)
    if (std::any_of(rules.begin(), rules.end(), [nr](const SeccompProgram* rule) { return may_answer_errno(*rule, nr); }))
      numbers.push_back(nr);
  return numbers;
}

// Where a rule program may answer with an errno, the launcher installs the
// rule programs notifying (seccomp::notifying_rule) and the main program
// notifying their errno calls too (seccomp::notifying_main), with the
// run's listener: every call the programs as written answer with an errno
// reaches the main program's listener (whose supervisor answers
// bpf::run_stack of the programs as written), connect() too where they let
// it through, and every other call gets the answer of the programs as
// written. The rules' allowed paths run what they ran, and every number the
// stack as written has cached stays cached (what the main program's copies
// of the rules cost the others: bench-filter-runtime, docs/benchmarks.md).
// True when some rule may answer with an errno.
bool check_rules_notifying(const SyscallIR& ir, const Target& target, const std::vector<const SeccompProgram*>& stack) {
  const SeccompProgram& main = *stack.back();
  const std::vector<const SeccompProgram*> rules(stack.begin(), stack.end() - 1);
  const std::vector<int32_t> ruled = aasm::rule_errno_numbers(rules);
  CHECK(ruled == rule_errno_numbers_by_every_number(rules));
  if (ruled.empty()) return false;
  std::vector<SeccompProgram> written;
  for (const SeccompProgram* p : stack) written.push_back(*p);
  std::vector<SeccompProgram> installed = written;
  for (size_t i = 0; i < rules.size(); ++i) installed[i].instructions = as_plan(aasm::seccomp::notifying_rule(*rules[i]));
  // connect() goes to the listener too where the launcher answers it,
  // unless the main program may kill it (rewrite_conflict).
  std::optional<int> connect = syscall_number(target, "connect");
  if (!aasm::rewrite_conflict(main, true).empty()) connect.reset();
  const auto observing = aasm::seccomp::notifying_main(main, connect, rules, ruled);
  REQUIRE(observing);
  installed.back().instructions = as_plan(*observing);
  const size_t last = installed.size() - 1;
  const auto check = [&](const SyscallCall& call) {
    bpf::SeccompData data;
    data.nr = call.nr;
    data.arch = call.arch;
    std::copy(std::begin(call.args), std::end(call.args), data.args);
    const auto want = bpf::run_stack(written, data);
    const auto got = bpf::run_stack(installed, data);
    REQUIRE((want && got));
    const uint32_t kind = want->action & SECCOMP_RET_ACTION_FULL;
    const bool connect_through = connect && call.nr == *connect && (kind == SECCOMP_RET_ALLOW || kind == SECCOMP_RET_LOG);
    INFO(std::string(target.name), " nr ", call.nr, " args ", call.args[0], ",", call.args[1], ",", call.args[2]);
    if (kind == SECCOMP_RET_ERRNO || connect_through) {
      CHECK(got->action == SECCOMP_RET_USER_NOTIF);
      CHECK(got->filter == last);  // the listener's: never ENOSYS from a rule's own notification
    } else {
      CHECK(got->action == want->action);
    }
    for (size_t i = 0; i < last; ++i) {
      const auto as_written = bpf::run(written[i].instructions, data);
      if (as_written->action == SECCOMP_RET_ALLOW)
        CHECK(bpf::run(installed[i].instructions, data)->executed == as_written->executed);
    }
  };
  const auto cached = [&](const std::vector<SeccompProgram>& programs, int32_t nr) {
    return std::all_of(programs.begin(), programs.end(), [&](const SeccompProgram& p) {
      return bpf::is_constant_allow(p.instructions, target.audit_arch, nr);
    });
  };
  std::set<std::string> with_arguments;
  for (const SyscallRuleIR& rule : ir.rules) with_arguments.insert(rule.syscall);
  for (int32_t nr : numbers_to_try(target)) {
    const SyscallCall call{target.audit_arch, nr, {}};
    check(call);
    if (with_arguments.count(syscall_name(target, nr))) for_each_argument_variant(ir, target, call, check);
    if (nr != connect && cached(written, nr)) CHECK_MESSAGE(cached(installed, nr), nr, " is no longer cacheable");
  }
  return true;
}

// The policy of `file` for every target, as the plan's programs lower it
// (socket rules included).
PolicyIR lowered_policy(const std::string& file) {
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  std::vector<PolicyDocument> documents;
  load_policy_file(file, diags, documents);
  const std::vector<Target> targets(all_targets().begin(), all_targets().end());
  auto policy = build_ir(documents, targets, diags);
  REQUIRE(diags.error_count() == 0);
  REQUIRE(policy);
  auto ir = with_socket_rules(*policy);
  REQUIRE_MESSAGE(bool(ir), (ir ? "" : llvm::toString(ir.takeError())));
  return std::move(*ir);
}

TEST_CASE("seccomp lowering: every emitted program answers as the semantics say, and allowed calls are cacheable") {
  for (const std::string& file : policy_files()) {
    SUBCASE(file.c_str()) {
      const PolicyIR ir = lowered_policy(file);
      if (!ir.syscalls) continue;
      for (const Target& target : ir.targets) {
        auto programs = lower_syscalls(*ir.syscalls, target);
        REQUIRE_MESSAGE(bool(programs), (programs ? "" : llvm::toString(programs.takeError())));
        std::vector<const SeccompProgram*> stack;
        for (const SeccompProgram& p : *programs) stack.push_back(&p);
        INFO(file, " ", std::string(target.name));
        prove(*ir.syscalls, target, stack);
        check_cacheable(*ir.syscalls, target, stack);
        check_observed(target, stack, file.find("/profiles/") != std::string::npos);
        if (check_rules_notifying(*ir.syscalls, target, stack))
          MESSAGE(file, " ", std::string(target.name), ": rule programs notifying");
      }
    }
  }
}

// The OCI export's form of the same answers (backend/syscall_regions.h):
// per call, argument regions no two answers share, the default elsewhere.
// Every call of the table with the argument values the proof above tries
// must get the semantics' answer, and never two answers at once.
uint32_t region_answer(const TargetAnswers& answers, const std::string& name, const uint64_t (&args)[6]) {
  auto it = answers.by_call.find(name);
  if (it == answers.by_call.end()) return answers.default_answer;
  uint32_t found = answers.default_answer;
  int matches = 0;
  for (const AnsweredRegion& region : it->second)
    if (std::any_of(region.rules.begin(), region.rules.end(), [&](const ArgRule& r) { return r.contains(args); }))
      found = region.answer, ++matches;
  CHECK_MESSAGE(matches <= 1, name, ": ", matches, " answers hold at once");
  return found;
}

void prove_regions(const SyscallIR& ir, const Target& target, const TargetAnswers& answers) {
  size_t calls = 0;
  std::set<std::string> with_arguments;
  for (const SyscallRuleIR& rule : ir.rules) with_arguments.insert(rule.syscall);
  for (const auto& [name, by_target] : ir.conditionally_allowed) with_arguments.insert(name);
  auto check = [&](const std::string& name, const SyscallCall& call) {
    ++calls;
    const uint32_t want = expected_action(ir, target, call);
    const uint32_t got = region_answer(answers, name, call.args);
    if (got != want)
      FAIL_CHECK(target.name, " ", name, " args ", call.args[0], ",", call.args[1], ",", call.args[2],
                 ": regions answer ", got, ", the semantics ", want);
  };
  for (int32_t nr = 0; nr <= max_syscall_number(target); ++nr) {
    const std::string name = syscall_name(target, nr);
    if (name.empty()) continue;
    SyscallCall call{target.audit_arch, nr, {}};
    check(name, call);
    if (!with_arguments.count(name)) continue;
    for_each_argument_variant(ir, target, call, [&](const SyscallCall& c) { check(name, c); });
  }
  MESSAGE(std::string(target.name), ": ", calls, " calls checked against the export's regions");
}

TEST_CASE("OCI export: the disjoint argument regions answer every call as the semantics say") {
  for (const std::string& file : policy_files()) {
    SUBCASE(file.c_str()) {
      const PolicyIR ir = lowered_policy(file);
      if (!ir.syscalls) continue;
      for (const Target& target : ir.targets) {
        INFO(file, " ", std::string(target.name));
        auto answers = syscall_answers(*ir.syscalls, target);
        // A policy whose rules need too many patterns is refused by the
        // export, named; that is its answer, not a failure here.
        if (!answers) {
          MESSAGE(file, ": ", llvm::toString(answers.takeError()));
          continue;
        }
        prove_regions(*ir.syscalls, target, *answers);
      }
    }
  }
}

// shared_errno_numbers() tries one number per stretch between a rule's
// constants: a range test must still find a number deep inside its range,
// and arithmetic on the number must send it back to trying every number.
TEST_CASE("shared_errno_numbers finds an errno overlap inside a rule's range and behind arithmetic on the number") {
  using aasm::plan::BpfInstruction;
  const uint32_t arch = aasm::kNativeAuditArch;
  const auto program = [arch](std::vector<BpfInstruction> code) { return SeccompProgram{arch, {}, 0, std::move(code)}; };
  const BpfInstruction load_nr{BPF_LD | BPF_W | BPF_ABS, 0, 0, 0};
  const BpfInstruction errno_answer{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | 1};
  const BpfInstruction allow{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW};
  // The main program answers 500 with an errno, allows every other number.
  const SeccompProgram main = program({load_nr, {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 500}, errno_answer, allow});
  const SeccompProgram range = program({load_nr, {BPF_JMP | BPF_JGE | BPF_K, 0, 1, 200}, errno_answer, allow});
  const SeccompProgram below = program({load_nr, {BPF_JMP | BPF_JGE | BPF_K, 1, 0, 200}, errno_answer, allow});
  const SeccompProgram masked = program(
      {load_nr, {BPF_ALU | BPF_AND | BPF_K, 0, 0, 0xff}, {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 500 & 0xff}, errno_answer, allow});
  CHECK(aasm::shared_errno_numbers(main, {&range}) == std::vector<int32_t>{500});
  CHECK(aasm::shared_errno_numbers(main, {&below}).empty());
  CHECK(aasm::shared_errno_numbers(main, {&masked}) == std::vector<int32_t>{500});
  for (const SeccompProgram* rule : {&range, &below, &masked})
    CHECK(aasm::shared_errno_numbers(main, {rule}) == errno_overlap_by_every_number(main, {rule}));
}

// Where a number keeps its errno, the errno returns of the main program
// become jumps to a test after it: that number still gets the program's
// errno, every other errno'd number the notification, and every allowed one
// the same cached allow.
TEST_CASE("the rewrite keeps the errno of the kept numbers and notifies the others, allowed paths as written") {
  using aasm::plan::BpfInstruction;
  const uint32_t arch = aasm::kNativeAuditArch;
  const BpfInstruction load_nr{BPF_LD | BPF_W | BPF_ABS, 0, 0, 0};
  // 500 -> EPERM, 501 -> EACCES, 502 -> EPERM, others allowed.
  const SeccompProgram main{arch, {}, 0,
                            {load_nr,
                             {BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 500},
                             {BPF_JMP | BPF_JEQ | BPF_K, 3, 0, 501},
                             {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 502},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EACCES}}};
  const std::vector<int32_t> kept = {502};
  const auto rewritten = aasm::seccomp::with_errno_answers_notified(main, std::nullopt, kept);
  REQUIRE(rewritten);
  const std::vector<BpfInstruction> observed = as_plan(*rewritten);
  const auto answer = [&](int32_t nr) {
    bpf::SeccompData data;
    data.nr = nr;
    data.arch = arch;
    const auto outcome = bpf::run(observed, data);
    REQUIRE(outcome);
    return outcome->action;
  };
  CHECK(answer(500) == SECCOMP_RET_USER_NOTIF);
  CHECK(answer(501) == SECCOMP_RET_USER_NOTIF);
  CHECK(answer(502) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(answer(3) == SECCOMP_RET_ALLOW);
  CHECK(bpf::is_constant_allow(observed, arch, 3));
  // The allowed path runs the same instructions as before the rewrite.
  bpf::SeccompData data;
  data.nr = 3;
  data.arch = arch;
  CHECK(bpf::run(observed, data)->executed == bpf::run(main.instructions, data)->executed);
  SUBCASE("control: nothing kept: every errno return notifies in place, no test appended") {
    const auto in_place = aasm::seccomp::with_errno_answers_notified(main, std::nullopt, {});
    REQUIRE(in_place);
    CHECK(in_place->instructions.size() == main.instructions.size());
  }
}

// The rule programs go in notifying, and the main program notifies where a
// rule refuses (seccomp::notifying_main): the stack answers every call a
// rule or the main program refuses with an errno by the main program's
// notification (the newest of equal actions: the listener's), a kill by the
// kill, and everything else as written; bpf::run_stack of the programs as
// written gives the answer the supervisor replays. Without the main
// program's notification (its supervisor gone: no listener) a rule's own
// notification makes the kernel answer ENOSYS, never the call.
TEST_CASE("a rule's errno answers reach the main program's listener: a notification, the main program's kill, or as written") {
  using aasm::plan::BpfInstruction;
  const uint32_t arch = aasm::kNativeAuditArch;
  const BpfInstruction load_nr{BPF_LD | BPF_W | BPF_ABS, 0, 0, 0};
  const BpfInstruction load_arg0{BPF_LD | BPF_W | BPF_ABS, 0, 0, uint32_t(offsetof(bpf::SeccompData, args))};
  const BpfInstruction allow{BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW};
  // 500 and 503 -> EPERM, 501 killed, 504 logged, the others allowed.
  const SeccompProgram main{arch, {}, 0,
                            {load_nr,
                             {BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 500},
                             {BPF_JMP | BPF_JEQ | BPF_K, 4, 0, 503},
                             {BPF_JMP | BPF_JEQ | BPF_K, 4, 0, 501},
                             {BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 504},
                             allow,
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_LOG},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EPERM},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_KILL_PROCESS}}};
  // With arg0 == 1: 500 to 502 and 504 -> EACCES, 503 -> ENOENT; allowed otherwise.
  const SeccompProgram rule{arch, aasm::plan::FilterMode::kRules, SECCOMP_RET_ALLOW,
                            {load_nr,
                             {BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 503},
                             {BPF_JMP | BPF_JGE | BPF_K, 0, 4, 500},
                             {BPF_JMP | BPF_JGT | BPF_K, 3, 0, 504},
                             load_arg0,
                             {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 1},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | EACCES},
                             allow,
                             load_arg0,
                             {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 1},
                             {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | ENOENT},
                             allow}};
  const std::vector<const SeccompProgram*> rules = {&rule};
  const std::vector<int32_t> ruled = aasm::rule_errno_numbers(rules);
  CHECK(ruled == std::vector<int32_t>{500, 501, 502, 503, 504});
  const auto observing = aasm::seccomp::notifying_main(main, std::nullopt, rules, ruled);
  REQUIRE(observing);
  // Main's allow and its log each go on to a copy of the rule.
  CHECK(observing->instructions.size() == main.instructions.size() + 2 * (rule.instructions.size() + 1));
  const std::vector<SeccompProgram> written = {rule, main};
  std::vector<SeccompProgram> installed = written;
  installed[0].instructions = as_plan(aasm::seccomp::notifying_rule(rule));
  installed[1].instructions = as_plan(*observing);
  const auto data_of = [arch](int32_t nr, uint64_t arg0) {
    bpf::SeccompData data;
    data.nr = nr;
    data.arch = arch;
    data.args[0] = arg0;
    return data;
  };
  const auto answer = [&](int32_t nr, uint64_t arg0) { return *bpf::run_stack(installed, data_of(nr, arg0)); };
  const auto replayed = [&](int32_t nr, uint64_t arg0) { return *bpf::run_stack(written, data_of(nr, arg0)); };
  for (const int32_t nr : {500, 502, 503, 504}) {
    CAPTURE(nr);
    CHECK(answer(nr, 1).action == SECCOMP_RET_USER_NOTIF);
    CHECK(answer(nr, 1).filter == 1);  // the main program's: its listener
  }
  CHECK(replayed(500, 1).action == (SECCOMP_RET_ERRNO | EPERM));  // equal actions: the newer filter's
  CHECK(replayed(502, 1).action == (SECCOMP_RET_ERRNO | EACCES));
  CHECK(replayed(503, 1).action == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(replayed(504, 1).action == (SECCOMP_RET_ERRNO | EACCES));  // an errno beats a log
  CHECK(answer(501, 1).action == SECCOMP_RET_KILL_PROCESS);
  CHECK(answer(502, 0).action == SECCOMP_RET_ALLOW);
  CHECK(answer(504, 0).action == SECCOMP_RET_LOG);
  CHECK(answer(500, 0).action == SECCOMP_RET_USER_NOTIF);  // main's own errno
  // Allowed paths: the rule's as written; a number no rule refuses cached
  // by both (the main program's allow, shared with 502, runs the rule's
  // copy where the cache does not serve the call).
  CHECK(bpf::run(installed[0].instructions, data_of(500, 0))->executed ==
        bpf::run(rule.instructions, data_of(500, 0))->executed);
  CHECK(bpf::is_constant_allow(installed[0].instructions, arch, 3));
  CHECK(bpf::is_constant_allow(installed[1].instructions, arch, 3));

  SUBCASE("control: the supervisor gone, the rule's own notification leaves the call refused (ENOSYS), never allowed") {
    // The main program as written, no listener anywhere: the kernel answers
    // a filter's notification without one with ENOSYS.
    installed[1] = main;
    const bpf::StackOutcome alone = answer(502, 1);
    CHECK(alone.action == SECCOMP_RET_USER_NOTIF);
    CHECK(alone.filter == 0);
  }
  SUBCASE("control: a rule that returns its accumulator cannot be carried by the main program") {
    SeccompProgram computed = rule;
    computed.instructions.back() = {BPF_RET | BPF_A, 0, 0, 0};
    const std::vector<const SeccompProgram*> computing = {&computed};
    CHECK_FALSE(aasm::seccomp::notifying_main(main, std::nullopt, computing, ruled));
  }
}

// The launcher's connect() notifier (runtime/kernel/seccomp_notify.h) runs
// beside the plan's programs on every call: it must cost nothing but for
// connect, so every other number is a constant allow the kernel caches.
TEST_CASE("the connect() notifier sends connect to the listener and is a cached allow for every other call") {
  const std::vector<aasm::plan::BpfInstruction> program =
      as_plan(aasm::seccomp::notifier_for(aasm::kNativeAuditArch, SYS_connect));
  for (int32_t nr = 0; nr < 1024; ++nr)
    if (nr != SYS_connect) CHECK_MESSAGE(bpf::is_constant_allow(program, aasm::kNativeAuditArch, nr), nr);
  CHECK_FALSE(bpf::is_constant_allow(program, aasm::kNativeAuditArch, SYS_connect));
  bpf::SeccompData connect;
  connect.nr = SYS_connect;
  connect.arch = aasm::kNativeAuditArch;
  const std::optional<bpf::Outcome> outcome = bpf::run(program, connect);
  REQUIRE(outcome);
  CHECK(outcome->action == SECCOMP_RET_USER_NOTIF);
}

}  // namespace
}  // namespace aasmc
