// Landlock and seccomp, enforced by the real kernel on the real probe. Each
// denial has a control: the same probe under a policy that permits exactly
// that operation succeeds, so a probe or a policy that cannot fail is caught.
#include <csignal>

#include "harness.h"
#include "sandbox.h"

using namespace aasm::ktest;

TEST_CASE("filesystem.read: inside the allow-list reads, outside is EACCES") {
  Sandbox s;
  const std::string plan = compile(s.dir, s.base());
  CHECK_RUN(probe(plan, {"read", s.in + "/file"}), 0, "OK\n");
  CHECK_RUN(probe(plan, {"read", s.secret + "/file"}), 1, "EACCES\n");

  SUBCASE("control: the file is readable without the sandbox") {
    CHECK_RUN(run({binary("AASM_PROBE"), "read", s.secret + "/file"}), 0, "OK\n");
  }
  SUBCASE("control: allowing the directory makes the same read succeed") {
    Policy permissive = s.base();
    permissive.read.push_back(s.secret);
    CHECK_RUN(probe(compile(s.dir, permissive, "permissive"), {"read", s.secret + "/file"}), 0, "OK\n");
  }
}

TEST_CASE("filesystem.write: outside the allow-list is EACCES and creates nothing") {
  Sandbox s;
  const std::string plan = compile(s.dir, s.base());
  CHECK_RUN(probe(plan, {"write", s.out + "/new"}), 0, "OK\n");
  CHECK(read_file(s.out + "/new") == "x");
  CHECK_RUN(probe(plan, {"write", s.secret + "/new"}), 1, "EACCES\n");
  CHECK_FALSE(exists(s.secret + "/new"));

  SUBCASE("control: allowing the directory makes the same write succeed") {
    Policy permissive = s.base();
    permissive.write.push_back(s.secret);
    CHECK_RUN(probe(compile(s.dir, permissive, "permissive"), {"write", s.secret + "/new"}), 0, "OK\n");
    CHECK(read_file(s.secret + "/new") == "x");
  }
}

TEST_CASE("filesystem.execute: a binary outside the allow-list cannot be executed") {
  Sandbox s;
  const std::string copy = s.bin + "/probe-copy";
  const std::string plan = compile(s.dir, s.base());
  // From inside the sandbox: the probe's own execve is refused.
  CHECK_RUN(probe(plan, {"exec", copy, "read", s.in + "/file"}), 1, "EACCES\n");
  // As the command itself: the launcher's execve is refused, exit 126.
  const Run direct = launch(plan, {copy, "read", s.in + "/file"});
  CHECK_RUN(direct, 126, "");
  CHECK(direct.err.find("execve") != std::string::npos);

  SUBCASE("control: allowing the directory makes both executions succeed") {
    Policy permissive = s.base();
    permissive.execute.push_back(s.bin);
    const std::string allowed = compile(s.dir, permissive, "permissive");
    // The output is the executed copy's own: it read the file.
    CHECK_RUN(probe(allowed, {"exec", copy, "read", s.in + "/file"}), 0, "OK\n");
    CHECK_RUN(launch(allowed, {copy, "read", s.in + "/file"}), 0, "OK\n");
  }
}

TEST_CASE("syscalls: default kill kills the command with SIGSYS, exit 159") {
  Sandbox s;
  CHECK_RUN(probe(compile(s.dir, s.base()), {"getppid"}), 128 + SIGSYS, "");

  SUBCASE("control: with getppid allowed the same probe succeeds") {
    Policy permissive = s.base();
    permissive.syscalls.push_back("getppid");
    CHECK_RUN(probe(compile(s.dir, permissive, "permissive"), {"getppid"}), 0, "OK\n");
  }
}

TEST_CASE("syscalls: default errno:EPERM fails the call with EPERM") {
  Sandbox s;
  Policy policy = s.base();
  policy.default_action = "errno:EPERM";
  CHECK_RUN(probe(compile(s.dir, policy), {"getppid"}), 1, "EPERM\n");

  SUBCASE("control: with getppid allowed the same probe succeeds") {
    policy.syscalls.push_back("getppid");
    CHECK_RUN(probe(compile(s.dir, policy, "permissive"), {"getppid"}), 0, "OK\n");
  }
}
