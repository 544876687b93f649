// moby's default seccomp profile (profiles/seccomp/default.json) ported to
// a policy, testdata/seccomp/moby-default.yaml, compiled by the real aasmc
// and run under the real aasm-launch: the calls moby allows reach the
// kernel, the calls it refuses without capabilities answer EPERM (its
// defaultErrnoRet 1), and its argument filters (personality's five values,
// clone without namespace flags, socket but AF_VSOCK) decide as moby's do.
// Where aasm answers otherwise than moby, the test asserts aasm's answer and
// the comment says why (docs/ported-suites.md lists them). Controls: the
// same probe op under a plan without a syscall filter of its own (the
// kernel's answer, tests/kernel/refused_calls.h), or, for the calls every
// plan's safe defaults refuse, the probe run directly (harmless: SAFETY in
// tests/probe/probe.c).
#include <sys/syscall.h>

#include <csignal>
#include <cstdlib>
#include <set>

#include "fixtures.h"
#include "harness.h"
#include "refused_calls.h"

using namespace aasm::ktest;

namespace {

constexpr int kKilled = 128 + SIGSYS;

// The port, compiled from the source tree.
std::string moby_plan(const TempDir& dir) {
  const char* root = std::getenv("AASM_SOURCE_ROOT");
  REQUIRE_MESSAGE(root != nullptr, "AASM_SOURCE_ROOT is not set (run through meson test)");
  const std::string plan = dir / "moby.bin";
  const Run compiled = run({binary("AASMC"), "compile", std::string(root) + "/testdata/seccomp/moby-default.yaml", "-o", plan});
  INFO("aasmc stderr: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  return plan;
}

// A filesystem-only plan, no syscall node: the kernel answers, but for the
// safe defaults (unix sockets opted back in).
std::string kernel_answers(const TempDir& dir) {
  return compile_spec(dir, "no-filter", base_fs().yaml() + "  ipc:\n    unix_sockets: {allow: [\"/\"]}\n");
}

// The probe run directly, as root, under no filter at all.
Run unconfined_probe(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {binary("AASM_PROBE")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The `danger` calls moby allows without any capability: its unconditional
// list (personality's query value, clock_adjtime, name_to_handle_at) and its
// minKernel 4.8 block (ptrace, process_vm_readv, process_vm_writev). Every
// other call of refused_calls.h moby refuses: it lists them only under a
// capability (CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_BOOT, CAP_SYS_PTRACE for
// kcmp and pidfd_getfd, ...) or not at all (kexec_load, swapon, add_key,
// keyctl, request_key, pivot_root, userfaultfd).
const std::set<std::string> kMobyAllows = {"personality",       "clock_adjtime",    "name_to_handle_at", "ptrace",
                                           "process_vm_readv", "process_vm_writev", "ptrace_traceme"};

std::vector<RefusedCall> every_danger_call() {
  std::vector<RefusedCall> calls(std::begin(kDangerous), std::end(kDangerous));
  calls.insert(calls.end(), std::begin(kMobyRefused), std::end(kMobyRefused));
  return calls;
}

}  // namespace

TEST_CASE("ported moby: the calls moby refuses without capabilities answer EPERM, the ones it allows reach the kernel") {
  TempDir dir;
  const std::string moby = moby_plan(dir);
  for (const RefusedCall& call : every_danger_call()) {
    const bool allowed = kMobyAllows.count(call.op) > 0;
    INFO("danger ", call.op, allowed ? " (moby allows it)" : " (moby refuses it)");
    if (allowed) {
      CHECK_RUN(probe(moby, {"danger", call.op}), call.kernel_answer == std::string("OK\n") ? 0 : 1, call.kernel_answer);
    } else {
      CHECK_RUN(probe(moby, {"danger", call.op}), 1, "EPERM\n");
    }
  }
  CHECK_RUN(probe(moby, {"getppid"}), 0, "OK\n");

  SUBCASE("control: without the port's filter each call gets the kernel's own answer") {
    const std::string none = kernel_answers(dir);
    for (const RefusedCall& call : every_danger_call()) {
      INFO("danger ", call.op);
      CHECK_RUN(probe(none, {"danger", call.op}), call.kernel_answer == std::string("OK\n") ? 0 : 1, call.kernel_answer);
    }
  }
}

TEST_CASE("ported moby: personality is allowed for exactly moby's five values (PER_LINUX, PER_LINUX32, UNAME26, both, the query)") {
  TempDir dir;
  const std::string moby = moby_plan(dir);
  for (const char* persona : {"0", "0x8", "0x20000", "0x20008", "0xffffffff"}) {
    CAPTURE(persona);
    CHECK_RUN(probe(moby, {"personality", persona}), 0, "OK\n");
  }
  // ADDR_NO_RANDOMIZE and READ_IMPLIES_EXEC: moby's default EPERM.
  for (const char* persona : {"0x0040000", "0x0400000", "0x0440000"}) {
    CAPTURE(persona);
    CHECK_RUN(probe(moby, {"personality", persona}), 1, "EPERM\n");
  }
  // The kernel reads `persona` as an unsigned int: 1 << 32 is persona 0 to
  // it, and aasm compares the low 32 bits (moby's libseccomp compares all 64
  // and refuses this one: the same persona, aasm follows the kernel).
  CHECK_RUN(probe(moby, {"personality", "0x100000000"}), 0, "OK\n");

  SUBCASE("control: without the port's filter the kernel sets every persona") {
    const std::string none = kernel_answers(dir);
    for (const char* persona : {"0x0040000", "0x0400000", "0x0440000"}) {
      CAPTURE(persona);
      CHECK_RUN(probe(none, {"personality", persona}), 0, "OK\n");
    }
  }
}

TEST_CASE("ported moby: clone with a namespace flag is EPERM, a plain clone runs, clone3 is ENOSYS; unshare and setns are EPERM") {
  TempDir dir;
  const std::string moby = moby_plan(dir);
  CHECK_RUN(probe(moby, {"clone", "newuser"}), 1, "EPERM\n");
  CHECK_RUN(probe(moby, {"clone", "newuser-newnet"}), 1, "EPERM\n");
  CHECK_RUN(probe(moby, {"clone", "plain"}), 0, "OK\n");
  // moby: clone3 answers ENOSYS (errnoRet 38) so libc falls back to clone.
  CHECK_RUN(probe(moby, {"clone3", "plain"}), 1, "ENOSYS\n");
  CHECK_RUN(probe(moby, {"clone3", "newuser"}), 1, "ENOSYS\n");
  // moby allows these only with CAP_SYS_ADMIN.
  CHECK_RUN(probe(moby, {"unshare", "user"}), 1, "EPERM\n");
  CHECK_RUN(probe(moby, {"setns-bad"}), 1, "EPERM\n");

  SUBCASE("control: without any filter the kernel makes the namespaced children and answers setns itself") {
    CHECK_RUN(unconfined_probe({"clone", "newuser"}), 0, "OK\n");
    CHECK_RUN(unconfined_probe({"clone", "newuser-newnet"}), 0, "OK\n");
    CHECK_RUN(unconfined_probe({"clone3", "plain"}), 0, "OK\n");
    CHECK_RUN(unconfined_probe({"unshare", "user"}), 0, "OK\n");
    CHECK_RUN(unconfined_probe({"setns-bad"}), 1, "EBADF\n");
  }
}

TEST_CASE("ported moby: socket(AF_VSOCK) is EPERM, every other family reaches the kernel") {
  TempDir dir;
  const std::string moby = moby_plan(dir);
  CHECK_RUN(probe(moby, {"socket", "vsock"}), 1, "EPERM\n");
  for (const char* family : {"inet", "inet6", "unix", "netlink"}) {
    CAPTURE(family);
    CHECK_RUN(probe(moby, {"socket", family}), 0, "OK\n");
  }
  // AF_PACKET needs CAP_NET_RAW, which the launcher drops: the kernel's EPERM.
  CHECK_RUN(probe(moby, {"socket", "packet"}), 1, "EPERM\n");

  SUBCASE("control: without the port's filter the kernel answers AF_VSOCK itself") {
    const Run r = probe(kernel_answers(dir), {"socket", "vsock"});
    INFO("stderr: ", r.err);
    CHECK(r.signal == 0);
    // OK where the vsock module is loaded, EAFNOSUPPORT where it is not:
    // either way, not the filter's EPERM.
    CHECK((r.out == "OK\n" || r.out == "EAFNOSUPPORT\n"));
    MESSAGE("socket(AF_VSOCK) without a filter: ", r.out);
  }
}

// moby's JSON allows what aasm refuses here: each a documented stricter
// choice (docs/ported-suites.md).
TEST_CASE("ported moby: where aasm is stricter — io_uring refused, x32 calls killed, unnamed numbers ENOSYS") {
  TempDir dir;
  const std::string moby = moby_plan(dir);
  // moby's list names io_uring_setup/enter/register; the port does not
  // (their operations run outside any filter), so the default answers.
  CHECK_RUN(probe(moby, {"io_uring_setup"}), 1, "EPERM\n");
  // moby's archMap admits x32 (and i386) as sub-architectures of x86_64;
  // every aasm plan kills calls of another ABI.
  CHECK_RUN(probe(moby, {"x32-getpid"}), kKilled, "");
  // moby answers a number no table names with its default EPERM; aasm with
  // ENOSYS, which tells libc the call does not exist.
  CHECK_RUN(probe(moby, {"sys", "1000"}), 1, "ENOSYS\n");

  SUBCASE("control: without any filter the kernel answers each itself") {
    CHECK_RUN(unconfined_probe({"io_uring_setup"}), 1, "EFAULT\n");  // NULL params
    const Run x32 = unconfined_probe({"x32-getpid"});
    CHECK(x32.signal == 0);
    CHECK((x32.out == "ENOSYS\n" || x32.out == "OK\n"));
    CHECK_RUN(unconfined_probe({"sys", "1000"}), 1, "ENOSYS\n");
  }
}
