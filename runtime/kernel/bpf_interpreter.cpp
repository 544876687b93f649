#include "kernel/bpf_interpreter.h"

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cstddef>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

namespace aasm::bpf {
namespace {

using aasm::plan::BpfInstruction;

constexpr uint32_t kDataSize = sizeof(SeccompData);
constexpr uint32_t kArgsOffset = offsetof(SeccompData, args);

static_assert(sizeof(SeccompData) == 64, "struct seccomp_data is 64 bytes");

// A 32-bit word of seccomp_data, little-endian as on both targets.
uint32_t load_word(const SeccompData& data, uint32_t offset) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&data);
  return uint32_t(bytes[offset]) | uint32_t(bytes[offset + 1]) << 8 | uint32_t(bytes[offset + 2]) << 16 |
         uint32_t(bytes[offset + 3]) << 24;
}

bool jump_taken(uint16_t op, uint32_t a, uint32_t operand) {
  switch (op) {
    case BPF_JEQ: return a == operand;
    case BPF_JGT: return a > operand;
    case BPF_JGE: return a >= operand;
    case BPF_JSET: return (a & operand) != 0;
  }
  return false;
}

std::optional<uint32_t> alu(uint16_t op, uint32_t a, uint32_t operand) {
  switch (op) {
    case BPF_ADD: return a + operand;
    case BPF_SUB: return a - operand;
    case BPF_MUL: return a * operand;
    case BPF_DIV: return operand == 0 ? std::nullopt : std::optional<uint32_t>(a / operand);
    case BPF_MOD: return operand == 0 ? std::nullopt : std::optional<uint32_t>(a % operand);
    case BPF_AND: return a & operand;
    case BPF_OR: return a | operand;
    case BPF_XOR: return a ^ operand;
    case BPF_LSH: return operand >= 32 ? 0 : a << operand;
    case BPF_RSH: return operand >= 32 ? 0 : a >> operand;
    case BPF_NEG: return uint32_t(-int64_t(a));
  }
  return std::nullopt;
}

}  // namespace

std::optional<Outcome> run(std::span<const BpfInstruction> program, const SeccompData& data) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {};
  Outcome outcome;
  for (size_t pc = 0; pc < program.size();) {
    const BpfInstruction& insn = program[pc];
    ++outcome.executed;
    const uint16_t cls = BPF_CLASS(insn.code);
    const uint32_t src = BPF_SRC(insn.code) == BPF_X ? x : insn.k;
    switch (cls) {
      case BPF_LD:
        if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
          if (insn.k % 4 != 0 || insn.k + 4 > kDataSize) return std::nullopt;
          if (insn.k >= offsetof(SeccompData, instruction_pointer)) outcome.read_arguments = true;
          if (insn.k >= kArgsOffset) outcome.arguments_read |= uint8_t(1u << ((insn.k - kArgsOffset) / 8));
          a = load_word(data, insn.k);
        } else if (insn.code == (BPF_LD | BPF_W | BPF_LEN)) {
          a = kDataSize;
        } else if (insn.code == (BPF_LD | BPF_IMM)) {
          a = insn.k;
        } else if (insn.code == (BPF_LD | BPF_MEM) && insn.k < BPF_MEMWORDS) {
          a = mem[insn.k];
        } else {
          return std::nullopt;
        }
        break;
      case BPF_LDX:
        if (insn.code == (BPF_LDX | BPF_W | BPF_IMM)) x = insn.k;
        else if (insn.code == (BPF_LDX | BPF_W | BPF_LEN)) x = kDataSize;
        else if (insn.code == (BPF_LDX | BPF_MEM) && insn.k < BPF_MEMWORDS) x = mem[insn.k];
        else return std::nullopt;
        break;
      case BPF_ST:
      case BPF_STX:
        if (insn.k >= BPF_MEMWORDS) return std::nullopt;
        mem[insn.k] = cls == BPF_ST ? a : x;
        break;
      case BPF_ALU: {
        auto result = alu(BPF_OP(insn.code), a, src);
        if (!result) return std::nullopt;
        a = *result;
        break;
      }
      case BPF_JMP: {
        size_t next;
        if (BPF_OP(insn.code) == BPF_JA) next = pc + 1 + insn.k;
        else next = pc + 1 + (jump_taken(BPF_OP(insn.code), a, src) ? insn.jt : insn.jf);
        if (next >= program.size()) return std::nullopt;
        pc = next;
        continue;
      }
      case BPF_RET:
        outcome.action = BPF_RVAL(insn.code) == BPF_A ? a : insn.k;
        return outcome;
      case BPF_MISC:
        if (BPF_MISCOP(insn.code) == BPF_TAX) x = a;
        else if (BPF_MISCOP(insn.code) == BPF_TXA) a = x;
        else return std::nullopt;
        break;
      default: return std::nullopt;
    }
    ++pc;
  }
  return std::nullopt;  // fell off the end: the kernel's checker refuses such a program
}

std::optional<StackOutcome> run_stack(std::span<const plan::SeccompProgram> programs, const SeccompData& data) {
  std::optional<StackOutcome> decided;
  // Newest first with a strict comparison, as the kernel walks them: an
  // older filter's equal answer does not replace a newer one's.
  for (size_t i = programs.size(); i-- > 0;) {
    const std::optional<Outcome> outcome = run(programs[i].instructions, data);
    if (!outcome) return std::nullopt;
    if (!decided || strictness(outcome->action) < strictness(decided->action))
      decided = StackOutcome{outcome->action, i, outcome->arguments_read};
  }
  return decided;
}

// Mirrors seccomp_is_const_allow() of kernel/seccomp.c (Linux 5.11+): only
// loads of nr and arch, ALU AND with a constant, constant jumps and RET K are
// understood; anything else makes the syscall uncacheable.
bool is_constant_allow(std::span<const BpfInstruction> program, uint32_t arch, int32_t nr) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size();) {
    const BpfInstruction& insn = program[pc];
    switch (insn.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (insn.k == offsetof(SeccompData, nr)) a = uint32_t(nr);
        else if (insn.k == offsetof(SeccompData, arch)) a = arch;
        else return false;
        ++pc;
        continue;
      case BPF_RET | BPF_K: return insn.k == SECCOMP_RET_ALLOW;
      case BPF_JMP | BPF_JA: pc += 1 + insn.k; continue;
      case BPF_JMP | BPF_JEQ | BPF_K:
      case BPF_JMP | BPF_JGE | BPF_K:
      case BPF_JMP | BPF_JGT | BPF_K:
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += 1 + (jump_taken(BPF_OP(insn.code), a, insn.k) ? insn.jt : insn.jf);
        continue;
      case BPF_ALU | BPF_AND | BPF_K: a &= insn.k; ++pc; continue;
      default: return false;
    }
  }
  return false;
}

// A walk of every path: the accumulator is known after a load of nr or arch
// or a constant, unknown after any other load; a jump on an unknown value
// goes both ways. Programs are acyclic (jumps go forward), and each
// (instruction, accumulator) state is walked once.
std::optional<std::set<size_t>> reachable_returns(std::span<const BpfInstruction> program, uint32_t arch, int32_t nr) {
  struct State {
    size_t pc;
    std::optional<uint32_t> a;
  };
  std::set<size_t> returns;
  // Seen states: a flag per instruction for an unknown accumulator (most of
  // them, past the arguments' loads), a set for the known ones.
  std::vector<uint8_t> seen_unknown(program.size(), 0);
  std::set<std::pair<size_t, uint32_t>> seen_known;
  std::vector<State> pending{{0, std::nullopt}};
  while (!pending.empty()) {
    State state = pending.back();
    pending.pop_back();
    if (state.pc >= program.size()) return std::nullopt;
    const bool fresh = state.a ? seen_known.emplace(state.pc, *state.a).second
                               : !std::exchange(seen_unknown[state.pc], uint8_t(1));
    if (!fresh) continue;
    const BpfInstruction& insn = program[state.pc];
    const uint16_t cls = BPF_CLASS(insn.code);
    const auto next = [&](size_t pc, std::optional<uint32_t> a) { pending.push_back({pc, a}); };
    if (cls == BPF_RET) {
      if (BPF_RVAL(insn.code) != BPF_K) return std::nullopt;
      returns.insert(state.pc);
    } else if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
      std::optional<uint32_t> a;
      if (insn.k == offsetof(SeccompData, nr)) a = uint32_t(nr);
      else if (insn.k == offsetof(SeccompData, arch)) a = arch;
      next(state.pc + 1, a);
    } else if (insn.code == (BPF_LD | BPF_IMM)) {
      next(state.pc + 1, insn.k);
    } else if (cls == BPF_ALU) {
      std::optional<uint32_t> a;
      if (state.a && BPF_SRC(insn.code) == BPF_K) a = alu(BPF_OP(insn.code), *state.a, insn.k);
      next(state.pc + 1, a);
    } else if (cls == BPF_JMP) {
      const size_t after = state.pc + 1;
      if (BPF_OP(insn.code) == BPF_JA) {
        next(after + insn.k, state.a);
      } else if (state.a && BPF_SRC(insn.code) == BPF_K) {
        next(after + (jump_taken(BPF_OP(insn.code), *state.a, insn.k) ? insn.jt : insn.jf), state.a);
      } else {
        next(after + insn.jt, state.a);
        next(after + insn.jf, state.a);
      }
    } else if (cls == BPF_LD || cls == BPF_MISC) {
      next(state.pc + 1, std::nullopt);  // from memory or X: not followed
    } else {
      next(state.pc + 1, state.a);  // LDX, ST, STX leave A as it is
    }
  }
  return returns;
}

std::optional<std::set<uint32_t>> possible_actions(std::span<const BpfInstruction> program, uint32_t arch, int32_t nr) {
  const std::optional<std::set<size_t>> returns = reachable_returns(program, arch, nr);
  if (!returns) return std::nullopt;
  std::set<uint32_t> actions;
  for (const size_t pc : *returns) actions.insert(program[pc].k);
  return actions;
}

std::string disassemble(std::span<const BpfInstruction> program) {
  std::string out;
  char line[160];
  auto field = [](uint32_t k) -> std::string {
    if (k == offsetof(SeccompData, nr)) return "nr";
    if (k == offsetof(SeccompData, arch)) return "arch";
    if (k == offsetof(SeccompData, instruction_pointer)) return "ip.lo";
    if (k == offsetof(SeccompData, instruction_pointer) + 4) return "ip.hi";
    if (k >= kArgsOffset && k < kDataSize)
      return "arg" + std::to_string((k - kArgsOffset) / 8) + ((k - kArgsOffset) % 8 ? ".hi" : ".lo");
    return "data[" + std::to_string(k) + "]";
  };
  static const char* const kJumps[] = {"ja", "jeq", "jgt", "jge", "jset"};
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const BpfInstruction& insn = program[pc];
    const uint16_t cls = BPF_CLASS(insn.code);
    std::string text;
    if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
      text = "ld  " + field(insn.k);
    } else if (cls == BPF_JMP && BPF_OP(insn.code) == BPF_JA) {
      std::snprintf(line, sizeof line, "ja  -> %zu", pc + 1 + insn.k);
      text = line;
    } else if (cls == BPF_JMP && BPF_OP(insn.code) >> 4 <= 4) {
      const std::string operand = BPF_SRC(insn.code) == BPF_X ? "x" : [&] {
        char k[16];
        std::snprintf(k, sizeof k, "0x%x", insn.k);
        return std::string(k);
      }();
      std::snprintf(line, sizeof line, "%-4s %s -> %zu : %zu", kJumps[BPF_OP(insn.code) >> 4], operand.c_str(),
                    pc + 1 + insn.jt, pc + 1 + insn.jf);
      text = line;
    } else if (cls == BPF_RET) {
      std::snprintf(line, sizeof line, "ret 0x%08x", insn.k);
      text = line;
    } else if (insn.code == (BPF_ALU | BPF_AND | BPF_K)) {
      std::snprintf(line, sizeof line, "and 0x%x", insn.k);
      text = line;
    } else if (cls == BPF_ST || cls == BPF_STX || insn.code == (BPF_LD | BPF_MEM) || insn.code == (BPF_LDX | BPF_MEM)) {
      std::snprintf(line, sizeof line, "%s mem[%u]",
                    cls == BPF_ST ? "st " : cls == BPF_STX ? "stx" : cls == BPF_LD ? "ld " : "ldx", insn.k);
      text = line;
    } else if (cls == BPF_MISC) {
      text = BPF_MISCOP(insn.code) == BPF_TAX ? "tax" : "txa";
    } else {
      std::snprintf(line, sizeof line, "op 0x%04x jt %u jf %u k 0x%x", insn.code, insn.jt, insn.jf, insn.k);
      text = line;
    }
    std::snprintf(line, sizeof line, "%4zu: ", pc);
    out += line + text + "\n";
  }
  return out;
}

}  // namespace aasm::bpf
