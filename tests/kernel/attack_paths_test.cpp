// Attacks on how the launcher finds what it grants (issue 10, items 5, 6
// and 10): a rule path the command re-pointed with a symbolic link during an
// earlier run, ${CWD}/${HOME} resolving to a system root, and a plan path
// that would hold the launcher forever. Each attack has its control: the
// same launch with the link replaced by a real file, from a temp dir, or
// with the policy's opt-in, runs.
//
// Safety: every file and link is in the test's temp dirs; the confined
// command writes only there. The launches from / (and with HOME at /) run a
// probe that only reads (/etc/hostname), so even the unfixed launcher,
// which grants / there, changes nothing.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "harness.h"

using namespace aasm::ktest;

namespace {

// A temp dir with the directory an attack works in (`tree`) and
// secret/file, which no rule grants.
struct Trees {
  TempDir dir;
  const std::string secret = dir / "secret";
  const std::string tree;
  explicit Trees(const char* name) : tree(dir / name) {
    make_dir(secret);
    make_dir(tree);
    write_file(secret + "/file", "outside\n");
  }
};

// A filesystem node that lets the probe start (its libraries and binary)
// plus `read` and `write`; `extra` goes below it, indented like it.
std::string fs_spec(const std::vector<std::string>& read, const std::vector<std::string>& write,
                    const std::string& extra = "", bool etc = true) {
  std::vector<std::string> r = {"/usr", probe_dir()};
  if (etc) r.push_back("/etc");
  r.insert(r.end(), read.begin(), read.end());
  return "  filesystem:\n"
         "    read: {allow: " + flow_list(r) + "}\n"
         "    write: {allow: " + flow_list(write) + "}\n"
         "    execute: {allow: " + flow_list({"/usr", probe_dir()}) + "}\n" + extra;
}

// aasm-launch [OPTIONS] PLAN -- aasm-probe ARGS..., started in `cwd` with
// `env` (NAME=VALUE) added, under a 20 s timeout (SIGKILL) so a launcher that
// blocks fails the test instead of hanging it.
Run launch_probe(const std::string& cwd, const std::string& plan, const std::vector<std::string>& args,
                 const std::vector<std::string>& env = {}, const std::vector<std::string>& options = {}) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "20", "/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(binary("AASM_LAUNCH"));
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {plan, "--", binary("AASM_PROBE")});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, cwd);
}

Run dry_run(const std::string& cwd, const std::string& plan, const std::vector<std::string>& env = {}) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "20", "/usr/bin/env"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {binary("AASM_LAUNCH"), "--dry-run", plan});
  return run(argv, cwd);
}


// Refused before the command ran: 125, nothing on stdout, and stderr
// naming each of `parts`.
#define CHECK_REFUSED(run_expr, ...)                                   \
  do {                                                                 \
    const ::aasm::ktest::Run& refused_ = (run_expr);                  \
    INFO("stderr: ", refused_.err);                                   \
    CHECK(refused_.signal == 0);                                      \
    CHECK(refused_.exit_code == 125);                                 \
    CHECK(refused_.out == "");                                        \
    for (const std::string& part_ : std::vector<std::string>{__VA_ARGS__}) \
      CHECK_MESSAGE(contains(refused_.err, part_), "stderr lacks: ", part_); \
  } while (0)

void symlink_to(const std::string& target, const std::string& link) {
  REQUIRE_MESSAGE(::symlink(target.c_str(), link.c_str()) == 0, "symlink ", link, ": ", std::strerror(errno));
}

}  // namespace

// ---------------------------------------------------------------- planted links

// The review's case: read ${HOME}/.gitconfig, with HOME inside the writable
// working tree, where an earlier run replaced the file by a link to a
// secret. ${HOME} and ${CWD} are different variables, so the read rule is
// not covered by the writable tree (the meet treats them as disjoint): the
// launcher opens it beneath ${HOME} without following links, and refuses.
TEST_CASE("attack paths: a ${HOME}/.gitconfig read rule re-pointed by a link in the writable tree is refused") {
  const Trees t("work");
  const TempDir& dir = t.dir;
  const std::string &secret = t.secret, &work = t.tree;
  const std::string plan = compile_spec(dir, "gitconfig", fs_spec({"${HOME}/.gitconfig"}, {"${CWD}"}));
  symlink_to(secret + "/file", work + "/.gitconfig");
  const std::vector<std::string> home = {"HOME=" + work};

  CHECK_REFUSED(launch_probe(work, plan, {"read", work + "/.gitconfig"}, home), "${HOME}/.gitconfig", ".gitconfig",
                secret + "/file");
  const Run dry = dry_run(work, plan, home);
  INFO("dry-run stdout: ", dry.out);
  CHECK(dry.exit_code == 125);

  SUBCASE("control: a real file there is read, and the secret is not") {
    REQUIRE(::unlink((work + "/.gitconfig").c_str()) == 0);
    write_file(work + "/.gitconfig", "[user]\n");
    CHECK_RUN(launch_probe(work, plan, {"read", work + "/.gitconfig"}, home), 0, "OK\n");
    CHECK_RUN(launch_probe(work, plan, {"read", secret + "/file"}, home), 1, "EACCES\n");
    CHECK(dry_run(work, plan, home).exit_code == 0);
  }
}

// A read rule beneath a tree of the same variable that is writable is
// covered by it (a writable tree is readable) and dropped: no rule follows
// the planted link, and Landlock checks its target, which no rule grants.
TEST_CASE("attack paths: a read rule beneath a writable tree grants nothing through a planted link") {
  const Trees t("rw");
  const TempDir& dir = t.dir;
  const std::string &secret = t.secret, &rw = t.tree;
  for (const auto& [name, read] : {std::pair{"cwd", std::string("${CWD}/.gitconfig")}, std::pair{"abs", rw + "/sub/file"}}) {
    CAPTURE(name);
    const std::string plan = compile_spec(dir, name, fs_spec({read}, {name == std::string("cwd") ? "${CWD}" : rw}));
    const std::string link = name == std::string("cwd") ? rw + "/.gitconfig" : rw + "/sub";
    symlink_to(name == std::string("cwd") ? secret + "/file" : secret, link);
    const std::string through = name == std::string("cwd") ? rw + "/.gitconfig" : rw + "/sub/file";
    CHECK_RUN(launch_probe(rw, plan, {"read", through}), 1, "EACCES\n");
    CHECK_RUN(launch_probe(rw, plan, {"read", secret + "/file"}), 1, "EACCES\n");
    REQUIRE(::unlink(link.c_str()) == 0);
  }

  SUBCASE("control: a real directory there is read") {
    const std::string plan = compile_spec(dir, "abs-real", fs_spec({rw + "/sub/file"}, {rw}));
    make_dir(rw + "/sub");
    write_file(rw + "/sub/file", "inside\n");
    CHECK_RUN(launch_probe(rw, plan, {"read", rw + "/sub/file"}), 0, "OK\n");
  }
}

// write [rw, ${HOME}] with HOME=rw/home: ${HOME} is a writable tree nested in
// rw, and itself a link planted in rw. Anchored at ${HOME} (the inner tree)
// the launcher would follow it; anchored at rw (the outermost) it does not.
TEST_CASE("attack paths: a nested writable tree that is itself a planted link is refused") {
  const Trees t("rw");
  const TempDir& dir = t.dir;
  const std::string &secret = t.secret, &rw = t.tree;
  const std::string plan = compile_spec(dir, "outermost", fs_spec({}, {rw, "${HOME}"}));
  symlink_to(secret, rw + "/home");

  CHECK_REFUSED(launch_probe(dir.path(), plan, {"write", rw + "/home/planted"}, {"HOME=" + rw + "/home"}), "${HOME}",
                rw + "/home", secret);
  CHECK(!exists(secret + "/planted"));

  SUBCASE("control: a real directory there is writable") {
    REQUIRE(::unlink((rw + "/home").c_str()) == 0);
    make_dir(rw + "/home");
    CHECK_RUN(launch_probe(dir.path(), plan, {"write", rw + "/home/file"}, {"HOME=" + rw + "/home"}), 0, "OK\n");
    CHECK_RUN(launch_probe(dir.path(), plan, {"write", secret + "/file"}, {"HOME=" + rw + "/home"}), 1, "EACCES\n");
  }
}

// ---------------------------------------------------------------- system roots

TEST_CASE("attack paths: a ${CWD} write rule launched from / is refused, --dry-run too") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "cwd-write", fs_spec({}, {"${CWD}"}));
  // The probe only reads: the unfixed launcher granted writing / here.
  CHECK_REFUSED(launch_probe("/", plan, {"read", "/etc/hostname"}), "${CWD}", "'/'", "system root",
                "templates_may_resolve_to_system_roots");
  const Run dry = dry_run("/", plan);
  INFO("dry-run stdout: ", dry.out);
  CHECK(dry.exit_code == 125);
  CHECK(contains(dry.out, "would be refused"));
  CHECK(contains(dry.out, "system root"));

  SUBCASE("control: launched from a temp dir it runs") {
    CHECK_RUN(launch_probe(dir.path(), plan, {"write", dir / "written"}), 0, "OK\n");
    CHECK(dry_run(dir.path(), plan).exit_code == 0);
  }
}

// The opt-in, exercised with a read rule only: ${CWD} = / then grants
// reading everything, which /etc/hostname (in no other rule) shows.
TEST_CASE("attack paths: templates_may_resolve_to_system_roots lets a ${CWD} read rule run from /") {
  TempDir dir;
  const std::string opted_in = compile_spec(
      dir, "opted-in", fs_spec({"${CWD}"}, {}, "    templates_may_resolve_to_system_roots: true\n", false));
  const std::string plain = compile_spec(dir, "plain", fs_spec({"${CWD}"}, {}, "", false));

  CHECK_REFUSED(launch_probe("/", plain, {"read", "/etc/hostname"}), "${CWD}", "system root");
  CHECK_RUN(launch_probe("/", opted_in, {"read", "/etc/hostname"}), 0, "OK\n");
  CHECK(dry_run("/", opted_in).exit_code == 0);

  SUBCASE("control: from a temp dir, /etc/hostname is in no rule") {
    CHECK_RUN(launch_probe(dir.path(), opted_in, {"read", "/etc/hostname"}), 1, "EACCES\n");
  }
}

TEST_CASE("attack paths: ${HOME} that is a link to / is refused") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "home", fs_spec({"${HOME}"}, {}, "", false));
  symlink_to("/", dir / "root-link");
  CHECK_REFUSED(launch_probe(dir.path(), plan, {"read", "/etc/hostname"}, {"HOME=" + dir / "root-link"}), "${HOME}",
                "'/'", "system root");
  CHECK_REFUSED(launch_probe(dir.path(), plan, {"read", "/etc/hostname"}, {"HOME=/"}), "${HOME}", "system root");

  SUBCASE("control: HOME at a temp dir runs") {
    make_dir(dir / "home");
    write_file(dir / "home/file", "mine\n");
    CHECK_RUN(launch_probe(dir.path(), plan, {"read", dir / "home/file"}, {"HOME=" + dir / "home"}), 0, "OK\n");
    CHECK_RUN(launch_probe(dir.path(), plan, {"read", "/etc/hostname"}, {"HOME=" + dir / "home"}), 1, "EACCES\n");
  }
}

// ---------------------------------------------------------------- blocking paths

TEST_CASE("attack paths: a FIFO as the plan path is refused with 125 at once") {
  TempDir dir;
  const std::string fifo = dir / "plan.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // The unfixed launcher waited in open() for a writer: the timeout kills it.
  CHECK_REFUSED(launch_probe(dir.path(), fifo, {"exit", "0"}), fifo, "FIFO");
  const Run dry = dry_run(dir.path(), fifo);
  CHECK(dry.signal == 0);
  CHECK(dry.exit_code == 125);
  CHECK(contains(dry.out, "FIFO"));

  SUBCASE("control: a compiled plan at a regular file runs") {
    const std::string plan = compile_spec(dir, "plan", fs_spec({}, {}));
    CHECK_RUN(launch_probe(dir.path(), plan, {"exit", "0"}), 0, "");
  }
}

// Not a fix: the receipt is written to a new temp file and renamed over the
// path, so a FIFO there cannot hold the launcher after the run.
TEST_CASE("attack paths: a FIFO as the --receipt path is replaced, not opened") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "plan", fs_spec({}, {}));
  const std::string fifo = dir / "receipt.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  CHECK_RUN(launch_probe(dir.path(), plan, {"exit", "0"}, {}, {"--receipt", fifo}), 0, "");
  struct stat st {};
  REQUIRE(::lstat(fifo.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK(contains(read_file(fifo), "\"outcome\""));
}

// rename(2) over a device replaces the node: `--receipt /dev/null` as root
// would have turned the host's /dev/null into a file. A character device is
// written in place (here a null device of the test's own).
TEST_CASE("attack paths: a character device as the --receipt path is written in place, not replaced") {
  TempDir dir;
  const std::string plan = compile_spec(dir, "plan", fs_spec({}, {}));
  const std::string device = dir / "null";
  REQUIRE(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  CHECK_RUN(launch_probe(dir.path(), plan, {"exit", "0"}, {}, {"--receipt", device}), 0, "");
  struct stat st {};
  REQUIRE(::lstat(device.c_str(), &st) == 0);
  CHECK(S_ISCHR(st.st_mode));

  SUBCASE("control: a regular file there is replaced by the receipt") {
    const std::string file = dir / "receipt.json";
    write_file(file, "old");
    CHECK_RUN(launch_probe(dir.path(), plan, {"exit", "0"}, {}, {"--receipt", file}), 0, "");
    CHECK(contains(read_file(file), "\"outcome\""));
  }
}
