// Backends (docs/backends.md), through the real aasmc: the capability table
// (`aasmc backends`), negotiation at compile time (`compile --backend`: one
// refusal per control a backend cannot enforce, degraded only where
// isolation.degraded allows, the walk of `auto` or a list, first fit, its
// refusal naming every candidate), and the exports' goldens: each
// testdata/export/NAME.yaml holds `# RUN: ARGS %s > FILE` lines, each
// followed by the `# EXPECT:` diagnostics of that run; FILE, beside it, is
// the exact stdout. AASM_UPDATE_GOLDEN=1 rewrites the FILEs.
#include <dirent.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "harness.h"
#include "plan/plan.h"

namespace aasm::ktest {
namespace {

std::string testdata() {
  const char* dir = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(dir != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  return dir;
}

Run aasmc(const std::vector<std::string>& args, const std::string& cwd = "") {
  std::vector<std::string> argv{binary("AASMC")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, cwd);
}

// Only the lines of the backend diagnostics (AASM014x).
std::vector<std::string> backend_lines(const std::string& text, const std::string& file) {
  std::vector<std::string> out;
  for (const std::string& line : diagnostic_lines(text, file))
    if (contains(line, "[AASM014")) out.push_back(line);
  return out;
}

const char* kHeader = "apiVersion: aasm.dev/v1\nkind: Policy\n";

std::string policy(const std::string& name, const std::string& spec) {
  return std::string(kHeader) + "metadata: {name: " + name + ", tier: org}\nspec:\n" + spec;
}

// Filesystem, namespaces and a syscall filter: only native enforces all.
const std::string kWide =
    "  filesystem:\n"
    "    read: {allow: [\"/usr\"]}\n"
    "  isolation:\n"
    "    namespaces: [user, pid]\n"
    "  syscalls:\n"
    "    deny: [getppid]\n";

// A syscall filter, and the signal scope every policy has by default
// (ipc), which only native enforces: let to degrade, oci carries the rest.
const std::string kSyscallsOnly =
    "  syscalls:\n"
    "    deny: [getppid]\n"
    "  isolation:\n"
    "    degraded: [ipc]\n";

TEST_CASE("aasmc backends: every backend states every control, text and JSON from one table") {
  const Run json = aasmc({"backends", "--json"});
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["schema"] == "aasm.dev/backends/v1");
  // auto carries the backends aasm-launch runs, in the table's order.
  std::vector<std::string> launched;
  for (const auto& backend : doc["backends"])
    if (backend["built"] == true && backend["launched"] == true) launched.push_back(backend["name"]);
  CHECK(doc["auto_order"] == launched);
  CHECK(launched == std::vector<std::string>{"native", "bwrap"});
  const size_t controls = doc["backends"][0]["controls"].size();
  CHECK(controls >= 11);
  for (const auto& backend : doc["backends"]) {
    INFO(backend["name"].get<std::string>());
    REQUIRE(backend["controls"].size() == controls);
    for (const auto& row : backend["controls"]) {
      // A gap is named wherever support is not full, and only there.
      CHECK((row["support"] == "full") == row["gap"].get<std::string>().empty());
      if (row["support"] == "full") CHECK(row["how"] == "prevents");
    }
  }
  CHECK(doc["auto_order"][0] == "native");
  const Run text = aasmc({"backends"});
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "bwrap: "));
  CHECK(contains(text.out, "oci (an export): "));
  CHECK(aasmc({"backends", "extra"}).exit_code == 2);
}

TEST_CASE("compile --backend native writes the same bytes as no --backend") {
  TempDir dir;
  write_file(dir / "p.yaml", policy("p", kWide));
  REQUIRE(aasmc({"compile", "p.yaml", "-o", "a.bin"}, dir.path()).exit_code == 0);
  REQUIRE(aasmc({"compile", "p.yaml", "-o", "b.bin", "--backend", "native"}, dir.path()).exit_code == 0);
  REQUIRE(aasmc({"compile", "p.yaml", "-o", "c.bin", "--backend=native"}, dir.path()).exit_code == 0);
  CHECK(read_file(dir / "a.bin") == read_file(dir / "b.bin"));
  CHECK(read_file(dir / "a.bin") == read_file(dir / "c.bin"));
}

TEST_CASE("compile --backend: one refusal per control the backend cannot enforce, at the setting") {
  TempDir dir;
  write_file(dir / "p.yaml", policy("p", kWide));
  SUBCASE("oci") {
    const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "oci"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK_FALSE(exists(dir / "p.bin"));
    CHECK(backend_lines(r.err, "p.yaml") ==
          std::vector<std::string>{
              "6:20: error: file_read cannot be enforced by backend 'oci': an OCI seccomp profile has no path rules; "
              "list file_read in isolation.degraded to accept it [AASM0140]",
              "aasmc: error: ipc cannot be enforced by backend 'oci': Landlock scopes (abstract unix sockets, "
              "signals) and socket paths are not carried; list ipc in isolation.degraded to accept it [AASM0140]",
              "8:24: error: namespaces cannot be enforced by backend 'oci': the runtime's config.json and the pod "
              "decide namespaces; no domain of isolation.degraded lets it degrade [AASM0140]"});
  }
  SUBCASE("systemd") {
    const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "systemd"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    const auto lines = backend_lines(r.err, "p.yaml");
    REQUIRE(lines.size() == 4);
    CHECK(contains(lines[0], "6:20: error: file_read cannot be enforced by backend 'systemd': systemd has no read"));
    CHECK(contains(lines[1], "ipc cannot be enforced by backend 'systemd'"));
    CHECK(contains(lines[2], "10:5: error: syscall cannot be enforced by backend 'systemd': SystemCallFilter= takes"));
    CHECK(contains(lines[3], "8:24: error: namespaces cannot be enforced by backend 'systemd'"));
  }
  SUBCASE("an unknown backend is a usage error") {
    const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "lxc"}, dir.path());
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "unknown backend 'lxc' (native, systemd, oci, bwrap, auto)"));
  }
}

TEST_CASE("compile --backend: degraded only where isolation.degraded allows, recorded in the plan") {
  TempDir dir;
  write_file(dir / "p.yaml", policy("p",
                                    "  filesystem:\n"
                                    "    read: {allow: [\"/usr\"]}\n"
                                    "  syscalls:\n"
                                    "    deny: [getppid]\n"
                                    "  isolation:\n"
                                    "    degraded: [file_read, ipc]\n"));
  const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "oci"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(backend_lines(r.err, "p.yaml") ==
        std::vector<std::string>{"6:20: warning: file_read is degraded with backend 'oci' (isolation.degraded "
                                 "permits it): an OCI seccomp profile has no path rules [AASM0141]",
                                 "aasmc: warning: ipc is degraded with backend 'oci' (isolation.degraded permits "
                                 "it): Landlock scopes (abstract unix sockets, signals) and socket paths are not "
                                 "carried [AASM0141]"});
  const Run show = aasmc({"show", "p.bin"}, dir.path());
  CHECK(contains(show.out, "backend = oci"));
  CHECK(contains(show.out, "backend.degraded.file_read = an OCI seccomp profile has no path rules"));
  // The planned and the achievable level of each degraded control, in the table's words.
  CHECK(contains(show.out, "backend.degraded.file_read.achievable = not enforced (cannot express, none)"));
  CHECK(contains(show.out, "backend.degraded.file_read.planned = enforce, may degrade"));
  CHECK(contains(show.out, "backend.degraded.ipc.achievable = not enforced (cannot express, none)"));
  CHECK(contains(show.out, "backend.degraded.ipc.planned = enforce, may degrade"));
  // Without the degraded list the same policy is refused: the degrade is the policy's, not the backend's.
  write_file(dir / "q.yaml", policy("q", "  syscalls:\n    deny: [getppid]\n"));
  CHECK(aasmc({"compile", "q.yaml", "-o", "q.bin", "--backend", "oci"}, dir.path()).exit_code == 1);
}

// The policy's every file control and its signal scope may degrade: bwrap
// can carry it beside native.
const std::string kBwrapCarries =
    "  filesystem:\n"
    "    read: {allow: [\"/usr\", \"${CWD}\"]}\n"
    "    write: {allow: [\"${CWD}/out\"]}\n"
    "    execute: {allow: [\"/usr\"]}\n"
    "  syscalls:\n"
    "    deny: [getppid]\n"
    "  isolation:\n"
    "    degraded: [file_read, file_write, file_execute, ipc]\n";

plan::Plan decoded(const std::string& path) {
  const std::string text = read_file(path);
  auto plan = plan::decode_plan(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  REQUIRE_MESSAGE(plan, (plan ? "" : plan.error().message));
  return *plan;
}

TEST_CASE("compile --backend auto and lists: one plan carrying each launched backend that satisfies the policy") {
  TempDir dir;
  write_file(dir / "wide.yaml", policy("wide", kWide));
  write_file(dir / "both.yaml", policy("both", kBwrapCarries));
  SUBCASE("auto: bwrap cannot carry the policy, so the plan lists it not carried, with why, and warns nothing") {
    const Run r = aasmc({"compile", "wide.yaml", "-o", "a.bin", "--backend", "auto"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(backend_lines(r.err, "wide.yaml").empty());
    const plan::Plan plan = decoded(dir / "a.bin");
    REQUIRE(plan.lowerings.size() == 2);
    CHECK(plan.lowerings[0] == plan::Lowering{"native", "", {}, {}});
    CHECK(plan.lowerings[1].backend == "bwrap");
    CHECK(plan.lowerings[1].not_carried.starts_with("cannot enforce file_read: a path outside the bound trees"));
    const std::string show = aasmc({"show", "a.bin"}, dir.path()).out;
    CHECK(contains(show, "  native: carried, the sections above as they are\n"));
    CHECK(contains(show, "  bwrap: not carried: cannot enforce file_read: "));
    // The base is the native plan, byte for byte but for its lowerings section.
    REQUIRE(aasmc({"compile", "wide.yaml", "-o", "n.bin"}, dir.path()).exit_code == 0);
    plan::Plan base = plan;
    base.lowerings.clear();
    CHECK(base == decoded(dir / "n.bin"));
  }
  SUBCASE("a list naming bwrap: a warning says it is not carried, and why") {
    const Run r = aasmc({"compile", "wide.yaml", "-o", "l.bin", "--backend", "native,bwrap"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto lines = backend_lines(r.err, "wide.yaml");
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].starts_with("aasmc: warning: the plan does not carry backend 'bwrap' cannot enforce file_read: "));
    CHECK(contains(lines[0], "(a host where no carried backend can run refuses the launch) [AASM0146]"));
  }
  SUBCASE("auto with both carried: taking the bwrap lowering gives the --backend bwrap plan exactly") {
    const Run r = aasmc({"compile", "both.yaml", "-o", "a.bin", "--backend", "auto"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.err, "file_read is degraded with backend 'bwrap' (isolation.degraded permits it)"));
    REQUIRE(aasmc({"compile", "both.yaml", "-o", "b.bin", "--backend", "bwrap"}, dir.path()).exit_code == 0);
    REQUIRE(aasmc({"compile", "both.yaml", "-o", "n.bin"}, dir.path()).exit_code == 0);
    const plan::Plan several = decoded(dir / "a.bin");
    REQUIRE(several.lowerings.size() == 2);
    CHECK(several.lowerings[1].carried());
    plan::Plan as_bwrap = several, as_native = several;
    plan::apply_lowering(as_bwrap, several.lowerings[1]);
    plan::apply_lowering(as_native, several.lowerings[0]);
    CHECK(as_bwrap == decoded(dir / "b.bin"));
    CHECK(as_native == decoded(dir / "n.bin"));
    // show and diff name every lowering.
    const std::string show = aasmc({"show", "a.bin"}, dir.path()).out;
    CHECK(contains(show, "  bwrap: carried, taking it adds:\n    backend = bwrap\n"));
    CHECK(contains(show, "    backend.degraded.file_read.achievable = partial (prevents, partial)\n"));
    CHECK(contains(show, "--unshare-user --unshare-pid"));
    const auto json = nlohmann::json::parse(aasmc({"show", "--json", "a.bin"}, dir.path()).out);
    CHECK(json["lowerings"][0]["backend"] == "native");
    CHECK(json["lowerings"][1]["bwrap"].size() == several.lowerings[1].bwrap->args.size());
    const Run diff = aasmc({"diff", "n.bin", "a.bin"}, dir.path());
    CHECK(contains(diff.out, "WIDENING lowerings bwrap: not listed -> carried; backend = bwrap"));
    CHECK_FALSE(contains(diff.out, "lowerings native"));
    // The same policy and compiler, the same bytes.
    REQUIRE(aasmc({"compile", "both.yaml", "-o", "a2.bin", "--backend", "auto"}, dir.path()).exit_code == 0);
    CHECK(read_file(dir / "a.bin") == read_file(dir / "a2.bin"));
  }
  SUBCASE("the order given is the order kept") {
    REQUIRE(aasmc({"compile", "both.yaml", "-o", "l.bin", "--backend", "bwrap,native"}, dir.path()).exit_code == 0);
    const plan::Plan plan = decoded(dir / "l.bin");
    REQUIRE(plan.lowerings.size() == 2);
    CHECK(plan.lowerings[0].backend == "bwrap");
    CHECK(plan.lowerings[1].backend == "native");
  }
  SUBCASE("an export in a list is refused: aasm-launch does not run it") {
    for (const char* list : {"native,oci", "systemd,bwrap"}) {
      const Run r = aasmc({"compile", "wide.yaml", "-o", "p.bin", "--backend", list}, dir.path());
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, "is an export (aasmc export --format "));
      CHECK(contains(r.err, "a plan carries several lowerings only of native, bwrap"));
      CHECK_FALSE(exists(dir / "p.bin"));
    }
    CHECK(contains(aasmc({"compile", "wide.yaml", "-o", "p.bin", "--backend", "native,native"}, dir.path()).err,
                   "backend 'native' is listed twice"));
  }
  SUBCASE("one export alone is its one-backend plan, as before") {
    write_file(dir / "narrow.yaml", policy("narrow", kSyscallsOnly));
    const Run r = aasmc({"compile", "narrow.yaml", "-o", "p.bin", "--backend", "oci"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(decoded(dir / "p.bin").lowerings.empty());
    CHECK(contains(aasmc({"show", "p.bin"}, dir.path()).out, "backend = oci"));
  }
}

// --- bwrap ------------------------------------------------------------------

// Every control bwrap carries partly or not at all, each asked for.
std::string bwrap_gaps(const std::string& pinned) {
  return
    "  filesystem:\n"
    "    read: {allow: [\"/usr\", \"${CWD}\"]}\n"
    "    write: {allow: [\"${CWD}/out\"]}\n"
    "    execute: {allow: [\"/usr/bin\"]}\n"
    "    readonly: [\"${CWD}/out/keep\"]\n"
    "    pinned: [\"" + pinned + "\"]\n"
    "  network:\n"
    "    outbound: {allow: [\"tcp:443\"]}\n"
    "    bind: none\n"
    "  syscalls:\n"
    "    deny: [\"@mount\"]\n"
    "  isolation:\n"
    "    filesystem_view: true\n";
}

TEST_CASE("compile --backend bwrap: one refusal per control bwrap cannot enforce in full, at the setting") {
  TempDir dir;
  write_file(dir / "tool", "#!/bin/sh\n");
  write_file(dir / "p.yaml", policy("p", bwrap_gaps(dir / "tool")));
  const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "bwrap"}, dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK_FALSE(exists(dir / "p.bin"));
  const std::vector<std::string> lines = backend_lines(r.err, "p.yaml");
  const std::vector<std::string> refused{"file_read", "file_write", "file_execute", "network_outbound",
                                         "network_bind", "ipc", "filesystem_view", "pinned_files"};
  REQUIRE(lines.size() == refused.size());
  for (size_t i = 0; i < refused.size(); ++i) {
    CAPTURE(lines[i]);
    CHECK(contains(lines[i], "error: " + refused[i] + " cannot be enforced by backend 'bwrap': "));
  }
  CHECK(contains(lines[0], "a tree granted only for writing or executing is readable too"));
  CHECK(contains(lines[1], "creating files and directories, removing, truncating are not split"));
  CHECK(contains(lines[2], "execute is not separable from read"));
  CHECK(contains(lines[3], "TCP ports and connect() answers are not expressible"));
  CHECK(contains(lines[6], "a protected path's ancestors are not pinned"));
  CHECK(contains(lines[7], "bwrap execs the command by its path"));
  CHECK(contains(lines[7], "no domain of isolation.degraded lets it degrade"));
  // Namespaces, capabilities and the syscall filter it carries in full: no diagnostic names them.
  CHECK_FALSE(contains(r.err, "syscall cannot"));
  CHECK_FALSE(contains(r.err, "capabilities cannot"));
}

TEST_CASE("compile --backend bwrap: the plan carries bwrap's argument vector and no Landlock ruleset") {
  TempDir dir;
  write_file(dir / "p.yaml", policy("p",
                                    "  filesystem:\n"
                                    "    read: {allow: [\"/usr\", \"/proc\", \"/dev/null\", \"${CWD}\"]}\n"
                                    "    write: {allow: [\"${CWD}/out\"]}\n"
                                    "    optional: [\"${CWD}/out\"]\n"
                                    "  network:\n"
                                    "    outbound: none\n"
                                    "    bind: none\n"
                                    "  syscalls:\n"
                                    "    deny: [getppid]\n"
                                    "  isolation:\n"
                                    "    degraded: [file_read, file_write, network_outbound, network_bind, ipc]\n"));
  const Run r = aasmc({"compile", "p.yaml", "-o", "p.bin", "--backend", "bwrap"}, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const Run show = aasmc({"show", "p.bin"}, dir.path());
  INFO(show.out);
  CHECK(contains(show.out, "backend = bwrap"));
  CHECK(contains(show.out, "backend.degraded.network_outbound.achievable = partial (prevents, partial)"));
  CHECK(contains(show.out, "--unshare-user --unshare-pid --unshare-net --unshare-cgroup --new-session "
                           "--die-with-parent --cap-drop ALL --ro-bind /usr /usr --ro-bind ${CWD} ${CWD} --bind-try ${CWD}/out ${CWD}/out "
                           "--dev-bind /dev/null /dev/null --proc /proc"));
  CHECK(contains(show.out, "--remount-ro / <--add-seccomp-fd N per seccomp program>"));
  CHECK_FALSE(contains(show.out, "landlock (ABI"));
  const auto json = nlohmann::json::parse(aasmc({"show", "--json", "p.bin"}, dir.path()).out);
  REQUIRE(json["bwrap"].is_array());
  CHECK(json["bwrap"][0] == "--unshare-user");
  CHECK(json["bwrap"].back() == "<--add-seccomp-fd N per seccomp program>");
  CHECK(json["landlock"].is_null());
  // The same bytes twice, and `aasmc verify` recompiles for the backend the plan records.
  REQUIRE(aasmc({"compile", "p.yaml", "-o", "q.bin", "--backend", "bwrap"}, dir.path()).exit_code == 0);
  CHECK(read_file(dir / "p.bin") == read_file(dir / "q.bin"));
  // `aasmc diff` from the native plan names the vector, flagged for review.
  REQUIRE(aasmc({"compile", "p.yaml", "-o", "n.bin"}, dir.path()).exit_code == 0);
  const Run diff = aasmc({"diff", "n.bin", "p.bin"}, dir.path());
  INFO(diff.out);
  CHECK(contains(diff.out, "not a bwrap plan"));
  CHECK(contains(diff.out, "--unshare-user --unshare-pid"));
  const Run verified = aasmc({"verify", "p.bin", "p.yaml"}, dir.path());
  INFO(verified.err);
  CHECK(verified.exit_code == 0);
  CHECK(contains(verified.out, "fresh: p.bin"));
}

// --- export goldens ---------------------------------------------------------

struct GoldenRun {
  std::vector<std::string> args;  // %s replaced by the file
  std::string expected_file;
  std::vector<std::string> expect;
};

std::vector<GoldenRun> golden_runs(const std::string& content, const std::string& file) {
  std::vector<GoldenRun> runs;
  std::istringstream in(content);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("# RUN: ")) {
      GoldenRun r;
      std::istringstream words(line.substr(7));
      for (std::string word; words >> word;) {
        if (word == ">") {
          words >> r.expected_file;
          break;
        }
        r.args.push_back(word == "%s" ? file : word);
      }
      runs.push_back(r);
    } else if (line.starts_with("# EXPECT: ")) {
      REQUIRE_MESSAGE(!runs.empty(), file, ": an EXPECT line before any RUN line");
      runs.back().expect.push_back(line.substr(10));
    }
  }
  return runs;
}

TEST_CASE("aasmc export: each golden's output and diagnostics, byte for byte") {
  const std::string dir = testdata() + "/export";
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (dirent* entry = ::readdir(d))
    if (std::string_view(entry->d_name).ends_with(".yaml")) names.push_back(entry->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 2);
  const bool update = std::getenv("AASM_UPDATE_GOLDEN") != nullptr;
  for (const std::string& name : names) {
    for (const GoldenRun& golden : golden_runs(read_file(dir + "/" + name), name)) {
      const std::string label = name + " > " + golden.expected_file;
      SUBCASE(label.c_str()) {
        const Run r = aasmc(golden.args, dir);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(diagnostic_lines(r.err, name) == golden.expect);
        if (update) write_file(dir + "/" + golden.expected_file, r.out);
        CHECK(r.out == read_file(dir + "/" + golden.expected_file));
        // Deterministic: the same bytes again.
        CHECK(aasmc(golden.args, dir).out == r.out);
      }
    }
  }
}

TEST_CASE("aasmc export: what a format cannot express is refused, and its --json lists what it cannot carry") {
  TempDir dir;
  SUBCASE("rules whose answers differ between the targets") {
    // O_TMPFILE's value differs between x86_64 and aarch64.
    write_file(dir / "p.yaml", policy("p",
                                      "  syscalls:\n"
                                      "    deny: [getppid]\n"
                                      "    rules:\n"
                                      "      - {syscall: openat, when: \"flags & O_DIRECT\", action: \"errno:EPERM\"}\n"));
    const Run r = aasmc({"export", "--format", "oci", "p.yaml"}, dir.path());
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "cannot export to oci: openat: its argument rules differ between x86_64 and aarch64"));
    CHECK(contains(r.err, "[AASM0145]"));
    CHECK(aasmc({"export", "--format", "oci", "--arch", "aarch64", "p.yaml"}, dir.path()).exit_code == 0);
  }
  SUBCASE("a plan is no input") {
    write_file(dir / "p.yaml", policy("p", kSyscallsOnly));
    REQUIRE(aasmc({"compile", "p.yaml", "-o", "p.bin"}, dir.path()).exit_code == 0);
    const Run r = aasmc({"export", "--format", "oci", "p.bin"}, dir.path());
    CHECK(r.exit_code == 1);
    CHECK(contains(r.err, "p.bin:1:1: error: a plan holds compiled BPF, not the policy's rules"));
  }
  SUBCASE("--json") {
    write_file(dir / "p.yaml", policy("p", kWide));
    const Run r = aasmc({"export", "--format", "oci", "--json", "--arch", "x86_64", "p.yaml"}, dir.path());
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto doc = nlohmann::json::parse(r.out);
    CHECK(doc["schema"] == "aasm.dev/export/v1");
    CHECK(doc["artifact"]["defaultAction"] == "SCMP_ACT_ALLOW");
    CHECK(doc["kubernetes"]["securityContext"]["seccompProfile"]["localhostProfile"] == "aasm/p.json");
    std::vector<std::string> controls;
    for (const auto& row : doc["not_carried"]) controls.push_back(row["control"]);
    CHECK(controls == std::vector<std::string>{"file_read", "ipc", "namespaces"});
  }
  SUBCASE("-o writes the file whole, --kubernetes prints the securityContext") {
    write_file(dir / "p.yaml", policy("p", kSyscallsOnly));
    const Run r = aasmc({"export", "--format", "oci", "p.yaml", "-o", "prof.json", "--kubernetes"}, dir.path());
    REQUIRE(r.exit_code == 0);
    const auto profile = nlohmann::json::parse(read_file(dir / "prof.json"));
    CHECK(profile["architectures"] == nlohmann::json::array({"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}));
    const auto snippet = nlohmann::json::parse(r.out);
    CHECK(snippet["securityContext"]["seccompProfile"]["localhostProfile"] == "aasm/prof.json");
    CHECK(snippet["securityContext"]["allowPrivilegeEscalation"] == false);
  }
}

// systemd's own parser on a unit made of the export: every line it takes,
// none it warns about ("Unknown key", "Failed to parse ..."), for each
// golden's policy.
TEST_CASE("aasmc export --format systemd: systemd-analyze verify takes every property") {
  const char* candidates[] = {"/usr/bin/systemd-analyze", "/bin/systemd-analyze"};
  std::string analyze;
  for (const char* c : candidates)
    if (::access(c, X_OK) == 0) analyze = c;
  if (analyze.empty()) {
    MESSAGE("skipped: systemd-analyze is not installed (./run deps installs systemd)");
    return;
  }
  for (const char* name : {"denylist.yaml", "allowlist.yaml"}) {
    SUBCASE(name) {
      TempDir dir;
      const Run r = aasmc({"export", "--format", "systemd", "--arch", "x86_64", testdata() + "/export/" + name});
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const std::string unit = dir / "aasm-export-test.service";
      write_file(unit, "[Unit]\nDescription=aasm export test\n\n" +
                           std::string(r.out).insert(r.out.find('\n') + 1, "ExecStart=/bin/true\n"));
      const Run verify = run({analyze, "verify", unit}, dir.path());
      INFO(read_file(unit), "\n", verify.err);
      CHECK(verify.exit_code == 0);
      CHECK_FALSE(contains(verify.err, unit + ":"));
    }
  }
}

}  // namespace
}  // namespace aasm::ktest
