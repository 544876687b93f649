// Golden tests over testdata/: every broken policy is refused with exactly
// the diagnostics its `# EXPECT:` lines list, exit 1, and no plan written;
// every valid policy compiles to a plan the runtime reads back, the same
// bytes every time. A broken policy's `# EXPECT-SCHEMA:` line is the schema's
// verdict on the same file, which tests/schema/check_schema.py checks.
#include <dirent.h>

#include <algorithm>
#include <sstream>

#include "harness.h"
#include "plan/plan.h"

namespace aasm::ktest {
namespace {

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE_MESSAGE(d != nullptr, dir);
  while (dirent* entry = ::readdir(d)) {
    const std::string name = entry->d_name;
    if (name.size() > 5 && name.ends_with(".yaml")) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

size_t entries_in(const std::string& dir) {
  size_t count = 0;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* entry = ::readdir(d))
    if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") ++count;
  ::closedir(d);
  return count;
}

std::string testdata() {
  const char* dir = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(dir != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  return dir;
}

std::vector<std::string> expectations(const std::string& content) {
  std::vector<std::string> lines;
  std::istringstream in(content);
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("# EXPECT: ")) lines.push_back(line.substr(10));
  return lines;
}

TEST_CASE("every broken policy gets exactly its expected diagnostics and no plan") {
  const std::string dir = testdata() + "/broken";
  const auto names = files_in(dir);
  REQUIRE(names.size() >= 20);
  for (const std::string& name : names) {
    SUBCASE(name.c_str()) {
      TempDir out;
      const std::string plan = out / "plan.bin";
      const Run r = run({binary("AASMC"), "compile", name, "-o", plan}, dir);
      INFO("stderr:\n", r.err);
      const auto expected = expectations(read_file(dir + "/" + name));
      REQUIRE_FALSE(expected.empty());
      CHECK(r.exit_code == 1);
      CHECK(diagnostic_lines(r.err, name) == expected);
      CHECK(entries_in(out.path()) == 0);  // neither a plan nor a temp file
    }
  }
}

TEST_CASE("every policy in testdata/warnings compiles with exactly its expected warnings") {
  const std::string dir = testdata() + "/warnings";
  for (const std::string& name : files_in(dir)) {
    SUBCASE(name.c_str()) {
      TempDir out;
      const Run r = run({binary("AASMC"), "compile", name, "-o", out / "plan.bin"}, dir);
      INFO("stderr:\n", r.err);
      CHECK(r.exit_code == 0);
      CHECK(diagnostic_lines(r.err, name) == expectations(read_file(dir + "/" + name)));
      CHECK(exists(out / "plan.bin"));
    }
  }
}

TEST_CASE("a missing policy file is an error at file:1:1, exit 1") {
  TempDir out;
  const Run r = run({binary("AASMC"), "compile", out / "missing.yaml", "-o", out / "plan.bin"});
  CHECK(r.exit_code == 1);
  // Its own error alone: the empty cascade it leaves is no second fault (AASM0050).
  CHECK(diagnostic_lines(r.err, out / "missing.yaml") ==
        std::vector<std::string>{"1:1: error: cannot read policy file: No such file or directory [AASM0001]"});
  CHECK_FALSE(exists(out / "plan.bin"));
}

TEST_CASE("a failed compile leaves an existing plan untouched") {
  TempDir out;
  write_file(out / "plan.bin", "previous plan");
  const Run r = run({binary("AASMC"), "compile", testdata() + "/broken/unknown-key.yaml", "-o", out / "plan.bin"});
  CHECK(r.exit_code == 1);
  CHECK(read_file(out / "plan.bin") == "previous plan");
}

TEST_CASE("an output that cannot be written is refused with the OS's reason, by compile and export") {
  TempDir out;
  const std::string policy = testdata() + "/policies/demo.yaml";
  const std::string target = out / "missing-dir/x.bin";
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"compile"}, std::vector<std::string>{"export", "--format", "oci"}}) {
    std::vector<std::string> argv{binary("AASMC")};
    argv.insert(argv.end(), verb.begin(), verb.end());
    argv.insert(argv.end(), {policy, "-o", target});
    const Run r = run(argv);
    INFO(verb[0], " stderr:\n", r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains("\n" + r.err, "\naasmc: error: cannot write '" + target + "': No such file or directory [AASM0101]\n"));
  }
}

TEST_CASE("a policy file over 1 MiB is refused before it is parsed") {
  TempDir dir;
  std::string huge = "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: huge, tier: agent}\nspec: {}\n";
  huge += "# " + std::string(1u << 20, 'x') + "\n";
  write_file(dir / "huge.yaml", huge);
  const Run r = run({binary("AASMC"), "compile", "huge.yaml", "-o", "plan.bin"}, dir.path());
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("huge.yaml:1:1: error: policy file is " + std::to_string(huge.size()) +
                   " bytes, over the 1048576-byte limit [AASM0005]") != std::string::npos);
  CHECK_FALSE(exists(dir / "plan.bin"));
}

TEST_CASE("usage errors exit 2") {
  CHECK(run({binary("AASMC")}).exit_code == 2);
  CHECK(run({binary("AASMC"), "compile", "x.yaml"}).exit_code == 2);  // no -o
  CHECK(run({binary("AASMC"), "compile", "x.yaml", "-o", "p", "--arch", "mips"}).exit_code == 2);
  CHECK(run({binary("AASMC"), "frobnicate"}).exit_code == 2);
  // `--` is no option's value, on every verb's parser.
  const std::string policy = testdata() + "/policies/demo.yaml";
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"compile", policy, "-o", "--"},
           {"compile", policy, "-o", "p", "--arch", "--"},
           {"compile", policy, "-o", "p", "--backend", "--"},
           {"compile", policy, "-o", "p", "--diagnostics-format", "--"},
           {"export", policy, "--format", "--"}}) {
    std::vector<std::string> argv{binary("AASMC")};
    argv.insert(argv.end(), args.begin(), args.end());
    const Run r = run(argv);
    CAPTURE(args[args.size() - 2]);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "aasmc: error: " + args[args.size() - 2] + " needs a value"));
  }
}

// testdata/explain/*.yaml end with `# EXPLAIN:` lines: what `aasmc explain
// FILE --arch x86_64` prints from its `targets:` line on.
TEST_CASE("explain prints the effective policy with provenance, as each cascade expects") {
  const std::string dir = testdata() + "/explain";
  const auto names = files_in(dir);
  REQUIRE_FALSE(names.empty());
  for (const std::string& name : names) {
    SUBCASE(name.c_str()) {
      const Run r = run({binary("AASMC"), "explain", name, "--arch", "x86_64"}, dir);
      INFO("stderr:\n", r.err);
      REQUIRE(r.exit_code == 0);
      std::vector<std::string> expected, got;
      std::istringstream file(read_file(dir + "/" + name)), out(r.out);
      for (std::string line; std::getline(file, line);)
        if (line.starts_with("# EXPLAIN: ")) expected.push_back(line.substr(11));
      bool started = false;
      for (std::string line; std::getline(out, line);)
        if ((started = started || line.starts_with("targets:"))) got.push_back(line);
      CHECK(got == expected);
    }
  }
}

TEST_CASE("every valid policy compiles, reads back, and is byte-identical across compiles") {
  // testdata/policies, and the shipped profiles (profiles/, beside testdata/).
  for (const std::string& dir : {testdata() + "/policies", testdata() + "/../profiles"}) {
    const auto names = files_in(dir);
    REQUIRE_FALSE(names.empty());
    for (const std::string& name : names) {
      SUBCASE((dir.substr(dir.rfind('/') + 1) + "/" + name).c_str()) {
        TempDir out;
        const Run first = run({binary("AASMC"), "compile", dir + "/" + name, "-o", out / "a.bin"});
        const Run second = run({binary("AASMC"), "compile", dir + "/" + name, "-o", out / "b.bin"});
        INFO("stderr:\n", first.err);
        REQUIRE(first.exit_code == 0);
        REQUIRE(second.exit_code == 0);
        const std::string a = read_file(out / "a.bin");
        CHECK(a == read_file(out / "b.bin"));
        const auto bytes = std::vector<uint8_t>(a.begin(), a.end());
        auto plan = plan::decode_plan(bytes);
        CHECK_MESSAGE(plan, (plan ? "" : plan.error().message));
        const Run shown = run({binary("AASMC"), "show", out / "a.bin"});
        CHECK(shown.exit_code == 0);
        CHECK(shown.out.find("plan format 1, identity sha256:" + to_hex(plan::plan_digest(bytes))) == 0);
      }
    }
  }
}

// `aasmc show` of a one-document policy compiled from `spec` in `dir`.
std::string show_policy(const TempDir& dir, const std::string& name, const std::string& spec) {
  write_file(dir / (name + ".yaml"),
             "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: " + name + ", tier: agent}\nspec:\n" + spec);
  const Run compiled = run({binary("AASMC"), "compile", dir / (name + ".yaml"), "-o", dir / (name + ".bin")});
  INFO("stderr:\n", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  const Run r = run({binary("AASMC"), "show", dir / (name + ".bin")});
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// Issue 11: `show` says "denied" for a denylist's names, with their answer,
// and "unconstrained" for a filesystem verb no document constrains.
TEST_CASE("show names a denylist's names as denied and a verb no document constrains as unconstrained") {
  TempDir dir;
  auto shown = [&](const std::string& name, const std::string& spec) { return show_policy(dir, name, spec); };
  const std::string deny = shown("deny", "  syscalls:\n    deny: [ptrace, bpf]\n");
  CHECK(deny.find("syscalls denied by the policy (2, answered errno:EPERM):\n  bpf\n  ptrace\n") != std::string::npos);
  CHECK(deny.find("allowed by the policy") == std::string::npos);
  CHECK(deny.find("filesystem: unconstrained") != std::string::npos);
  const std::string kill = shown("deny-kill", "  syscalls:\n    default: kill\n    deny: [ptrace]\n");
  CHECK(kill.find("syscalls denied by the policy (1, answered kill_process):\n  ptrace\n") != std::string::npos);
  const std::string reads = shown("reads", "  filesystem:\n    read: {allow: [\"/usr\"]}\n");
  CHECK(reads.find("control file_write: unconstrained") != std::string::npos);
  CHECK(reads.find("control file_execute: unconstrained") != std::string::npos);
  CHECK(reads.find("control file_read: unconstrained") == std::string::npos);

  SUBCASE("control: an allowlist's names are shown as allowed, and a fully confined filesystem has no such line") {
    const std::string allow = shown("allow", "  syscalls:\n    allow: [read]\n");
    CHECK(allow.find("syscalls allowed by the policy (1):\n  read\n") != std::string::npos);
    const std::string all = shown("all", "  filesystem:\n    read: {allow: [\"/usr\"]}\n    write: {allow: []}\n"
                                         "    execute: {allow: []}\n");
    CHECK(all.find("unconstrained") == std::string::npos);
  }
}

// Issue 13: `show` prints the filesystem view section as the plan states it
// (before any launch): each tree with its options, the protected paths, the
// /dev nodes, /proc, the tmpfs sizes and whether the view may degrade.
TEST_CASE("show prints a plan's filesystem view: trees, protected paths, /dev, /proc, tmpfs sizes") {
  TempDir dir;
  auto shown = [&](const std::string& name, const std::string& spec) { return show_policy(dir, name, spec); };
  const std::string fs =
      "  filesystem:\n"
      "    read:    {allow: [\"/usr\", \"/etc\", \"/proc\", \"/dev/null\", \"/dev/urandom\", \"/dev/pts\", \"/tmp\", \"${CWD}\"]}\n"
      "    write:   {allow: [\"/dev/null\", \"/tmp\", \"${CWD}\"]}\n"
      "    execute: {allow: [\"/usr\", \"${CWD}\"]}\n";
  const std::string view = shown("view", fs +
                                             "    readonly: [\"${CWD}/.git/hooks\", \"${CWD}/.git/config\"]\n"
                                             "    optional: [\"${CWD}/.git\"]\n"
                                             "  syscalls: {deny: [\"@mount\"]}\n"
                                             "  resources: {tmp_size: 64Mi}\n"
                                             "  isolation: {filesystem_view: true}\n");
  const auto at = view.find("filesystem view:\n");
  REQUIRE(at != std::string::npos);
  CHECK(view.substr(at, view.find("seccomp", at) - at) ==
        "filesystem view:\n"
        "  /etc: bind; ro,nosuid,nodev,noexec\n"
        "  /usr: bind; ro,nosuid,nodev\n"
        "  ${CWD}: bind; rw,nosuid,nodev\n"
        "  ${CWD}/.git/config (optional): bind, protected (read-only over its writable tree); ro,nosuid,nodev\n"
        "  ${CWD}/.git/hooks (optional): bind, protected (read-only over its writable tree); ro,nosuid,nodev\n"
        "  /proc: proc of the command's PID namespace; nosuid,nodev,noexec\n"
        "  /dev: tmpfs holding null, urandom; ro,nosuid,noexec\n"
        "  /dev/pts: a new devpts instance; nosuid,noexec\n"
        "  /tmp: private tmpfs, 67108864 bytes; rw,nosuid,nodev,noexec\n"
        "  its namespaces: pid, mount (the view's alone)\n"
        "  control filesystem_view: required\n");

  SUBCASE("control: a plan without the view has no such section") {
    CHECK(shown("no-view", fs + "  syscalls: {deny: [\"@mount\"]}\n").find("filesystem view") == std::string::npos);
  }
}

// The view degrades only where isolation.degraded lists filesystem_view, its
// own domain: the file domains, which also let Landlock go, do not stand for
// it. Its mount and PID namespaces are the view's alone unless the policy
// asks for one of them itself, and then a launcher may not drop them with it.
TEST_CASE("show: only filesystem_view lets the view degrade, and the view's namespaces are its alone unless asked for") {
  TempDir dir;
  const std::string spec =
      "  filesystem:\n    read: {allow: [\"/usr\", \"${CWD}\"]}\n    write: {allow: [\"${CWD}\"]}\n"
      "    execute: {allow: [\"/usr\"]}\n  syscalls: {deny: [\"@mount\"]}\n";
  const auto shown = [&](const std::string& name, const std::string& isolation) {
    return show_policy(dir, name, spec + "  isolation: {filesystem_view: true" + isolation + "}\n");
  };
  CHECK(contains(shown("own", ", degraded: [filesystem_view]"), "  control filesystem_view: may degrade\n"));
  const std::string file_domains = shown("file-domains", ", degraded: [file_read, file_write, file_execute]");
  CHECK(contains(file_domains, "  control filesystem_view: required\n"));
  CHECK(contains(file_domains, "  its namespaces: pid, mount (the view's alone)\n"));
  CHECK(contains(shown("pid-asked", ", namespaces: [pid]"), "  its namespaces: pid, mount (the policy's too)\n"));
  CHECK(contains(shown("mount-asked", ", namespaces: [mount, net]"), "  its namespaces: pid, mount (the policy's too)\n"));
}

}  // namespace
}  // namespace aasm::ktest
