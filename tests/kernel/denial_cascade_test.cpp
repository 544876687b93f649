// Issue 14, end to end: each class of denial, refused by one document of a
// cascade of two (org.yaml, then agent.yaml, compiled together by the real
// aasmc from their directory, as a user names them), run by the real
// launcher (--explain for the Landlock classes) against the real kernel,
// must come out of the receipt's denials section (docs/receipts.md#denials)
// with its layer, witness, call or right/path/port, errno and count; the
// refusing document's file:line:col (computed from the YAML written here,
// never counted by hand) and only that document's; and that document's
// edit. Each class has a control: the same op under a cascade that allows
// it succeeds and records nothing.
//
// Safety: paths in the test's temp dir, TCP on 127.0.0.1 only, abstract
// socket names and a signalled pid (signal 0) the test owns.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "fixtures.h"
#include "harness.h"
#include "receipts.h"

using namespace aasm::ktest;

namespace {

constexpr int kKilled = 128 + SIGSYS;

struct Document {
  const char* file;
  const char* name;
  const char* tier;
};
constexpr Document kOrg{"org.yaml", "org-base", "org"}, kAgent{"agent.yaml", "my-agent", "agent"};

std::string document_text(const Document& d, const std::string& spec) {
  return "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: " + std::string(d.name) + ", tier: " + d.tier +
         "}\nspec:\n" + spec;
}

// The two documents, written to the test's dir and compiled together from
// there, so the plan's provenance names them as given: org.yaml, agent.yaml.
struct Cascade {
  std::string org_text, agent_text;
  std::string plan;

  Cascade(const TempDir& dir, const std::string& org_spec, const std::string& agent_spec)
      : org_text(document_text(kOrg, org_spec)), agent_text(document_text(kAgent, agent_spec)), plan(dir / "plan.bin") {
    write_file(dir / kOrg.file, org_text);
    write_file(dir / kAgent.file, agent_text);
    const Run compiled = run({binary("AASMC"), "compile", kOrg.file, kAgent.file, "-o", "plan.bin"}, dir.path());
    INFO("aasmc stderr: ", compiled.err);
    REQUIRE(compiled.exit_code == 0);
  }
  const std::string& text(const Document& d) const { return &d == &kOrg ? org_text : agent_text; }
};

// aasm-launch [--explain] --receipt DIR/receipt.json PLAN -- aasm-probe ARGS
// (the report at its default, --denials=summary).
Run probe_in(const TempDir& dir, const Cascade& c, bool explain, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH")};
  if (explain) argv.push_back("--explain");
  argv.insert(argv.end(), {"--receipt", dir / "receipt.json", c.plan, "--", binary("AASM_PROBE")});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// The control: the op succeeds under `c` and nothing of `layer` is
// recorded. Returns the run, for its stderr.
Run check_allowed(const TempDir& dir, const Cascade& c, bool explain, const std::vector<std::string>& args,
                  const std::string& layer) {
  const Run r = probe_in(dir, c, explain, args);
  CHECK_RUN(r, 0, "OK\n");
  CHECK(denial_entries(dir, layer).empty());
  return r;
}

// A refusing line of `policy[]`.
struct Line {
  const Document* doc;
  Place at;
  std::string key, value;
};

// An edit of `edits[]`; `at` only for the ops that name a place (not `add`).
struct Edit {
  const Document* doc;
  std::string list, op, item;
  Place at;
  std::string widens;
};

// What one denial's entry must say.
struct Expected {
  std::string layer, witness, syscall;
  long syscall_number = 0;
  std::string error;
  std::vector<std::string> rights;
  std::string path;
  long port = 0;
  std::vector<Line> policy;
  std::vector<Edit> edits;
};

void check_place(const nlohmann::json& j, const Document& doc, const Place& at) {
  CHECK(j.at("document") == doc.name);
  CHECK(j.at("file") == doc.file);
  CHECK(j.at("line") == at.line);
  CHECK(j.at("col") == at.col);
}

// The receipt holds one entry of e.layer, and it is `e`, field by field.
void check_entry(const TempDir& dir, const Expected& e) {
  const std::vector<nlohmann::json> entries = denial_entries(dir, e.layer);
  const std::string denials_text = receipt_denials(dir).dump();  // not inside INFO: it asserts (suggest_loop_test.cpp)
  INFO("receipt's denials: ", denials_text);
  REQUIRE(entries.size() == 1);
  const nlohmann::json entry = entries[0];
  CHECK(entry.at("witness") == e.witness);
  CHECK(entry.at("syscall") == e.syscall);
  CHECK(entry.at("syscall_number") == e.syscall_number);
  CHECK(entry.at("errno") == e.error);
  CHECK(entry.at("rights") == e.rights);
  CHECK(entry.at("path") == e.path);
  CHECK(entry.at("port") == e.port);
  CHECK(entry.at("count") == 1);
  CHECK(entry.at("note") == "");
  const nlohmann::json policy = entry.at("policy");
  REQUIRE(policy.size() == e.policy.size());
  for (size_t i = 0; i < e.policy.size(); ++i) {
    check_place(policy[i], *e.policy[i].doc, e.policy[i].at);
    CHECK(policy[i].at("key") == e.policy[i].key);
    CHECK(policy[i].at("value") == e.policy[i].value);
  }
  const nlohmann::json edits = entry.at("edits");
  REQUIRE(edits.size() == e.edits.size());
  for (size_t i = 0; i < e.edits.size(); ++i) {
    check_place(edits[i], *e.edits[i].doc, e.edits[i].at);
    CHECK(edits[i].at("list") == e.edits[i].list);
    CHECK(edits[i].at("op") == e.edits[i].op);
    CHECK(edits[i].at("item") == e.edits[i].item);
    CHECK(edits[i].at("widens") == e.edits[i].widens);
  }
}

// The filesystem node: the probe's own trees read (and executed) plus
// `read` and `execute`, `write` writable.
std::string fs(const std::vector<std::string>& read, const std::vector<std::string>& write,
               const std::vector<std::string>& execute = {}) {
  return Fs{read, write, execute}.yaml();
}

// The place of a document's filesystem list `verb`: its `[`.
Place list_of(const Cascade& c, const Document& d, const std::string& verb) {
  return place_of(c.text(d), "[", "    " + verb + ":");
}

}  // namespace

TEST_CASE("denial cascade: an errno'd syscall names the first document's deny entry and removes it there") {
  TempDir dir;
  const std::string marker = dir / "made";
  const std::string rw = fs({dir.path()}, {dir.path()});
  const Cascade c(dir, rw + "  syscalls:\n    default: \"errno:EACCES\"\n    deny: [mkdirat]\n", rw);
  CHECK_RUN(probe_in(dir, c, false, {"mkdir", marker}), 1, "EACCES\n");
  CHECK_FALSE(exists(marker));
  const Place deny = place_of(c.org_text, "mkdirat");
  check_entry(dir, {"seccomp", "listener", "mkdirat", SYS_mkdirat, "EACCES", {}, "", 0,
                    {{&kOrg, deny, "syscalls.deny", "errno:EACCES"}},
                    {{&kOrg, "syscalls.deny", "remove", "mkdirat", deny, ""}}});

  SUBCASE("control: a cascade that denies another call lets it through and records nothing") {
    const Cascade open(dir, rw + "  syscalls:\n    default: \"errno:EACCES\"\n    deny: [unlinkat]\n", rw);
    check_allowed(dir, open, false, {"mkdir", marker}, "seccomp");
    CHECK(exists(marker));
  }
}

// An allowlist in one document, the answer in the other: both lines refused
// it, and the edit goes to the allowlist. (socket and socketpair, allowed
// here, would otherwise keep the kernel's errno unobserved: the
// filesystem's unix-socket rules answer them with an errno too,
// shared_errno_numbers, docs/seccomp.md.)
TEST_CASE("denial cascade: a call the second document's allowlist omits names it and the first document's default") {
  TempDir dir;
  const std::string marker = dir / "made";
  const std::string rw = fs({dir.path()}, {dir.path()});
  const std::string calls = "\"@startup\", \"@file-read\", \"@process\", \"@memory\", \"@signal\", write, socket, socketpair";
  const Cascade c(dir, rw + "  syscalls:\n    default: \"errno:EPERM\"\n", rw + "  syscalls:\n    allow: [" + calls + "]\n");
  CHECK_RUN(probe_in(dir, c, false, {"mkdir", marker}), 1, "EPERM\n");
  CHECK_FALSE(exists(marker));
  check_entry(dir, {"seccomp", "listener", "mkdirat", SYS_mkdirat, "EPERM", {}, "", 0,
                    {{&kAgent, place_of(c.agent_text, "allow:", "syscalls:"), "syscalls.allow", ""},
                     {&kOrg, place_of(c.org_text, "\"errno:EPERM\""), "syscalls.default", "errno:EPERM"}},
                    {{&kAgent, "syscalls.allow", "add", "mkdirat", {}, ""}}});

  SUBCASE("control: the allowlist names it: the call succeeds and nothing is recorded") {
    const Cascade open(dir, rw + "  syscalls:\n    default: \"errno:EPERM\"\n",
                       rw + "  syscalls:\n    allow: [" + calls + ", mkdirat]\n");
    check_allowed(dir, open, false, {"mkdir", marker}, "seccomp");
    CHECK(exists(marker));
  }
}

TEST_CASE("denial cascade: a killed syscall names the second document's deny entry, from the kernel's record") {
  TempDir dir;
  const std::string marker = dir / "made";
  const std::string rw = fs({dir.path()}, {dir.path()});
  const Cascade c(dir, rw + "  syscalls:\n    default: kill\n", rw + "  syscalls:\n    deny: [mkdirat]\n");
  // The kernel prints audit records under printk_ratelimit() (10 per 5 s):
  // after a burst of kills a record may be lost and the launcher says "exit
  // status" (denials_seccomp_test.cpp). Up to three tries, 5.5 s apart.
  bool from_kernel = false;
  for (int attempt = 0; attempt < 3 && !from_kernel; ++attempt) {
    if (attempt) sleep_ms(5500);
    CHECK_RUN(probe_in(dir, c, false, {"mkdir", marker}), kKilled, "");
    const std::vector<nlohmann::json> entries = denial_entries(dir, "seccomp");
    REQUIRE(entries.size() == 1);
    from_kernel = entries[0].at("witness") == "kernel_record";
  }
  REQUIRE(from_kernel);
  CHECK_FALSE(exists(marker));
  const Place deny = place_of(c.agent_text, "mkdirat");
  check_entry(dir, {"seccomp", "kernel_record", "mkdirat", SYS_mkdirat, "", {}, "", 0,
                    {{&kAgent, deny, "syscalls.deny", "kill"}},
                    {{&kAgent, "syscalls.deny", "remove", "mkdirat", deny, ""}}});

  SUBCASE("control: a cascade that kills another call lets it through and records nothing") {
    const Cascade open(dir, rw + "  syscalls:\n    default: kill\n", rw + "  syscalls:\n    deny: [unlinkat]\n");
    check_allowed(dir, open, false, {"mkdir", marker}, "seccomp");
    CHECK(exists(marker));
  }
}

TEST_CASE("denial cascade: a Landlock read refused by the second document names its read list, on stderr too") {
  TempDir dir;
  const std::string secret = dir / "secret";
  write_file(secret, "outside\n");
  const Cascade c(dir, fs({dir.path()}, {}), fs({}, {}));
  const Run r = probe_in(dir, c, true, {"read", secret});
  CHECK_RUN(r, 1, "EACCES\n");
  const Place list = list_of(c, kAgent, "read");
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"read_file"}, secret, 0,
                    {{&kAgent, list, "filesystem.read.allow", ""}},
                    {{&kAgent, "filesystem.read.allow", "add", secret, {}, ""}}});
  // The summary (the default --denials) says the same on stderr.
  const std::string at = "agent.yaml:" + std::to_string(list.line) + ":" + std::to_string(list.col);
  CHECK(contains(r.err, "aasm-launch: denials: 1 distinct\n"
                        "  read_file " + secret + " -> EACCES  x1\n"
                        "    refused by " + at + " (my-agent): filesystem.read.allow\n"
                        "    edit: add " + secret + " to filesystem.read.allow in agent.yaml\n"));

  SUBCASE("control: both documents grant it: the read succeeds and nothing is recorded or printed") {
    const Cascade open(dir, fs({dir.path()}, {}), fs({dir.path()}, {}));
    CHECK_FALSE(contains(check_allowed(dir, open, true, {"read", secret}, "landlock_fs").err, "aasm-launch: denials:"));
  }
}

// A cascade is a meet: where both documents refuse, allowing takes an edit in each.
TEST_CASE("denial cascade: a Landlock read refused by both documents names both lists, each with its edit") {
  TempDir dir;
  const std::string secret = dir / "secret";
  write_file(secret, "outside\n");
  const Cascade c(dir, fs({}, {}), fs({}, {}));
  CHECK_RUN(probe_in(dir, c, true, {"read", secret}), 1, "EACCES\n");
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"read_file"}, secret, 0,
                    {{&kOrg, list_of(c, kOrg, "read"), "filesystem.read.allow", ""},
                     {&kAgent, list_of(c, kAgent, "read"), "filesystem.read.allow", ""}},
                    {{&kOrg, "filesystem.read.allow", "add", secret, {}, ""},
                     {&kAgent, "filesystem.read.allow", "add", secret, {}, ""}}});

  SUBCASE("control: both documents grant it: the read succeeds and nothing is recorded") {
    const Cascade open(dir, fs({dir.path()}, {}), fs({dir.path()}, {}));
    check_allowed(dir, open, true, {"read", secret}, "landlock_fs");
  }
}

TEST_CASE("denial cascade: a Landlock write refused by the first document names its write list") {
  TempDir dir;
  const std::string file = dir / "file", other = dir / "other";
  write_file(file, "inside\n");
  make_dir(other);
  const Cascade c(dir, fs({dir.path()}, {other}), fs({dir.path()}, {dir.path()}));
  CHECK_RUN(probe_in(dir, c, true, {"write", file}), 1, "EACCES\n");
  CHECK(read_file(file) == "inside\n");
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"write_file", "truncate"}, file, 0,
                    {{&kOrg, list_of(c, kOrg, "write"), "filesystem.write.allow", ""}},
                    {{&kOrg, "filesystem.write.allow", "add", file, {}, ""}}});

  SUBCASE("control: both documents grant it: the write succeeds and nothing is recorded") {
    const Cascade open(dir, fs({dir.path()}, {dir.path()}), fs({dir.path()}, {dir.path()}));
    check_allowed(dir, open, true, {"write", file}, "landlock_fs");
    CHECK(read_file(file) == "x");
  }
}

TEST_CASE("denial cascade: a Landlock execute refused by the second document names its execute list") {
  TempDir dir;
  const std::string copy = dir / "probe-copy";
  write_file(copy, read_file(binary("AASM_PROBE")), 0755);
  const Cascade c(dir, fs({dir.path()}, {}, {dir.path()}), fs({dir.path()}, {}));
  CHECK_RUN(probe_in(dir, c, true, {"exec", copy, "exit", "0"}), 1, "EACCES\n");
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"execute"}, copy, 0,
                    {{&kAgent, list_of(c, kAgent, "execute"), "filesystem.execute.allow", ""}},
                    {{&kAgent, "filesystem.execute.allow", "add", copy, {}, ""}}});

  SUBCASE("control: both documents grant it: the exec succeeds and nothing is recorded") {
    const Cascade open(dir, fs({dir.path()}, {}, {dir.path()}), fs({dir.path()}, {}, {dir.path()}));
    check_allowed(dir, open, true, {"exec", copy, "ok"}, "landlock_fs");
  }
}

// The launcher's own execve of the command: Landlock checks `execute` on the
// command and on the ELF interpreter the kernel opens for it, and either
// refusal is a bare EACCES before the command exists (no tracer sees it).
// The supervisor names the file no rule grants it to, at its real path.
std::string exec_spec(const std::vector<std::string>& execute, const TempDir& dir) {
  return "  filesystem:\n    read: {allow: " + flow_list({"/usr", "/etc", dir.path()}) +
         "}\n    execute: {allow: " + flow_list(execute) + "}\n";
}

Run launch_in(const TempDir& dir, const Cascade& c, const std::string& command) {
  return run({"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH"), "--receipt", dir / "receipt.json", c.plan,
              "--", command});
}

TEST_CASE("denial cascade: an exec whose ELF interpreter the second document does not let execute names it and its list") {
  TempDir dir;
  const std::string command = dir / "true";
  write_file(command, read_file("/usr/bin/true"), 0755);  // dynamically linked: the kernel opens its interpreter
#if defined(__x86_64__)
  const char* interpreter = "/lib64/ld-linux-x86-64.so.2";
#else
  const char* interpreter = "/lib/ld-linux-aarch64.so.1";
#endif
  char* resolved = ::realpath(interpreter, nullptr);
  REQUIRE(resolved);
  const std::string loader = resolved;
  std::free(resolved);
  const Cascade c(dir, exec_spec({dir.path(), "/usr"}, dir), exec_spec({dir.path()}, dir));
  const Run r = launch_in(dir, c, command);
  CHECK(r.exit_code == 126);
  check_entry(dir, {"landlock_fs", "launcher", "", 0, "EACCES", {"execute"}, loader, 0,
                    {{&kAgent, list_of(c, kAgent, "execute"), "filesystem.execute.allow", ""}},
                    {{&kAgent, "filesystem.execute.allow", "add", loader, {}, ""}}});
  CHECK(denial_entries(dir, "landlock_fs")[0].at("arguments") ==
        "the interpreter of " + command + " (" + interpreter + ")");
  CHECK(contains(r.err, "  execute " + loader + " -> EACCES  x1\n"));

  SUBCASE("the command itself outside every execute list: it is the one named") {
    const Cascade outside(dir, exec_spec({"/usr"}, dir), exec_spec({"/usr"}, dir));
    CHECK(launch_in(dir, outside, command).exit_code == 126);
    const std::vector<nlohmann::json> entries = denial_entries(dir, "landlock_fs");
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].at("witness") == "launcher");
    CHECK(entries[0].at("path") == command);
    CHECK(entries[0].at("policy").size() == 2);
  }
  SUBCASE("control: both documents let the interpreter execute: the command runs and nothing is recorded") {
    const Cascade open(dir, exec_spec({dir.path(), "/usr"}, dir), exec_spec({dir.path(), "/usr"}, dir));
    CHECK_RUN(launch_in(dir, open, command), 0, "");
    CHECK(denial_entries(dir, "landlock_fs").empty());
  }
}

TEST_CASE("denial cascade: a Landlock make_reg refused by the first document adds the parent to its write list") {
  TempDir dir;
  const std::string out = dir / "out", other = dir / "other", made = out + "/new";
  make_dir(out);
  make_dir(other);
  const Cascade c(dir, fs({dir.path()}, {other}), fs({dir.path()}, {dir.path()}));
  CHECK_RUN(probe_in(dir, c, true, {"create", made}), 1, "EACCES\n");
  CHECK_FALSE(exists(made));
  // The open asks read_file too (O_RDONLY | O_CREAT), which both grant.
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"read_file", "make_reg"}, made, 0,
                    {{&kOrg, list_of(c, kOrg, "write"), "filesystem.write.allow", ""}},
                    {{&kOrg, "filesystem.write.allow", "add", out, {}, ""}}});

  SUBCASE("control: both documents grant it: the file is made and nothing is recorded") {
    const Cascade open(dir, fs({dir.path()}, {dir.path()}), fs({dir.path()}, {dir.path()}));
    check_allowed(dir, open, true, {"create", made}, "landlock_fs");
    CHECK(exists(made));
  }
}

TEST_CASE("denial cascade: a Landlock truncate refused by the second document names its write list") {
  TempDir dir;
  const std::string file = dir / "file", other = dir / "other";
  write_file(file, "inside\n");
  make_dir(other);
  const Cascade c(dir, fs({dir.path()}, {dir.path()}), fs({dir.path()}, {other}));
  CHECK_RUN(probe_in(dir, c, true, {"truncate", file}), 1, "EACCES\n");
  CHECK(read_file(file) == "inside\n");
  check_entry(dir, {"landlock_fs", "tracer", "", 0, "EACCES", {"truncate"}, file, 0,
                    {{&kAgent, list_of(c, kAgent, "write"), "filesystem.write.allow", ""}},
                    {{&kAgent, "filesystem.write.allow", "add", file, {}, ""}}});

  SUBCASE("control: both documents grant it: the truncate succeeds and nothing is recorded") {
    const Cascade open(dir, fs({dir.path()}, {dir.path()}), fs({dir.path()}, {dir.path()}));
    check_allowed(dir, open, true, {"truncate", file}, "landlock_fs");
    CHECK(read_file(file).empty());
  }
}

TEST_CASE("denial cascade: a TCP connect refused by the first document names its outbound list") {
  TempDir dir;
  const Socket listener = tcp_listener();
  const uint16_t port = local_port(listener);
  const std::string base = fs({}, {});
  const std::string granted = "  network:\n    outbound: {allow: [\"" + tcp(port) + "\"]}\n";
  const Cascade c(dir, base + "  network:\n    outbound: {allow: [\"tcp:1\"]}\n", base + granted);
  // The supervisor answers a refused connect ECONNREFUSED
  // (landlock.md#what-landlock-does-not-cover-and-what-covers-it).
  CHECK_RUN(probe_in(dir, c, true, {"tcp-connect", str(port)}), 1, "ECONNREFUSED\n");
  CHECK_FALSE(listener.readable());
  check_entry(dir, {"landlock_net", "listener", "", 0, "ECONNREFUSED", {"connect_tcp"}, "", port,
                    {{&kOrg, place_of(c.org_text, "{allow:", "outbound:"), "network.outbound", "allow"}},
                    {{&kOrg, "network.outbound.allow", "add", tcp(port), {}, "the network"}}});

  SUBCASE("control: both documents grant the port: the connect succeeds and nothing is recorded") {
    const Cascade open(dir, base + granted, base + granted);
    check_allowed(dir, open, true, {"tcp-connect", str(port)}, "landlock_net");
    CHECK(accept_one(listener));
  }
}

TEST_CASE("denial cascade: a TCP bind refused by the second document sets its bind node") {
  TempDir dir;
  const uint16_t port = free_tcp_port();
  const std::string base = fs({}, {});
  const std::string granted = "  network:\n    bind: {allow: [\"" + tcp(port) + "\"]}\n";
  const Cascade c(dir, base + granted, base + "  network:\n    bind: none\n");
  CHECK_RUN(probe_in(dir, c, true, {"tcp-bind", str(port)}), 1, "EACCES\n");
  const Place none = place_of(c.agent_text, "none", "bind:");
  // `none` refuses bind() in seccomp, before Landlock: the listener reads the
  // port the call names, so the edit can list it.
  check_entry(dir, {"seccomp", "listener", "bind", SYS_bind, "EACCES", {}, "", port,
                    {{&kAgent, none, "network.bind", "errno:EACCES"}},
                    {{&kAgent, "network.bind", "set", "{allow: [" + tcp(port) + "]}", none, "the network"}}});

  SUBCASE("control: both documents grant the port: the bind succeeds and nothing is recorded") {
    const Cascade open(dir, base + granted, base + granted);
    check_allowed(dir, open, true, {"tcp-bind", str(port)}, "landlock_net");
  }
}

TEST_CASE("denial cascade: a signal scope refused by the first document sets its ipc.signals") {
  TempDir dir;
  Sentinel sentinel;
  const std::string base = fs({}, {});
  const std::string sockets = "    unix_sockets: {allow: [\"/\"]}\n";
  const std::string allowed = base + "  ipc:\n    signals: allow\n" + sockets;
  const Cascade c(dir, base + "  ipc:\n    signals: deny\n" + sockets, allowed);
  CHECK_RUN(probe_in(dir, c, true, {"kill", sentinel.id(), "0"}), 1, "EPERM\n");
  CHECK(sentinel.alive());
  const Place deny = place_of(c.org_text, "deny", "signals:");
  check_entry(dir, {"landlock_scope", "tracer", "", 0, "EPERM", {"signal"}, "", 0,
                    {{&kOrg, deny, "ipc.signals", "deny"}},
                    {{&kOrg, "ipc.signals", "set", "allow", deny, "signals to processes outside the run"}}});

  SUBCASE("control: both documents allow signals: the kill succeeds and nothing is recorded") {
    const Cascade open(dir, allowed, allowed);
    check_allowed(dir, open, true, {"kill", sentinel.id(), "0"}, "landlock_scope");
  }
}

TEST_CASE("denial cascade: an abstract unix socket scope refused by the second document sets its node") {
  TempDir dir;
  AbstractListener listener;
  const std::string base = fs({}, {});
  const std::string sockets = "    unix_sockets: {allow: [\"/\"]}\n";
  const std::string allowed = base + "  ipc:\n    abstract_unix_sockets: allow\n" + sockets;
  const Cascade c(dir, allowed, base + "  ipc:\n    abstract_unix_sockets: deny\n" + sockets);
  CHECK_RUN(probe_in(dir, c, true, {"abstract-connect", listener.name}), 1, "EPERM\n");
  const Place deny = place_of(c.agent_text, "deny", "abstract_unix_sockets:");
  check_entry(dir, {"landlock_scope", "tracer", "", 0, "EPERM", {"abstract_unix_socket"}, "@" + listener.name, 0,
                    {{&kAgent, deny, "ipc.abstract_unix_sockets", "deny"}},
                    {{&kAgent, "ipc.abstract_unix_sockets", "set", "allow", deny,
                      "abstract unix sockets outside the run"}}});

  SUBCASE("control: both documents allow them: the connect succeeds and nothing is recorded") {
    const Cascade open(dir, allowed, allowed);
    check_allowed(dir, open, true, {"abstract-connect", listener.name}, "landlock_scope");
  }
}
