// Shared by the benchmarks: a policy compiled in-process, as aasmc does,
// into the stacked seccomp programs of each target.
#pragma once

#include <linux/filter.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "backend/seccomp_lowering.h"
#include "backend/socket_rules.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"

namespace aasm::bench {

struct Compiled {
  aasmc::SyscallIR ir;
  std::vector<aasmc::Target> targets;
  std::vector<std::vector<plan::SeccompProgram>> programs;  // per target, install order
};

// Exits with a message when the policy does not compile: a benchmark of
// something that does not exist has no numbers.
inline Compiled compile_policy(const std::string& path) {
  llvm::SourceMgr sources;
  aasmc::Diagnostics diags(sources);
  std::vector<aasmc::PolicyDocument> documents;
  aasmc::load_policy_file(path, diags, documents);
  Compiled out;
  out.targets.assign(aasmc::all_targets().begin(), aasmc::all_targets().end());
  auto policy = aasmc::build_ir(documents, out.targets, diags);
  std::optional<aasmc::PolicyIR> ir;  // with the socket rules, as the plan's programs hold them
  if (policy && diags.error_count() == 0) {
    auto lowered = aasmc::with_socket_rules(*policy);
    if (lowered) ir = std::move(*lowered);
    else llvm::consumeError(lowered.takeError());
  }
  if (!ir || !ir->syscalls) {
    std::fprintf(stderr, "%s: does not compile to a syscall filter\n", path.c_str());
    std::exit(2);
  }
  out.ir = *ir->syscalls;
  for (const aasmc::Target& target : out.targets) {
    auto programs = aasmc::lower_syscalls(out.ir, target);
    if (!programs) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), llvm::toString(programs.takeError()).c_str());
      std::exit(2);
    }
    out.programs.push_back(std::move(*programs));
  }
  return out;
}

// The policy the benchmarks measure: argv[1], else $AASM_BENCH_POLICY.
inline std::string policy_path(int argc, char** argv) {
  if (argc > 1) return argv[1];
  if (const char* env = std::getenv("AASM_BENCH_POLICY")) return env;
  std::fprintf(stderr, "usage: %s POLICY.yaml (or set AASM_BENCH_POLICY)\n", argv[0]);
  std::exit(2);
}

// A libseccomp filter context's program, read back through a memfd.
inline std::vector<plan::BpfInstruction> export_libseccomp(scmp_filter_ctx ctx) {
  const int fd = memfd_create("bench-bpf", MFD_CLOEXEC);
  std::vector<plan::BpfInstruction> program;
  if (fd < 0 || seccomp_export_bpf(ctx, fd) != 0) {
    std::perror("seccomp_export_bpf");
    std::exit(2);
  }
  const off_t size = lseek(fd, 0, SEEK_END);
  std::vector<sock_filter> raw(size_t(size) / sizeof(sock_filter));
  if (pread(fd, raw.data(), raw.size() * sizeof(sock_filter), 0) != ssize_t(raw.size() * sizeof(sock_filter))) {
    std::perror("pread");
    std::exit(2);
  }
  close(fd);
  for (const sock_filter& insn : raw) program.push_back({insn.code, insn.jt, insn.jf, insn.k});
  return program;
}

}  // namespace aasm::bench
