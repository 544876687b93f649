// Writes the seccomp programs a plan holds for this host's architecture as
// raw `struct sock_filter` arrays, one file per program in install order
// (the main program last): OUT_PREFIX.0.bpf, OUT_PREFIX.1.bpf, ... The
// launch-time benchmark (docs/benchmarks.md, "Launch time") gives these
// files to the reference launcher and to bwrap (--add-seccomp-fd), so every
// launcher installs exactly the filter aasm-launch installs.
//
//   bench-export-filter PLAN OUT_PREFIX
//
// Prints each file written, one per line. The plan is verified as the
// launcher verifies it (decode_plan: limits, digest, sections).
#include <linux/filter.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernel/arch.h"
#include "plan/plan.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PLAN OUT_PREFIX\n", argv[0]);
    return 2;
  }
  auto bytes = aasm::plan::read_plan_file(argv[1]);
  if (!bytes) {
    std::fprintf(stderr, "%s: %s\n", argv[1], bytes.error().message.c_str());
    return 1;
  }
  auto plan = aasm::plan::decode_plan(*bytes);
  if (!plan) {
    std::fprintf(stderr, "%s: %s\n", argv[1], plan.error().message.c_str());
    return 1;
  }
  const auto programs = aasm::plan::programs_for(*plan, aasm::kNativeAuditArch);
  if (programs.empty()) {
    std::fprintf(stderr, "%s: no seccomp program for %s\n", argv[1],
                 aasm::plan::audit_arch_name(aasm::kNativeAuditArch));
    return 1;
  }
  for (size_t i = 0; i < programs.size(); ++i) {
    std::vector<sock_filter> raw;
    for (const auto& insn : programs[i]->instructions) raw.push_back({insn.code, insn.jt, insn.jf, insn.k});
    const std::string path = std::string(argv[2]) + "." + std::to_string(i) + ".bpf";
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (!out || std::fwrite(raw.data(), sizeof(sock_filter), raw.size(), out) != raw.size() ||
        std::fclose(out) != 0) {
      std::perror(path.c_str());
      return 1;
    }
    std::printf("%s\n", path.c_str());
  }
  return 0;
}
