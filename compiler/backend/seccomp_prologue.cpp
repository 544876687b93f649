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

// The length of libseccomp 2.5's header for a single-architecture filter,
// after which A holds the syscall number. Two layouts, depending on whether
// the bad-architecture `ret` at the program's end is within a jump's reach
// (8-bit offsets) or libseccomp puts one inline:
//   near: ld arch; jeq ARCH (jf: bad-arch); ld nr;
//         x86_64 adds: jge 0x40000000 (jf +1); jeq -1 (jf: bad-arch); ld nr.
//   far:  ld arch; jeq ARCH (jt +1); ret KILL; ld nr;                          (aarch64)
//         ld arch; jeq ARCH (jf +3); ld nr; jge 0x40000000 (jf +2);
//         jeq -1 (jt +1); ret KILL; ld nr.                                     (x86_64)
//   mixed (x86_64, the end's `ret` reachable from the x32 check only):
//         ld arch; jeq ARCH (jt +1); ret KILL; ld nr; jge 0x40000000 (jf +1);
//         jeq -1 (jf: bad-arch); ld nr.
std::optional<size_t> libseccomp_header_length(const std::vector<BpfInstruction>& p, const Target& target) {
  auto is = [&](size_t i, const BpfInstruction& want, bool any_jf = false) {
    return i < p.size() && p[i].code == want.code && p[i].k == want.k && p[i].jt == want.jt &&
           (any_jf || p[i].jf == want.jf);
  };
  const BpfInstruction kill = ret(SECCOMP_RET_KILL_PROCESS);
  if (!is(0, load(kArchOffset))) return std::nullopt;
  if (!is_x86_64(target)) {
    if (is(1, jump(BPF_JEQ, target.audit_arch, 0, 0), true) && is(2, load(kNrOffset))) return 3;
    if (is(1, jump(BPF_JEQ, target.audit_arch, 1, 0)) && is(2, kill) && is(3, load(kNrOffset))) return 4;
    return std::nullopt;
  }
  if (is(1, jump(BPF_JEQ, target.audit_arch, 0, 0), true) && is(2, load(kNrOffset)) &&
      is(3, jump(BPF_JGE, kX32Bit, 0, 1)) && is(4, jump(BPF_JEQ, 0xffffffff, 0, 0), true) && is(5, load(kNrOffset)))
    return 6;
  if (is(1, jump(BPF_JEQ, target.audit_arch, 1, 0)) && is(2, kill) && is(3, load(kNrOffset)) &&
      is(4, jump(BPF_JGE, kX32Bit, 0, 1)) && is(5, jump(BPF_JEQ, 0xffffffff, 0, 0), true) && is(6, load(kNrOffset)))
    return 7;
  if (is(1, jump(BPF_JEQ, target.audit_arch, 0, 3)) && is(2, load(kNrOffset)) &&
      is(3, jump(BPF_JGE, kX32Bit, 0, 2)) && is(4, jump(BPF_JEQ, 0xffffffff, 1, 0)) && is(5, kill) &&
      is(6, load(kNrOffset)))
    return 7;
  return std::nullopt;
}

llvm::Expected<size_t> header_length(const std::vector<BpfInstruction>& program, const Target& target) {
  if (auto length = libseccomp_header_length(program, target)) return *length;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "seccomp lowering for %s: libseccomp's program does not start with a header this "
                                 "compiler knows; refusing to splice into it",
                                 target.name);
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

// The prologue walks the ranges of unnamed numbers in ascending order, so a
// number below the first gap (nearly every call) costs one comparison after
// the architecture check. Jump targets are symbolic until the end.
llvm::Expected<std::vector<BpfInstruction>> with_prologue(const std::vector<BpfInstruction>& program,
                                                           const Target& target) {
  auto header = header_length(program, target);
  if (!header) return header.takeError();
  enum Label : int { kNext = -1, kTree = -2, kEnosys = -3, kKill = -4 };
  struct Insn {
    BpfInstruction insn;
    int jt = kNext, jf = kNext;  // symbolic targets of a conditional jump
  };
  std::vector<Insn> p = {{load(kArchOffset)},
                         {jump(BPF_JEQ, target.audit_arch, 0, 0), kNext, kKill},
                         {load(kNrOffset)}};
  // [first, last] ranges the table does not name, the last one open-ended.
  std::vector<NumberGap> ranges = syscall_number_gaps(target);
  const uint32_t above = uint32_t(max_syscall_number(target)) + 1;
  for (const NumberGap& gap : ranges) {
    p.push_back({jump(BPF_JGE, gap.first, 0, 0), kNext, kTree});
    p.push_back({jump(BPF_JGT, gap.last, 0, 0), kNext, kEnosys});
  }
  p.push_back({jump(BPF_JGE, above, 0, 0), kNext, kTree});
  if (is_x86_64(target)) {
    // Above the table: -1 is ENOSYS; the x32 range and beyond kill.
    p.push_back({jump(BPF_JEQ, 0xffffffff, 0, 0), kEnosys, kNext});
    p.push_back({jump(BPF_JGE, kX32Bit, 0, 0), kKill, kEnosys});
  }
  const size_t enosys_at = p.size();
  p.push_back({ret(SECCOMP_RET_ERRNO | ENOSYS)});
  const size_t kill_at = p.size();
  p.push_back({ret(SECCOMP_RET_KILL_PROCESS)});
  const size_t tree_at = p.size();

  std::vector<BpfInstruction> out;
  for (size_t i = 0; i < p.size(); ++i) {
    BpfInstruction insn = p[i].insn;
    if (BPF_CLASS(insn.code) == BPF_JMP) {
      auto offset = [&](int label) -> uint8_t {
        const size_t to = label == kNext ? i + 1 : label == kTree ? tree_at : label == kEnosys ? enosys_at : kill_at;
        return uint8_t(to - i - 1);  // the prologue is far shorter than 256 instructions
      };
      insn.jt = offset(p[i].jt);
      insn.jf = offset(p[i].jf);
    }
    out.push_back(insn);
  }
  out.insert(out.end(), program.begin() + long(*header), program.end());
  return out;
}

llvm::Expected<std::vector<BpfInstruction>> without_header(const std::vector<BpfInstruction>& program,
                                                            const Target& target) {
  auto header = header_length(program, target);
  if (!header) return header.takeError();
  std::vector<BpfInstruction> out = {load(kNrOffset)};
  out.insert(out.end(), program.begin() + long(*header), program.end());
  return out;
}

}  // namespace aasmc
