// A userspace classic-BPF interpreter with the kernel's seccomp semantics, a
// model of the kernel's constant-action cache check, and a disassembler. The
// tests run every emitted program through it; the benchmark counts with it.
#pragma once

#include <linux/seccomp.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "plan/plan.h"

namespace aasm::bpf {

// struct seccomp_data, as the kernel lays it out.
struct SeccompData {
  int32_t nr = 0;
  uint32_t arch = 0;
  uint64_t instruction_pointer = 0;
  uint64_t args[6] = {};
};

struct Outcome {
  uint32_t action = 0;      // the SECCOMP_RET_* value returned
  size_t executed = 0;      // instructions executed, the return included
  bool read_arguments = false;
  uint8_t arguments_read = 0;  // bit i: a word of args[i] was loaded
};

// Runs `program` on `data`; nullopt when the program does something the
// kernel's checker would refuse (bad opcode, jump out of range, misaligned
// load, falling off the end).
std::optional<Outcome> run(std::span<const plan::BpfInstruction> program, const SeccompData& data);

// How strict a seccomp action is, as seccomp_run_filters() (kernel/seccomp.c)
// compares the answers of stacked filters: the action bits as a signed
// 32-bit value, the smaller the stricter (a kill is below an errno, an errno
// below a notification, a notification below an allow).
inline int32_t strictness(uint32_t action) { return int32_t(action & SECCOMP_RET_ACTION_FULL); }

// The kernel's answer of programs stacked in install order (oldest first),
// as seccomp_run_filters() (kernel/seccomp.c) takes it: every filter runs,
// the most restrictive action wins (strictness), and among equal actions the newest
// filter's, data included. nullopt when `programs` is empty or one of them
// does something the kernel's checker would refuse.
struct StackOutcome {
  uint32_t action = 0;
  size_t filter = 0;           // the index in `programs` of the filter whose answer it is
  uint8_t arguments_read = 0;  // that filter's (Outcome::arguments_read)
};
std::optional<StackOutcome> run_stack(std::span<const plan::SeccompProgram> programs, const SeccompData& data);

// The kernel's seccomp_is_const_allow() (kernel/seccomp.c): true when the
// program allows syscall `nr` on `arch` without looking at anything but the
// number and the architecture, so the kernel caches the verdict and skips
// the filter for that syscall.
bool is_constant_allow(std::span<const plan::BpfInstruction> program, uint32_t arch, int32_t nr);

// Every action `program` may return for syscall `nr` on `arch`, whatever
// the arguments (both ways of every jump that depends on them); nullopt when
// it cannot tell (a return of the accumulator, an instruction the kernel's
// checker would refuse). The launcher checks with it which calls a rewrite
// of the program may change (supervisor/listener_answers.h).
std::optional<std::set<uint32_t>> possible_actions(std::span<const plan::BpfInstruction> program, uint32_t arch,
                                                   int32_t nr);

// The same walk's return instructions, by index: where a rewrite of the
// program may change what `nr` is answered (kernel/seccomp_notify.h).
std::optional<std::set<size_t>> reachable_returns(std::span<const plan::BpfInstruction> program, uint32_t arch,
                                                  int32_t nr);

std::string disassemble(std::span<const plan::BpfInstruction> program);

}  // namespace aasm::bpf
