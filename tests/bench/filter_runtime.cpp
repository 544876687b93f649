// Run-time cost of a compiled syscall filter under the real kernel: a loop
// of system calls in a forked child with the policy's x86_64/aarch64
// programs installed (prctl(PR_SET_NO_NEW_PRIVS) + seccomp(), in plan
// order, as aasm-launch does) against the same loop in a child without a
// filter. Runs alternate, A B A B ..., so drift hits both alike; reported:
// the median ns per call of each and their ratio.
//
//   bench-filter-runtime testdata/policies/docker-default.yaml [ITERATIONS] [ROUNDS]
//
// getppid and read(fd, buf, 0) are allowed for every argument, so the
// kernel's per-filter action cache serves them without running any BPF;
// ioctl(FIONREAD) has argument rules, so every filter runs for it.
// A third child runs the programs as aasm-launch installs them: the main one
// rewritten, its errno answers and connect() sent to a listener
// (kernel/seccomp_notify.h), installed with it (issue 14), and the rule
// programs notifying their errno answers (notifying_rule) while the main
// program notifies the same calls (notifying_main: its returns that let a
// ruled number through go on to copies of the rules). Allowed calls the
// kernel's cache serves cost nothing either way; the interpreter's counts
// compare the others, as written, as installed, and for the launcher's
// fallback where the rules cannot go in notifying (the main program keeps
// its errno for the numbers it shares with a rule).
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bench_common.h"
#include "kernel/bpf_interpreter.h"
#include "kernel/seccomp_notify.h"
#include "supervisor/listener_answers.h"

namespace {

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#endif

enum class Call { kGetppid, kRead0, kIoctlFionread };
const char* call_name(Call c) {
  switch (c) {
    case Call::kGetppid: return "getppid()";
    case Call::kRead0: return "read(fd, buf, 0)";
    case Call::kIoctlFionread: return "ioctl(fd, FIONREAD)";
  }
  return "?";
}

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no system call
  return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// In a fresh child: optionally install the filters, run `iterations` calls,
// send back ns per call (as a double) through a pipe.
// With `listened`, the last filter is installed with a new listener.
double measure(const std::vector<aasm::plan::SeccompProgram>* filters, Call call, long iterations,
               bool listened = false) {
  int result[2];
  if (pipe(result) != 0) std::exit(2);
  const pid_t child = fork();
  if (child < 0) std::exit(2);
  if (child == 0) {
    close(result[0]);
    int data[2];
    if (pipe(data) != 0) _exit(3);
    // Both children set no_new_privs: the only difference is the filter.
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(3);
    if (filters)
      for (const aasm::plan::SeccompProgram& program : *filters) {
        std::vector<sock_filter> insns;
        for (const auto& i : program.instructions) insns.push_back({i.code, i.jt, i.jf, i.k});
        sock_fprog prog{uint16_t(insns.size()), insns.data()};
        const bool last = &program == &filters->back();
        const long flags = listened && last ? SECCOMP_FILTER_FLAG_NEW_LISTENER : 0;
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog) < 0) _exit(4);
      }
    char buffer[1];
    int pending = 0;
    for (long i = 0; i < iterations / 10; ++i) syscall(SYS_getppid);  // warm-up
    const uint64_t start = now_ns();
    for (long i = 0; i < iterations; ++i) {
      long rc = 0;
      switch (call) {
        case Call::kGetppid: rc = syscall(SYS_getppid); break;
        case Call::kRead0: rc = syscall(SYS_read, data[0], buffer, 0); break;
        case Call::kIoctlFionread: rc = syscall(SYS_ioctl, data[0], FIONREAD, &pending); break;
      }
      if (rc < 0) _exit(5);
    }
    const double per_call = double(now_ns() - start) / double(iterations);
    (void)!write(result[1], &per_call, sizeof per_call);
    _exit(0);
  }
  close(result[1]);
  double per_call = -1;
  const bool got = read(result[0], &per_call, sizeof per_call) == sizeof per_call;
  close(result[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "measuring child failed (status %#x)\n", status);
    std::exit(2);
  }
  return per_call;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = aasm::bench::policy_path(argc, argv);
  const long iterations = argc > 2 ? std::atol(argv[2]) : 1000000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 11;
  const aasm::bench::Compiled compiled = aasm::bench::compile_policy(path);
  const std::vector<aasm::plan::SeccompProgram>* native = nullptr;
  for (size_t t = 0; t < compiled.targets.size(); ++t)
    if (compiled.targets[t].audit_arch == kNativeArch) native = &compiled.programs[t];
  if (!native) {
    std::fprintf(stderr, "no programs for this architecture\n");
    return 2;
  }
  size_t instructions = 0;
  for (const auto& p : *native) instructions += p.instructions.size();
  std::printf("policy: %s; %zu programs, %zu instructions; %ld calls per run, %d rounds A (filtered) / B (none)\n",
              path.c_str(), native->size(), instructions, iterations, rounds);
  std::vector<aasm::plan::SeccompProgram> observed = *native;
  // As the launcher's preparation does (launcher/preparation.cpp
  // prepare_listener).
  std::vector<const aasm::plan::SeccompProgram*> rules;
  for (size_t i = 0; i + 1 < native->size(); ++i) rules.push_back(&(*native)[i]);
  const std::vector<int32_t> ruled = aasm::rule_errno_numbers(rules);
  const std::vector<int32_t> kept = aasm::shared_errno_numbers(native->back(), rules);
  const auto as_plan = [](const aasm::seccomp::PreparedFilter& f) {
    std::vector<aasm::plan::BpfInstruction> p;
    for (const sock_filter& i : f.instructions) p.push_back({i.code, i.jt, i.jf, i.k});
    return p;
  };
  for (size_t i = 0; i < rules.size(); ++i) observed[i].instructions = as_plan(aasm::seccomp::notifying_rule(*rules[i]));
  const auto rewritten = aasm::seccomp::notifying_main(native->back(), SYS_connect, rules, ruled);
  const auto with_kept = aasm::seccomp::with_errno_answers_notified(native->back(), SYS_connect, kept);
  if (!rewritten || !with_kept) return 2;
  observed.back().instructions = as_plan(*rewritten);
  size_t installed = 0;
  for (const auto& p : observed) installed += p.instructions.size();
  std::printf("as installed: %zu instructions (main program %zu -> %zu); %zu call numbers a rule may refuse with an "
              "errno, %zu of them the main program may too\n",
              installed, native->back().instructions.size(), rewritten->instructions.size(), ruled.size(), kept.size());
  // The interpreter's count over every number all the programs allow (all
  // arguments 0), and over those the kernel's cache does not serve (some
  // program looks past the number): only those run any BPF.
  std::vector<aasm::plan::SeccompProgram> kept_stack = *native;
  kept_stack.back().instructions = as_plan(*with_kept);
  const auto executed = [](const std::vector<aasm::plan::SeccompProgram>& stack, const aasm::bpf::SeccompData& data) {
    size_t sum = 0;
    for (const auto& p : stack) sum += aasm::bpf::run(p.instructions, data)->executed;
    return sum;
  };
  const auto cached = [](const std::vector<aasm::plan::SeccompProgram>& stack, int32_t nr) {
    return std::all_of(stack.begin(), stack.end(),
                       [nr](const auto& p) { return aasm::bpf::is_constant_allow(p.instructions, kNativeArch, nr); });
  };
  size_t allowed = 0, written = 0, as_installed = 0, keeping = 0;
  size_t uncached = 0, uncached_written = 0, uncached_installed = 0;
  std::string cache_lost;  // connect() by design: the supervisor answers it
  for (int32_t nr = 0; nr < 1024; ++nr) {
    aasm::bpf::SeccompData data;
    data.nr = nr;
    data.arch = kNativeArch;
    const auto a = aasm::bpf::run_stack(*native, data);
    if (!a || a->action != SECCOMP_RET_ALLOW) continue;
    ++allowed;
    written += executed(*native, data);
    as_installed += executed(observed, data);
    keeping += executed(kept_stack, data);
    if (cached(*native, nr)) {
      if (!cached(observed, nr)) cache_lost += (cache_lost.empty() ? "" : ", ") + std::to_string(nr);
      continue;
    }
    ++uncached;
    uncached_written += executed(*native, data);
    uncached_installed += executed(observed, data);
  }
  std::printf("BPF instructions run by all %zu programs for the %zu numbers they allow: as written %zu, as installed "
              "(rules and main notifying) %zu, main keeping the shared numbers' errno instead %zu\n",
              native->size(), allowed, written, as_installed, keeping);
  std::printf("of them the %zu the kernel's cache does not serve: as written %zu, as installed %zu; numbers the "
              "cache no longer serves as installed: %s (connect, %d, goes to the supervisor by design)\n",
              uncached, uncached_written, uncached_installed, cache_lost.empty() ? "none" : cache_lost.c_str(),
              int(SYS_connect));
  std::printf("%-22s %14s %14s %14s %8s %8s\n", "call", "filtered ns", "unfiltered ns", "observed ns", "ratio",
              "obs/filt");
  for (Call call : {Call::kGetppid, Call::kRead0, Call::kIoctlFionread}) {
    std::vector<double> filtered, unfiltered, listened;
    for (int r = 0; r < rounds; ++r) {
      filtered.push_back(measure(native, call, iterations));
      unfiltered.push_back(measure(nullptr, call, iterations));
      listened.push_back(measure(&observed, call, iterations, true));
    }
    const double a = median(filtered), b = median(unfiltered), c = median(listened);
    std::printf("%-22s %14.1f %14.1f %14.1f %8.3f %8.3f\n", call_name(call), a, b, c, a / b, c / a);
  }
  return 0;
}
