// The fixture most kernel tests share: a temp dir with files inside and
// outside the allow-lists, and the base policy that confines the probe.
#pragma once

#include "harness.h"

namespace aasm::ktest {

struct Sandbox {
  TempDir dir;
  const std::string in = dir / "in";          // readable under the base policy
  const std::string out = dir / "out";        // writable under the base policy
  const std::string secret = dir / "secret";  // in no allow-list
  const std::string bin = dir / "bin";        // a probe copy: readable, not executable

  Sandbox() {
    for (const std::string& d : {in, out, secret, bin}) make_dir(d);
    write_file(in + "/file", "inside\n");
    write_file(secret + "/file", "outside\n");
    write_file(bin + "/probe-copy", read_file(binary("AASM_PROBE")), 0755);
  }

  // Reads /usr (libc), /etc (ld.so.cache), in/ and bin/; writes out/;
  // executes /usr and the probe's build dir. Landlock checks read_file as
  // well as execute on execve, so every executable directory is readable
  // too, and bin/ lacks only the execute right. The syscalls are the
  // probe's own beyond the compiler's start-up set (found with strace);
  // getppid is left out so tests can add it.
  Policy base() const {
    Policy p;
    p.read = {"/usr", "/etc", probe_dir(), in, bin};
    p.write = {out};
    p.execute = {"/usr", probe_dir()};
    p.default_action = "kill";
    p.syscalls = {"read", "write", "openat", "close", "newfstatat", "exit_group"};
    return p;
  }
};

}  // namespace aasm::ktest
