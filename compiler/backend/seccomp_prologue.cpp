#include "backend/seccomp_prologue.h"

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cerrno>

#include "middle/syscall_semantics.h"

namespace aasmc {
namespace {

using aasm::plan::BpfInstruction;

constexpr uint32_t kArchOffset = 4;
constexpr uint32_t kNrOffset = 0;
constexpr uint32_t kX32Bit = 0x40000000;

constexpr BpfInstruction load(uint32_t offset) { return {BPF_LD | BPF_W | BPF_ABS, 0, 0, offset}; }
constexpr BpfInstruction ret(uint32_t action) { return {BPF_RET | BPF_K, 0, 0, action}; }
constexpr BpfInstruction jump(uint16_t op, uint32_t k, uint8_t jt, uint8_t jf) {
  return {uint16_t(BPF_JMP | op | BPF_K), jt, jf, k};
}

bool is_x86_64(const Target& target) { return std::string_view(target.name) == "x86_64"; }

// The length of libseccomp 2.5's header for a single-architecture filter:
//   ld arch; jeq ARCH (else bad-arch); ld nr;
//   x86_64 adds: jge 0x40000000 (x32); jeq -1 (else bad-arch); ld nr.
std::optional<size_t> libseccomp_header_length(const std::vector<BpfInstruction>& p, const Target& target) {
  auto is = [&](size_t i, const BpfInstruction& want, bool any_jf = false) {
    return i < p.size() && p[i].code == want.code && p[i].k == want.k && p[i].jt == want.jt &&
           (any_jf || p[i].jf == want.jf);
  };
  if (!is(0, load(kArchOffset)) || !is(1, jump(BPF_JEQ, target.audit_arch, 0, 0), true) || !is(2, load(kNrOffset)))
    return std::nullopt;
  if (!is_x86_64(target)) return 3;
  if (!is(3, jump(BPF_JGE, kX32Bit, 0, 1)) || !is(4, jump(BPF_JEQ, 0xffffffff, 0, 0), true) || !is(5, load(kNrOffset)))
    return std::nullopt;
  return 6;
}

}  // namespace

std::vector<NumberGap> syscall_number_gaps(const Target& target) {
  std::vector<NumberGap> gaps;
  const int32_t max = max_syscall_number(target);
  for (int32_t nr = 0; nr <= max; ++nr) {
    if (!syscall_name(target, nr).empty()) continue;
    if (!gaps.empty() && gaps.back().last + 1 == uint32_t(nr)) gaps.back().last = uint32_t(nr);
    else gaps.push_back({uint32_t(nr), uint32_t(nr)});
  }
  return gaps;
}

llvm::Expected<std::vector<BpfInstruction>> with_prologue(const std::vector<BpfInstruction>& program,
                                                           const Target& target) {
  const auto header = libseccomp_header_length(program, target);
  if (!header)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "seccomp lowering for %s: libseccomp's program does not start with the header this "
                                   "compiler knows; refusing to splice into it",
                                   target.name);
  const uint32_t kill = SECCOMP_RET_KILL_PROCESS;
  const uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;
  const uint32_t max = uint32_t(max_syscall_number(target));
  const std::vector<NumberGap> gaps = syscall_number_gaps(target);

  std::vector<BpfInstruction> out = {
      load(kArchOffset),
      jump(BPF_JEQ, target.audit_arch, 1, 0),
      ret(kill),
      load(kNrOffset),
  };
  if (is_x86_64(target)) {
    // Above the table: -1 is ENOSYS, the x32 range and beyond kill, the rest ENOSYS.
    out.push_back(jump(BPF_JGT, max, 0, 4));
    out.push_back(jump(BPF_JEQ, 0xffffffff, 2, 0));
    out.push_back(jump(BPF_JGE, kX32Bit, 0, 1));
    out.push_back(ret(kill));
    out.push_back(ret(enosys));
  } else {
    out.push_back(jump(BPF_JGT, max, 0, 1));
    out.push_back(ret(enosys));
  }
  // Gaps, ascending: below a gap, go to the tree; inside it, ENOSYS.
  for (size_t i = 0; i < gaps.size(); ++i) {
    const size_t after = 3 * (gaps.size() - i - 1);  // instructions of the later gaps
    out.push_back(jump(BPF_JGE, gaps[i].first, 0, uint8_t(after + 2)));
    out.push_back(jump(BPF_JGT, gaps[i].last, 1, 0));
    out.push_back(ret(enosys));
  }
  out.insert(out.end(), program.begin() + long(*header), program.end());
  return out;
}

}  // namespace aasmc
