// The `when:` semantics: operand and constant resolution, normalization to
// libseccomp's form (negation, DNF, one comparison per argument, 32-bit
// arguments), errors with their offsets, and a property test comparing the
// normal form with a direct evaluation of the parsed expression.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "frontend/condition.h"
#include "middle/condition_normalize.h"
#include "tables/constants.h"
#include "tables/syscall_signatures.h"
#include "tables/targets.h"

namespace aasmc {
namespace {

const Target& target(const char* name) {
  static const Target x86 = *find_target("x86_64");
  static const Target arm = *find_target("aarch64");
  return std::string_view(name) == "aarch64" ? arm : x86;
}

std::string normal(const char* syscall, const char* text, const char* arch = "x86_64") {
  ConditionError error;
  auto out = compile_condition(text, syscall, target(arch), error);
  if (!out) return "error@" + std::to_string(error.offset) + ": " + error.message;
  return print_condition(*out, syscall, target(arch));
}

struct Valid {
  const char* syscall;
  const char* arch;
  const char* text;
  const char* expected;
};

const Valid kValid[] = {
    // The spec's examples; ioctl's request is an unsigned int: the upper 32 bits are ignored.
    {"ioctl", "x86_64", "request == TIOCSTI || request == TIOCLINUX",
     "(request & 0xffffffff) == 0x5412 || (request & 0xffffffff) == 0x541c"},
    {"ioctl", "x86_64", "cmd == TIOCSTI", "(request & 0xffffffff) == 0x5412"},
    {"ioctl", "x86_64", "arg1 != TIOCSTI", "(request & 0xffffffff) != 0x5412"},
    {"ioctl", "x86_64", "request == TIOCGPTN", "(request & 0xffffffff) == 0x80045430"},
    {"socket", "x86_64", "domain in {AF_UNIX, AF_INET, AF_INET6}",
     "(domain & 0xffffffff) == 0x1 || (domain & 0xffffffff) == 0x2 || (domain & 0xffffffff) == 0xa"},
    {"socket", "x86_64", "domain == AF_INET && (type & SOCK_RAW) == SOCK_RAW",
     "(domain & 0xffffffff) == 0x2 && (type & 0x3) == 0x3"},
    {"socket", "x86_64", "domain in {AF_INET, AF_INET, AF_INET}", "(domain & 0xffffffff) == 0x2"},
    // Masked tests: one bit, several bits (any of them), negated.
    {"clone", "x86_64", "flags & CLONE_NEWUSER", "(flags & 0x10000000) == 0x10000000"},
    {"clone", "x86_64", "!(flags & CLONE_NEWUSER)", "(flags & 0x10000000) == 0x0"},
    {"clone", "x86_64", "flags & (CLONE_NEWUSER | CLONE_NEWNS)",
     "(flags & 0x20000) == 0x20000 || (flags & 0x10000000) == 0x10000000"},
    {"clone", "x86_64", "!(flags & (CLONE_NEWUSER | CLONE_NEWNS))", "(flags & 0x10020000) == 0x0"},
    {"clone", "x86_64", "(flags & CLONE_THREAD) == 0", "(flags & 0x10000) == 0x0"},
    {"clone", "x86_64", "(flags & CLONE_THREAD) != 0", "(flags & 0x10000) == 0x10000"},
    {"clone", "x86_64", "!((flags & (CLONE_VM | CLONE_THREAD)) == CLONE_VM)", "(flags & 0x10100) != 0x100"},
    {"clone", "x86_64", "flags & CLONE_THREAD && !(flags & CLONE_VM)", "(flags & 0x10100) == 0x10000"},
    {"unshare", "x86_64", "flags & CLONE_NEWUSER", "(flags & 0x10000000) == 0x10000000"},
    // C's precedence and parentheses: `(x & M) == V`, a parenthesized `|` of values,
    // `|` lists inside `{}`, && tighter than ||.
    {"clone", "x86_64", "(arg0 & 0x10000000) == 0x10000000", "(flags & 0x10000000) == 0x10000000"},
    {"clone", "x86_64", "((flags & CLONE_NEWUSER) != 0)", "(flags & 0x10000000) == 0x10000000"},
    {"openat", "x86_64", "flags == (O_WRONLY | O_CREAT)", "(flags & 0xffffffff) == 0x41"},
    {"openat", "x86_64", "flags in {O_WRONLY | O_CREAT, (O_RDWR)}", "(flags & 0xffffffff) == 0x2 || (flags & 0xffffffff) == 0x41"},
    {"read", "x86_64", "arg0 == 1 || arg1 == 2 && arg2 == 3", "arg0 == 0x1 || (arg1 == 0x2 && arg2 == 0x3)"},
    {"read", "x86_64", "(arg0 == 1 || arg1 == 2) && arg2 == 3", "(arg0 == 0x1 && arg2 == 0x3) || (arg1 == 0x2 && arg2 == 0x3)"},

    {"unshare", "x86_64", "flags == CLONE_NEWUSER", "flags == 0x10000000"},
    // clone's argument order differs: arg3 is child_tid on x86_64, tls on aarch64.
    {"clone", "x86_64", "child_tid == 0", "child_tid == 0x0"},
    {"clone", "aarch64", "child_tid == 0", "child_tid == 0x0"},
    {"clone", "aarch64", "arg3 == 0", "tls == 0x0"},
    // Constants that differ between the targets.
    {"openat", "x86_64", "flags & O_DIRECTORY", "(flags & 0x10000) == 0x10000"},
    {"openat", "aarch64", "flags & O_DIRECTORY", "(flags & 0x4000) == 0x4000"},
    {"openat", "x86_64", "flags & (O_NOFOLLOW | O_DIRECT)",
     "(flags & 0x4000) == 0x4000 || (flags & 0x20000) == 0x20000"},
    {"openat", "aarch64", "flags & (O_NOFOLLOW | O_DIRECT)",
     "(flags & 0x8000) == 0x8000 || (flags & 0x10000) == 0x10000"},
    {"openat", "x86_64", "(flags & O_ACCMODE) == O_WRONLY", "(flags & 0x3) == 0x1"},
    {"openat", "x86_64", "dirfd == AT_FDCWD", "(dirfd & 0xffffffff) == 0xffffff9c"},
    {"openat", "x86_64", "mode & S_ISUID", "(mode & 0x800) == 0x800"},
    {"openat", "x86_64", "mode == 0644", "(mode & 0xffff) == 0x1a4"},
    {"mmap", "x86_64", "(prot & (PROT_WRITE | PROT_EXEC)) == (PROT_WRITE | PROT_EXEC)", "(prot & 0x6) == 0x6"},
    {"mmap", "x86_64", "flags & MAP_32BIT", "(flags & 0x40) == 0x40"},
    {"mprotect", "aarch64", "prot & PROT_BTI", "(prot & 0x10) == 0x10"},
    {"prctl", "x86_64", "option == PR_SET_PTRACER && arg1 == PR_SET_PTRACER_ANY",
     "(option & 0xffffffff) == 0x59616d61 && arg1 == 0xffffffffffffffff"},
    // De Morgan.
    {"read", "x86_64", "!(arg0 == 1 || arg1 == 2)", "arg0 != 0x1 && arg1 != 0x2"},
    {"read", "x86_64", "!(arg0 == 1 && arg1 == 2)", "arg0 != 0x1 || arg1 != 0x2"},
    {"read", "x86_64", "!(arg0 < 5)", "arg0 >= 0x5"},
    {"read", "x86_64", "!(arg0 <= 5) && !(arg1 > 7) && !!(arg2 >= 1)", "arg0 > 0x5 && arg1 <= 0x7 && arg2 >= 0x1"},
    {"read", "x86_64", "!(arg0 in {1, 2}) && arg0 == 3", "arg0 == 0x3"},
    {"read", "x86_64", "arg0 == 1 || arg0 == 1 && !(arg0 in {1, 2})", "arg0 == 0x1"},
    {"read", "x86_64", "!!(arg0 & 8)", "(arg0 & 0x8) == 0x8"},
    // Distribution into DNF, canonical order.
    {"read", "x86_64", "(arg1 == 4 || arg1 == 3) && (arg0 == 2 || arg0 == 1)",
     "(arg0 == 0x1 && arg1 == 0x3) || (arg0 == 0x1 && arg1 == 0x4) || (arg0 == 0x2 && arg1 == 0x3) || "
     "(arg0 == 0x2 && arg1 == 0x4)"},
    {"read", "x86_64", "arg0 in {1, 2} && !(arg1 in {3})", "(arg0 == 0x1 && arg1 != 0x3) || (arg0 == 0x2 && arg1 != 0x3)"},
    // Merging inside a conjunct; unsatisfiable and implied conjuncts dropped.
    {"read", "x86_64", "arg0 == 5 && arg0 != 6", "arg0 == 0x5"},
    {"read", "x86_64", "arg0 == 5 && arg0 == 6", "false"},
    {"read", "x86_64", "arg0 == 5 && arg0 == 6 || arg1 == 1", "arg1 == 0x1"},
    {"read", "x86_64", "arg0 >= 5 && arg0 >= 7", "arg0 >= 0x7"},
    {"read", "x86_64", "arg0 < 5 && arg0 <= 2", "arg0 <= 0x2"},
    {"read", "x86_64", "arg0 > 5 && arg0 != 6", "arg0 >= 0x7"},
    {"read", "x86_64", "arg0 >= 9 && arg0 < 10", "arg0 == 0x9"},
    {"read", "x86_64", "arg0 > 9 && arg0 < 10", "false"},
    {"read", "x86_64", "arg0 < 10 && arg0 != 12", "arg0 < 0xa"},
    {"read", "x86_64", "arg0 & 1 && (arg0 & 4) == 0", "(arg0 & 0x5) == 0x1"},
    {"read", "x86_64", "arg0 & 1 && (arg0 & 3) == 2", "false"},
    {"read", "x86_64", "(arg0 & 3) == 1 && arg0 != 2", "(arg0 & 0x3) == 0x1"},
    {"read", "x86_64", "(arg0 & 3) == 1 && (arg0 & 1) != 0", "(arg0 & 0x3) == 0x1"},
    {"read", "x86_64", "arg0 == 1 || arg0 == 1 && arg1 == 2", "arg0 == 0x1"},
    {"read", "x86_64", "arg0 == 1 || arg1 == 2 || arg0 == 1", "arg0 == 0x1 || arg1 == 0x2"},
    {"read", "x86_64", "arg0 >= 0", "true"},
    {"read", "x86_64", "arg0 < 0", "false"},
    {"read", "x86_64", "arg0 >= 0 || arg1 == 1", "true"},
    {"read", "x86_64", "arg0 < 0 || arg1 == 1", "arg1 == 0x1"},
    // Ordering on a 32-bit argument: masked equalities over aligned blocks,
    // unsigned for unsigned int, signed for int.
    {"ioctl", "x86_64", "fd < 3", "(fd & 0xfffffffe) == 0x0 || (fd & 0xffffffff) == 0x2"},
    {"ioctl", "x86_64", "fd >= 4294967294", "(fd & 0xfffffffe) == 0xfffffffe"},
    {"ioctl", "x86_64", "fd <= 4294967295", "true"},
    {"ioctl", "x86_64", "fd < 0", "false"},
    {"kill", "x86_64", "sig < 2", "(sig & 0x80000000) == 0x80000000 || (sig & 0xfffffffe) == 0x0"},
    {"kill", "x86_64", "sig >= 0", "(sig & 0x80000000) == 0x0"},
    {"kill", "x86_64", "sig > 0 && sig < 4", "(sig & 0xfffffffe) == 0x2 || (sig & 0xffffffff) == 0x1"},
    {"kill", "x86_64", "sig == SIGKILL && pid == 1", "(pid & 0xffffffff) == 0x1 && (sig & 0xffffffff) == 0x9"},
    {"setns", "x86_64", "nstype == CLONE_NEWNET", "(nstype & 0xffffffff) == 0x40000000"},
};

TEST_CASE("conditions: normal forms") {
  for (const Valid& v : kValid) {
    const std::string where = std::string(v.syscall) + " " + v.arch + ": " + v.text;
    CAPTURE(where);
    CHECK(normal(v.syscall, v.text, v.arch) == v.expected);
  }
}

struct Broken {
  const char* syscall;
  const char* arch;
  const char* text;
  const char* message;  // a substring
  size_t offset;
};

const Broken kBroken[] = {
    {"ioctl", "x86_64", "reqest == TIOCSTI", "unknown operand 'reqest' for ioctl; did you mean 'request'?", 0},
    {"ioctl", "x86_64", "request == TIOCSTl", "unknown constant 'TIOCSTl'; did you mean 'TIOCSTI'?", 11},
    {"ioctl", "x86_64", "request == (TIOCSTI | TIOCLINUXX)", "did you mean 'TIOCLINUX'?", 22},
    {"ioctl", "x86_64", "fd == 0 && arg5 == 1", "ioctl takes 3 arguments", 11},
    {"read", "x86_64", "count == 1", "aasmc knows no argument names for read; use arg0..arg5", 0},
    {"clone3", "x86_64", "flags & CLONE_NEWUSER", "clone3 passes its flags inside struct clone_args", 0},
    {"prctl", "x86_64", "option == PR_SET_SECCOMP && arg6 == 2", "unknown operand 'arg6'", 28},
    // Out of range.
    {"ioctl", "x86_64", "request == 0x10000000000000000", "integer '0x10000000000000000' does not fit in 64 bits", 11},
    {"ioctl", "x86_64", "request == 18446744073709551616", "does not fit in 64 bits", 11},
    {"ioctl", "x86_64", "request == 0x100005412", "does not fit in request, which the kernel reads as a 32-bit unsigned", 11},
    {"ioctl", "x86_64", "fd == AT_FDCWD", "-100 does not fit in fd", 6},
    {"openat", "x86_64", "mode == 0x10000", "16-bit unsigned", 8},
    {"clone", "x86_64", "flags & CLONE_INTO_CGROUP", "has bits above the low 32 bits of flags", 8},
    {"kill", "x86_64", "sig < 0x80000000", "outside the range of sig, a 32-bit signed integer", 6},
    {"read", "x86_64", "arg0 < AT_FDCWD", "unsigned", 7},
    // Per target.
    {"mmap", "aarch64", "flags & MAP_32BIT", "constant 'MAP_32BIT' is not defined on aarch64", 8},
    {"mprotect", "x86_64", "prot & PROT_MTE", "not defined on x86_64", 7},
    // Masks.
    {"read", "x86_64", "(arg0 & 3) == 4", "value 0x4 has bits outside the mask 0x3", 14},
    {"read", "x86_64", "arg0 & 0", "the mask is 0", 7},
    // One comparison per argument per rule.
    {"read", "x86_64", "arg0 != 1 && arg0 != 2", "libseccomp compares each argument at most once per rule", 13},
    {"socket", "x86_64", "!(domain in {AF_UNIX, AF_INET})", "needs two comparisons of domain", 2},
    {"read", "x86_64", "arg1 == 1 && (arg0 > 2 && arg0 < 10)", "`arg0 > 0x2 && arg0 < 0xa`", 26},
    {"read", "x86_64", "arg0 & 1 && (arg0 & 2) != 2 && arg0 != 9", "at most once per rule", 31},
    // The normal form's size.
    {"read", "x86_64",
     "arg0 in {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16} && arg1 in {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16}",
     "more than 256 alternatives", 0},
    {"read", "x86_64",
     "arg2 == 1 && (arg0 in {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16} && arg1 in {0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16})",
     "more than 256 alternatives", 14},
    // What C reads differently from what it seems to say: refused at the
    // operator, with the parenthesized fix-it (clang's -Wparentheses).
    {"clone", "x86_64", "arg0 & 0x10000000 == 0x10000000", "write `(arg0 & 0x10000000) == 0x10000000`", 5},
    {"clone", "x86_64", "flags & CLONE_NEWUSER | CLONE_NEWNS", "write `flags & (CLONE_NEWUSER | CLONE_NEWNS)`", 22},
    {"openat", "x86_64", "flags == O_WRONLY | O_CREAT", "write `flags == (O_WRONLY | O_CREAT)`", 18},
    {"openat", "x86_64", "(flags & O_ACCMODE) == O_WRONLY | O_CREAT", "write `(flags & O_ACCMODE) == (O_WRONLY | O_CREAT)`", 32},
    {"clone", "x86_64", "flags & 1 | 2 == 3", "write `(flags & (1 | 2)) == 3`", 6},
    {"clone", "x86_64", "!flags & CLONE_THREAD", "C reads `!flags & CLONE_THREAD` as `(!flags) & CLONE_THREAD`", 0},
    {"clone", "x86_64", "arg1 == 0 && !flags == 0", "write `!(flags == 0)`", 13},
    {"clone", "x86_64", "!(flags & 3) == 0", "write `!((flags & 3) == 0)`", 0},
    {"clone", "x86_64", "!flags in {1, 2}", "write `!(flags in {1, 2})`", 0},
    {"openat", "x86_64", "(flags & 3) < 2", "compared with `==` or `!=` only", 12},
    {"openat", "x86_64", "flags & 3 >= 2", "compared with `==` or `!=` only", 10},
    // Syntax errors come from parse_condition, with their column.
    {"ioctl", "x86_64", "request ==", "the condition ends too early", 10},
    {"ioctl", "x86_64", "request == TIOCSTI ||| fd == 1", "", 21},
    {"ioctl", "x86_64", "request = TIOCSTI", "", 8},
    {"ioctl", "x86_64", "(request == 1", "", 13},
    {"ioctl", "x86_64", "request == $", "", 11},
};

TEST_CASE("conditions: errors and their offsets") {
  for (const Broken& b : kBroken) {
    const std::string where = std::string(b.syscall) + " " + b.arch + ": " + b.text;
    CAPTURE(where);
    ConditionError error;
    auto out = compile_condition(b.text, b.syscall, target(b.arch), error);
    CHECK_FALSE(out.has_value());
    if (out) continue;
    CAPTURE(error.message);
    CHECK(error.message.find(b.message) != std::string::npos);
    CHECK(error.offset == b.offset);
  }
}

// Resolution is a pass of its own: names become registers, kernel types and
// numbers; every error about a value is its, and the algebra after it refuses
// only a normal form (too large, or an argument compared twice).
TEST_CASE("conditions: resolution, then the normal-form algebra") {
  ConditionError error;
  auto parsed = parse_condition("!(dirfd == AT_FDCWD) && flags & O_CREAT", error);
  REQUIRE(parsed);
  auto resolved = resolve_condition(*parsed, "openat", target("x86_64"), error);
  REQUIRE(resolved);
  REQUIRE(resolved->kind == ConditionExpr::Kind::kAnd);
  const ResolvedCondition& negated = resolved->children.at(0);
  REQUIRE(negated.kind == ConditionExpr::Kind::kNot);
  const ResolvedTest& dirfd = negated.children.at(0).test;
  CHECK(dirfd.arg.index == 0);
  CHECK(dirfd.arg.bits == 32);
  CHECK(dirfd.arg.is_signed);
  CHECK(dirfd.values == std::vector<uint64_t>{0xffffff9c});  // the int -100, in the low 32 bits
  CHECK(resolved->children.at(1).test.mask == 0100);
  // A signed ordering, in its order-preserving encoding: the sign bit flipped.
  parsed = parse_condition("sig < 2", error);
  REQUIRE(parsed);
  resolved = resolve_condition(*parsed, "kill", target("x86_64"), error);
  REQUIRE(resolved);
  CHECK(resolved->test.values == std::vector<uint64_t>{0x80000002});

  size_t by_algebra = 0;
  for (const Broken& b : kBroken) {
    CAPTURE(b.text);
    auto expr = parse_condition(b.text, error);
    if (!expr) continue;
    ConditionError resolve_error;
    auto r = resolve_condition(*expr, b.syscall, target(b.arch), resolve_error);
    if (!r) {
      CHECK(resolve_error.message.find(b.message) != std::string::npos);
      CHECK(resolve_error.offset == b.offset);
      continue;
    }
    ConditionError algebra_error;
    CHECK_FALSE(normalize_condition(*r, b.syscall, target(b.arch), algebra_error));
    CHECK(algebra_error.message.find(b.message) != std::string::npos);
    CHECK(algebra_error.offset == b.offset);
    const bool normal_form = algebra_error.message.find("alternatives") != std::string::npos ||
                             algebra_error.message.find("at most once") != std::string::npos;
    CHECK_MESSAGE(normal_form, algebra_error.message);
    ++by_algebra;
  }
  CHECK(by_algebra > 0);
}

TEST_CASE("conditions: printing without a target") {
  ConditionError error;
  auto x86 = compile_condition("child_tid == 0 && flags & CLONE_NEWNS", "clone", target("x86_64"), error);
  REQUIRE(x86);
  // clone's arg3 has different names on the two targets.
  CHECK(print_condition(*x86, "clone") == "(flags & 0x20000) == 0x20000 && arg3 == 0x0");
  auto ioctl = compile_condition("request == TIOCSTI", "ioctl", target("aarch64"), error);
  REQUIRE(ioctl);
  CHECK(print_condition(*ioctl, "ioctl") == "(request & 0xffffffff) == 0x5412");
  CHECK(ioctl->disjuncts.size() == 1);
  CHECK(ioctl->disjuncts[0].comparisons[0] == ArgComparison{1, ArgComparison::Op::kMaskedEq, 0xffffffff, 0x5412});
}

TEST_CASE("conditions: 32-bit semantics survive upper bits set by the caller") {
  ConditionError error;
  auto cond = compile_condition("request == TIOCSTI", "ioctl", target("x86_64"), error);
  REQUIRE(cond);
  CHECK(evaluate_condition(*cond, {3, 0x5412, 0, 0, 0, 0}));
  CHECK(evaluate_condition(*cond, {3, 0xdeadbeef00005412, 0, 0, 0, 0}));
  CHECK_FALSE(evaluate_condition(*cond, {3, 0x5413, 0, 0, 0, 0}));
}

TEST_CASE("conditions: every table entry resolves") {
  for (const SyscallSignature& sig : all_signatures()) {
    const std::string syscall = sig.syscall;
    CAPTURE(syscall);
    CHECK(sig.count <= kMaxSyscallArgs);
    for (unsigned i = 0; i < sig.count; ++i) {
      // argN always means the N-th argument; no name may shadow it.
      const std::string name = sig.args[i].name ? sig.args[i].name : "";
      CHECK_FALSE((name.size() == 4 && name.rfind("arg", 0) == 0 && std::isdigit(static_cast<unsigned char>(name[3]))));
    }
    bool on_some_target = false;
    for (const Target& t : all_targets()) on_some_target |= syscall_number(t, sig.syscall).has_value();
    CHECK(on_some_target);
  }
  std::vector<std::string> names;
  for (const NamedConstant& c : all_constants()) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
}

#if defined(__x86_64__)
// The x86_64 column against the host's headers (glibc's, which take these
// from the kernel UAPI; O_LARGEFILE is left out: glibc defines it as 0 on
// 64-bit targets).
TEST_CASE("conditions: x86_64 constants match the host headers") {
  auto value = [](const char* name) {
    const NamedConstant* c = find_constant(name);
    REQUIRE_MESSAGE(c, name);
    return *constant_value(*c, target("x86_64"));
  };
#define SAME(name) CHECK_MESSAGE(value(#name) == uint64_t(name), #name)
  SAME(TIOCSTI); SAME(TIOCLINUX); SAME(TIOCSETD); SAME(TIOCCONS); SAME(FIONREAD); SAME(TCGETS); SAME(TCSETS);
  SAME(TIOCGPTN); SAME(TIOCSPTLCK); SAME(FIOCLEX); SAME(FIONBIO); SAME(TIOCSCTTY); SAME(TIOCGWINSZ);
  SAME(AF_UNIX); SAME(AF_INET); SAME(AF_INET6); SAME(AF_NETLINK); SAME(AF_PACKET); SAME(AF_VSOCK); SAME(AF_ALG);
  SAME(SOCK_STREAM); SAME(SOCK_DGRAM); SAME(SOCK_RAW); SAME(SOCK_SEQPACKET); SAME(SOCK_NONBLOCK); SAME(SOCK_CLOEXEC);
  SAME(SOL_SOCKET); SAME(SO_REUSEADDR); SAME(SO_BINDTODEVICE); SAME(SO_ATTACH_BPF); SAME(SO_PEERCRED);
  SAME(CLONE_NEWNS); SAME(CLONE_NEWUSER); SAME(CLONE_NEWPID); SAME(CLONE_NEWNET); SAME(CLONE_NEWIPC);
  SAME(CLONE_NEWUTS); SAME(CLONE_NEWCGROUP); SAME(CLONE_THREAD); SAME(CLONE_VM); SAME(CLONE_FS); SAME(CLONE_FILES);
  SAME(CLONE_SIGHAND); SAME(CLONE_PARENT); SAME(CLONE_VFORK); SAME(CLONE_SYSVSEM); SAME(CLONE_SETTLS);
  SAME(CLONE_PARENT_SETTID); SAME(CLONE_CHILD_CLEARTID); SAME(CLONE_CHILD_SETTID); SAME(CLONE_UNTRACED);
  SAME(CLONE_IO); SAME(CLONE_PIDFD);
  SAME(O_RDONLY); SAME(O_WRONLY); SAME(O_RDWR); SAME(O_CREAT); SAME(O_EXCL); SAME(O_NOCTTY); SAME(O_TRUNC);
  SAME(O_APPEND); SAME(O_NONBLOCK); SAME(O_DSYNC); SAME(O_SYNC); SAME(O_DIRECTORY); SAME(O_NOFOLLOW);
  SAME(O_CLOEXEC); SAME(O_PATH); SAME(O_TMPFILE); SAME(O_DIRECT); SAME(O_NOATIME); SAME(AT_FDCWD);
  SAME(AT_SYMLINK_NOFOLLOW); SAME(AT_EMPTY_PATH);
  SAME(PROT_NONE); SAME(PROT_READ); SAME(PROT_WRITE); SAME(PROT_EXEC); SAME(PROT_GROWSDOWN);
  SAME(MAP_SHARED); SAME(MAP_PRIVATE); SAME(MAP_FIXED); SAME(MAP_ANONYMOUS); SAME(MAP_32BIT); SAME(MAP_STACK);
  SAME(MAP_NORESERVE); SAME(MAP_POPULATE); SAME(MAP_HUGETLB); SAME(MAP_FIXED_NOREPLACE); SAME(MAP_SHARED_VALIDATE);
  SAME(MADV_DONTNEED); SAME(MADV_FREE); SAME(MADV_DONTFORK); SAME(MADV_WIPEONFORK);
  SAME(PR_SET_NO_NEW_PRIVS); SAME(PR_SET_SECCOMP); SAME(PR_SET_DUMPABLE); SAME(PR_SET_PTRACER);
  SAME(PR_CAP_AMBIENT); SAME(PR_CAP_AMBIENT_RAISE); SAME(PR_SET_NAME); SAME(PR_CAPBSET_DROP); SAME(PR_SET_MM);
  SAME(F_DUPFD); SAME(F_GETFL); SAME(F_SETFL); SAME(F_SETLK); SAME(F_SETOWN); SAME(F_DUPFD_CLOEXEC);
  SAME(F_SETPIPE_SZ); SAME(F_ADD_SEALS); SAME(F_SEAL_WRITE); SAME(F_OFD_SETLK); SAME(F_SETSIG);
  SAME(SIGKILL); SAME(SIGTERM); SAME(SIGSTOP); SAME(SIGCHLD); SAME(SIGUSR1); SAME(SIGSYS); SAME(SIGBUS);
#undef SAME
}
#endif

// ---------------------------------------------------------------------------
// Property test: random expressions over two arguments, evaluated directly
// (with the kernel's view of each argument) and through the normal form.

struct ArgView {
  unsigned index;
  unsigned bits;
  bool is_signed;
};

uint64_t width_mask(const ArgView& a) { return a.bits == 64 ? ~uint64_t(0) : (uint64_t(1) << a.bits) - 1; }

// What the kernel sees: the low `bits`, as its type.
int64_t as_signed(const ArgView& a, uint64_t x) {
  x &= width_mask(a);
  if (a.bits < 64 && (x >> (a.bits - 1)) & 1) x |= ~width_mask(a);
  return int64_t(x);
}

uint64_t number(const ConditionValue& v) {
  uint64_t out = 0;
  for (const ConditionTerm& t : v.terms) out |= std::get<uint64_t>(t.value);
  return out;
}

bool reference(const ConditionExpr& e, const std::vector<ArgView>& args, const uint64_t (&regs)[6]) {
  switch (e.kind) {
    case ConditionExpr::Kind::kNot: return !reference(e.children[0], args, regs);
    case ConditionExpr::Kind::kAnd: return reference(e.children[0], args, regs) && reference(e.children[1], args, regs);
    case ConditionExpr::Kind::kOr: return reference(e.children[0], args, regs) || reference(e.children[1], args, regs);
    case ConditionExpr::Kind::kTest: break;
  }
  const ConditionTest& t = e.test;
  const ArgView* arg = nullptr;
  for (const ArgView& a : args)
    if (t.operand == "arg" + std::to_string(a.index)) arg = &a;
  REQUIRE(arg);
  const uint64_t x = regs[arg->index] & width_mask(*arg);
  using T = ConditionTest::Op;
  auto less = [&](uint64_t v) { return arg->is_signed ? as_signed(*arg, x) < int64_t(v) : x < v; };
  switch (t.op) {
    case T::kEq: return x == number(t.values[0]);
    case T::kNe: return x != number(t.values[0]);
    case T::kLt: return less(number(t.values[0]));
    case T::kLe: return less(number(t.values[0]) + 1);
    case T::kGt: return !less(number(t.values[0]) + 1);
    case T::kGe: return !less(number(t.values[0]));
    case T::kMaskAny: return (x & number(t.mask)) != 0;
    case T::kMaskEq: return (x & number(t.mask)) == number(t.values[0]);
    case T::kMaskNe: return (x & number(t.mask)) != number(t.values[0]);
    case T::kIn:
      for (const ConditionValue& v : t.values)
        if (x == number(v)) return true;
      return false;
  }
  return false;
}

class Generator {
 public:
  Generator(std::mt19937_64& rng, std::vector<ArgView> args) : rng_(rng), args_(std::move(args)) {}

  std::string expr(int depth) {
    const unsigned pick = unsigned(rng_() % 10);
    if (depth <= 0 || pick < 4) return atom();
    if (pick < 6) return "(" + expr(depth - 1) + " && " + expr(depth - 1) + ")";
    if (pick < 9) return "(" + expr(depth - 1) + " || " + expr(depth - 1) + ")";
    return "!(" + expr(depth - 1) + ")";
  }

 private:
  std::string small() { return std::to_string(rng_() % 8); }
  std::string atom() {
    const ArgView& a = args_[rng_() % args_.size()];
    const std::string name = "arg" + std::to_string(a.index);
    static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    switch (rng_() % 5) {
      case 0:
      case 1: return name + " " + kOps[rng_() % 6] + " " + small();
      case 2: return name + " & " + std::to_string(1 + rng_() % 7);
      case 3: {
        const uint64_t mask = 1 + rng_() % 7;
        return "(" + name + " & " + std::to_string(mask) + ")" + (rng_() % 2 ? " == " : " != ") + std::to_string(mask & rng_());
      }
      default: {
        std::string out = name + " in {" + small();
        for (unsigned n = unsigned(rng_() % 3); n; --n) out += ", " + small();
        return out + "}";
      }
    }
  }
  std::mt19937_64& rng_;
  std::vector<ArgView> args_;
};

uint64_t register_value(std::mt19937_64& rng) {
  static const uint64_t kInteresting[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
                                          0x7fffffff, 0x80000000, 0x80000003, 0xfffffffe, 0xffffffff,
                                          0x100000000, 0x100000003, 0xffffffff00000002, 0x8000000000000005,
                                          ~uint64_t(0), ~uint64_t(0) - 1};
  const unsigned pick = unsigned(rng() % 4);
  if (pick == 0) return rng();
  if (pick == 1) return (rng() << 32) | (rng() % 8);  // upper bits set, small low bits
  return kInteresting[rng() % std::size(kInteresting)];
}

void property(const char* syscall, std::vector<ArgView> args, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Generator gen(rng, args);
  unsigned normalized = 0, refused = 0;
  for (int round = 0; round < 1500; ++round) {
    const std::string text = gen.expr(3);
    CAPTURE(text);
    ConditionError error;
    auto parsed = parse_condition(text, error);
    REQUIRE_MESSAGE(parsed, error.message);
    auto cond = normalize_condition(*parsed, syscall, target("x86_64"), error);
    if (!cond) {
      // The only acceptable refusals are libseccomp's limits.
      CAPTURE(error.message);
      CHECK((error.message.find("at most once per rule") != std::string::npos ||
             error.message.find("more than 256") != std::string::npos));
      ++refused;
      continue;
    }
    ++normalized;
    for (const Conjunct& conj : cond->disjuncts)
      for (size_t i = 1; i < conj.comparisons.size(); ++i) CHECK(conj.comparisons[i - 1].arg < conj.comparisons[i].arg);
    const std::string printed = print_condition(*cond, syscall);
    CAPTURE(printed);
    // The printed form reads back (a normal form of up to 256 conjuncts can
    // print longer than a condition may be written).
    if (!cond->always_true() && !cond->never_true() && printed.size() <= kMaxConditionBytes) {
      auto back = compile_condition(printed, syscall, target("x86_64"), error);
      REQUIRE_MESSAGE(back, error.message);
      CHECK(*back == *cond);
    }
    for (int sample = 0; sample < 60; ++sample) {
      uint64_t regs[6] = {0, 0, 0, 0, 0, 0};
      for (const ArgView& a : args) regs[a.index] = register_value(rng);
      CAPTURE(regs[args[0].index]);
      CAPTURE(regs[args[1].index]);
      REQUIRE(evaluate_condition(*cond, regs) == reference(*parsed, args, regs));
    }
  }
  MESSAGE(std::string(syscall), ": ", normalized, " normalized, ", refused, " refused");
  CHECK(normalized > 500);
}

TEST_CASE("conditions: property: normal form agrees with the expression (64-bit arguments)") {
  property("read", {{0, 64, false}, {1, 64, false}}, 1);
}

TEST_CASE("conditions: property: unsigned int and unsigned long arguments") {
  property("ioctl", {{1, 32, false}, {2, 64, false}}, 2);
}

TEST_CASE("conditions: property: int arguments (signed ordering)") {
  property("kill", {{0, 32, true}, {1, 32, true}}, 3);
}

TEST_CASE("conditions: property: 16-bit umode_t and int") {
  property("fchmodat", {{0, 32, true}, {2, 16, false}}, 4);
}

}  // namespace
}  // namespace aasmc
