// aasm-launch --profile NAME (docs/cli.md#aasm-launch---profile-name): the
// shipped profile compiled by the real aasmc into the user's plan cache
// (~/.cache/aasm/plans) on the first run, taken from it on the next, and
// enforced as the same profile compiled by hand is: a write outside the
// workspace is refused (ENOENT, the filesystem view has no such path) while
// the same probe outside the sandbox writes it. As root and as uid 65534,
// each with a HOME and cache of its own; a tampered cached plan, a cache
// others may write, an unknown name and a path are refused before anything
// runs.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "harness.h"

using namespace aasm::ktest;

namespace {

constexpr uid_t kNobody = 65534;

// base/ws (the launch directory, holding a copy of the probe: the view has
// only the profile's trees), base/outside, base/home (HOME, whose .cache the
// launcher creates). Owned by the user.
struct World {
  TempDir base{"/var/tmp"};  // the profile's view makes /tmp private
  const std::string ws = base / "ws";
  const std::string outside = base / "outside";
  const std::string home = base / "home";
  const std::string plans = home + "/.cache/aasm/plans";
  uid_t uid;

  explicit World(uid_t user) : uid(user) {
    ::chmod(base.path().c_str(), 0755);
    for (const std::string& d : {ws, outside, home}) make_dir(d);
    REQUIRE(run({"/bin/cp", binary("AASM_PROBE"), ws + "/aasm-probe"}).exit_code == 0);
    const std::string owner = std::to_string(uid) + ":" + std::to_string(uid);
    REQUIRE(run({"/usr/bin/chown", "-R", owner, base.path()}).exit_code == 0);
  }

  // aasm-launch LAUNCHER_ARGS -- ./aasm-probe ARGS as the world's user, from
  // ws, with XDG_CACHE_HOME unset (the default cache) and `env` added.
  Run wrapped(const std::vector<std::string>& launcher_args, const std::vector<std::string>& args,
              const std::vector<std::string>& env = {}) const {
    std::vector<std::string> argv;
    run_as(uid, argv);
    argv.insert(argv.end(), {"/usr/bin/env", "-u", "XDG_CACHE_HOME", "HOME=" + home});
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"/usr/bin/timeout", "-s", "KILL", "60", binary("AASM_LAUNCH")});
    argv.insert(argv.end(), launcher_args.begin(), launcher_args.end());
    argv.insert(argv.end(), {"--", "./aasm-probe"});
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, ws);
  }
  Run profile(const std::string& name, const std::vector<std::string>& args, const std::vector<std::string>& env = {}) const {
    return wrapped({"--profile", name}, args, env);
  }
  // The same probe, same user, no sandbox: the control.
  Run bare(const std::vector<std::string>& args) const {
    std::vector<std::string> argv;
    run_as(uid, argv);
    argv.push_back(ws + "/aasm-probe");
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, ws);
  }
  // The one plan in the cache (the test's HOME holds no other).
  std::string cached_plan() const {
    const Run ls = run({"/bin/sh", "-c", "ls " + plans + "/*.plan"});
    REQUIRE_MESSAGE(ls.exit_code == 0, ls.err);
    REQUIRE(std::count(ls.out.begin(), ls.out.end(), '\n') == 1);
    return ls.out.substr(0, ls.out.size() - 1);
  }
};

struct Stamp {
  ino_t inode;
  timespec mtime;
};
Stamp stamp_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return {st.st_ino, st.st_mtim};
}

std::string digest_of(const std::string& plan) {
  const Run d = run({binary("AASMC"), "digest", plan});
  REQUIRE(d.exit_code == 0);
  return d.out.substr(0, d.out.size() - 1);
}

void enforces_and_caches(uid_t uid) {
  World w(uid);
  const std::string outside_file = w.outside + "/x";
  const Run first = w.profile("coding-agent", {"write", outside_file});
  INFO("stderr: ", first.err);
  CHECK(first.exit_code == 1);
  CHECK(first.out == "ENOENT\n");  // the view has no such path
  CHECK_FALSE(exists(outside_file));
  const std::string plan = w.cached_plan();
  CHECK(plan.rfind(w.plans + "/coding-agent.", 0) == 0);
  CHECK(contains(first.err, "aasm-launch: profile coding-agent: plan " + digest_of(plan) + " (" + plan + "; compiled now)"));
  // The cache is the user's alone, as the launcher made it.
  for (const std::string& dir : {w.home + "/.cache", w.home + "/.cache/aasm", w.plans}) {
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK(st.st_uid == uid);
    CHECK((st.st_mode & 0777) == 0700);
  }
  const Stamp before = stamp_of(plan);

  // The second run takes the same file: not recompiled, not rewritten.
  const Run inside = w.profile("coding-agent", {"write", w.ws + "/made"});
  INFO("stderr: ", inside.err);
  CHECK_RUN(inside, 0, "OK\n");
  CHECK(contains(inside.err, "(" + plan + "; cached)"));
  const Stamp after = stamp_of(plan);
  CHECK(after.inode == before.inode);
  CHECK(after.mtime.tv_sec == before.mtime.tv_sec);
  CHECK(after.mtime.tv_nsec == before.mtime.tv_nsec);

  // The control: the same write, same user, no sandbox.
  CHECK_RUN(w.bare({"write", outside_file}), 0, "OK\n");
  CHECK(exists(outside_file));
}

}  // namespace

TEST_CASE("--profile coding-agent as root: compiled into ~/.cache/aasm/plans once, then cached; a write outside the workspace refused, bare allowed") {
  enforces_and_caches(0);
}

TEST_CASE("--profile coding-agent as uid 65534: its own cache, made 0700; the same refusal and its control") {
  enforces_and_caches(kNobody);
}

TEST_CASE("--profile: a tampered cached plan is refused, naming the file and the remedy; removed, it is recompiled") {
  World w(0);
  REQUIRE(w.profile("coding-agent", {"write", w.ws + "/first"}).exit_code == 0);
  const std::string plan = w.cached_plan();
  // One byte of the plan's body changed: its SHA-256 trailer no longer holds.
  REQUIRE(run({"/bin/sh", "-c", "printf '\\377' | dd of=" + plan + " bs=1 seek=100 conv=notrunc status=none"}).exit_code == 0);
  const Run tampered = w.profile("coding-agent", {"write", w.ws + "/second"});
  CHECK(tampered.exit_code == 125);
  CHECK(tampered.out.empty());
  CHECK(contains(tampered.err, "aasm-launch: error: profile coding-agent: the cached plan is refused: "));
  CHECK(contains(tampered.err, "SHA-256 digest mismatch"));
  CHECK(contains(tampered.err, "remove it (rm " + plan + ") to recompile"));
  CHECK_FALSE(exists(w.ws + "/second"));  // nothing ran

  REQUIRE(::unlink(plan.c_str()) == 0);
  const Run again = w.profile("coding-agent", {"write", w.ws + "/second"});
  INFO("stderr: ", again.err);
  CHECK_RUN(again, 0, "OK\n");
  CHECK(contains(again.err, "; compiled now)"));
}

TEST_CASE("--profile: a changed profile is another cache entry, compiled anew") {
  World w(0);
  const std::string profiles = w.base / "profiles";
  make_dir(profiles);
  write_file(profiles + "/coding-agent.yaml", read_file(binary("AASM_PROFILES") + "/coding-agent.yaml"));
  const std::string env = "AASM_PROFILES=" + profiles;
  const Run first = w.profile("coding-agent", {"write", w.ws + "/a"}, {env});
  INFO("stderr: ", first.err);
  REQUIRE(first.exit_code == 0);
  const std::string plan = w.cached_plan();
  write_file(profiles + "/coding-agent.yaml", read_file(profiles + "/coding-agent.yaml") + "# edited\n");
  const Run edited = w.profile("coding-agent", {"write", w.ws + "/b"}, {env});
  INFO("stderr: ", edited.err);
  CHECK_RUN(edited, 0, "OK\n");
  CHECK(contains(edited.err, "; compiled now)"));
  CHECK_FALSE(contains(edited.err, plan));
  CHECK(exists(plan));  // the old entry is left as it was
}

TEST_CASE("--profile: an unknown name lists the shipped ones, a path is refused, a missing compiler and a cache others may write are refused") {
  World w(0);
  const Run unknown = w.profile("no-such-profile", {"write", w.ws + "/x"});
  CHECK(unknown.exit_code == 125);
  CHECK(contains(unknown.err, "aasm-launch: error: profile no-such-profile: no such shipped profile in "));
  CHECK(contains(unknown.err, "(shipped: ci-build, coding-agent, "));
  CHECK(contains(unknown.err, ", replay)"));

  for (const std::string& path : {binary("AASM_PROFILES") + "/coding-agent.yaml", std::string("../coding-agent")}) {
    const Run given_path = w.profile(path, {"write", w.ws + "/x"});
    CHECK(given_path.exit_code == 125);
    CHECK(contains(given_path.err, "--profile takes the name of a shipped profile ("));
    CHECK(contains(given_path.err, "not a path; compile a policy of your own with `aasmc compile FILE -o PLAN` and give PLAN"));
  }

  const Run no_compiler = w.profile("coding-agent", {"write", w.ws + "/x"}, {"AASMC=" + w.base / "no-aasmc"});
  CHECK(no_compiler.exit_code == 125);
  CHECK(contains(no_compiler.err, "aasm-launch: error: profile coding-agent: cannot run the compiler '" + w.base / "no-aasmc" +
                                      "': No such file or directory; install aasmc beside aasm-launch, or set AASMC to its absolute path"));

  const Run both = w.wrapped({"--profile", "coding-agent", "plan.bin"}, {"write", w.ws + "/x"});
  CHECK(both.exit_code == 125);
  CHECK(contains(both.err, "aasm-launch: error: give PLAN or --profile NAME, not both"));

  REQUIRE(w.profile("coding-agent", {"write", w.ws + "/first"}).exit_code == 0);
  REQUIRE(::chmod(w.plans.c_str(), 0777) == 0);
  const Run open_cache = w.profile("coding-agent", {"write", w.ws + "/x"});
  CHECK(open_cache.exit_code == 125);
  CHECK(contains(open_cache.err, "the plan cache '" + w.plans + "' is writable by others (chmod 700 it)"));
  CHECK_FALSE(exists(w.ws + "/x"));
}

TEST_CASE("--profile: two first runs at once each launch, leaving one whole plan and no temporary file") {
  World w(0);
  const std::string one = "/usr/bin/env -u XDG_CACHE_HOME HOME=" + w.home + " " + binary("AASM_LAUNCH") +
                          " --profile coding-agent -- ./aasm-probe write ";
  const Run both = run({"/bin/sh", "-c", one + "a > a.out 2>&1 & p=$!; " + one + "b > b.out 2>&1 & q=$!; wait $p && wait $q"}, w.ws);
  INFO("a: ", read_file(w.ws + "/a.out"), "\nb: ", read_file(w.ws + "/b.out"));
  CHECK(both.exit_code == 0);
  CHECK(exists(w.ws + "/a"));
  CHECK(exists(w.ws + "/b"));
  const std::string plan = w.cached_plan();  // exactly one *.plan
  const Run left = run({"/bin/sh", "-c", "ls -A " + w.plans});
  CHECK(left.out == plan.substr(plan.rfind('/') + 1) + "\n");
}
