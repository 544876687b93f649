// The OCI export under the real runc (issue 17, docs/backends.md): a bundle
// whose root is empty but for the host's /usr bound read-only and the
// probe's build directory, run by `runc run` with the profile `aasmc export
// --format oci` wrote as its linux.seccomp. An allowed call works, a denied
// one and one an argument rule refuses get the policy's errno; the same
// probes under an allow-everything profile get the kernel's own answers
// (the control). runc runs with cgroupfs (--systemd-cgroup=false) in a
// cgroup beneath this test's own (a relative cgroupsPath), under a state
// directory of the test's own, with a container id of its own, and is
// always deleted after. Skipped, saying so, where runc is not installed
// (./run deps installs it).
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>

#include "harness.h"

namespace aasm::ktest {
namespace {

using Json = nlohmann::json;

std::string find_runc() {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/usr/bin:/sbin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::string candidate = path.substr(start, end - start) + "/runc";
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// A bundle: config.json from runc's own defaults (`runc spec`), made
// non-interactive, its root a read-only directory of symlinks into /usr.
class Bundle {
 public:
  Bundle(const std::string& runc, const TempDir& dir) : runc_(runc), dir_(dir.path() + "/bundle") {
    static std::atomic<int> counter{0};
    id_ = "aasm-oci-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    make_dir(dir_);
    make_dir(dir_ + "/rootfs");
    for (const char* sub : {"usr", "proc", "dev", "sys", "tmp", "probe", "etc"}) make_dir(dir_ + "/rootfs/" + sub);
    for (const char* link : {"bin", "lib", "lib64", "sbin"})
      REQUIRE(::symlink((std::string("usr/") + link).c_str(), (dir_ + "/rootfs/" + link).c_str()) == 0);
    const Run spec = run({runc_, "spec"}, dir_);
    REQUIRE_MESSAGE(spec.exit_code == 0, spec.err);
    config_ = Json::parse(read_file(dir_ + "/config.json"));
    config_["process"]["terminal"] = false;
    config_["root"] = {{"path", "rootfs"}, {"readonly", true}};
    Json mounts = Json::array();
    for (const Json& m : config_["mounts"])
      if (m["destination"] != "/sys/fs/cgroup") mounts.push_back(m);
    const Json bind_options = {"rbind", "ro", "nosuid", "nodev"};
    mounts.push_back({{"destination", "/usr"}, {"type", "bind"}, {"source", "/usr"}, {"options", bind_options}});
    mounts.push_back(
        {{"destination", "/probe"}, {"type", "bind"}, {"source", probe_dir()}, {"options", bind_options}});
    config_["mounts"] = mounts;
    config_["linux"]["cgroupsPath"] = id_;  // relative: beneath runc's own cgroup, so this test's
  }
  ~Bundle() { run({runc_, "--root", dir_ + "/state", "delete", "-f", id_}); }

  // The probe with ARGS in the container under `seccomp`: its stdout line.
  Run probe(const Json& seccomp, const std::vector<std::string>& args) {
    config_["linux"]["seccomp"] = seccomp;
    std::vector<std::string> argv{"/probe/aasm-probe"};
    argv.insert(argv.end(), args.begin(), args.end());
    config_["process"]["args"] = argv;
    write_file(dir_ + "/config.json", config_.dump(1));
    const Run r = run({"/usr/bin/timeout", "60", runc_, "--root", dir_ + "/state", "--systemd-cgroup=false", "run", id_}, dir_);
    run({runc_, "--root", dir_ + "/state", "delete", "-f", id_});
    return r;
  }

 private:
  std::string runc_, dir_, id_;
  Json config_;
};

const char* kPolicy =
    "apiVersion: aasm.dev/v1\n"
    "kind: Policy\n"
    "metadata: {name: oci-runc, tier: org}\n"
    "spec:\n"
    "  syscalls:\n"
    "    deny: [getppid]\n"
    "    rules:\n"
    "      - {syscall: ioctl, when: \"request == TIOCSTI\", action: \"errno:EACCES\"}\n";

Json exported(const TempDir& dir, const std::string& policy_file) {
  const Run r = run({binary("AASMC"), "export", "--format", "oci", "--arch", "x86_64", policy_file, "-o",
                     "profile.json"},
                    dir.path());
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return Json::parse(read_file(dir / "profile.json"));
}

Json exported(const TempDir& dir, const char* policy) {
  write_file(dir / "policy.yaml", policy);
  return exported(dir, dir / "policy.yaml");
}

// runc's path, or "" when the test is skipped here (said why).
std::string runc_for_test() {
#if !defined(__x86_64__)
  MESSAGE("skipped: the bundle test exports for x86_64");
  return "";
#else
  const std::string runc = find_runc();
  if (runc.empty()) MESSAGE("skipped: runc is not installed (./run deps installs it)");
  return runc;
#endif
}

TEST_CASE("oci export: runc enforces the exported profile; the allow-everything profile is the control") {
  const std::string runc = runc_for_test();
  if (runc.empty()) return;
  TempDir dir;
  const Json profile = exported(dir, kPolicy);
  const Json allow_all = {{"defaultAction", "SCMP_ACT_ALLOW"}, {"architectures", {"SCMP_ARCH_X86_64"}},
                          {"syscalls", Json::array()}};
  Bundle bundle(runc, dir);
  SUBCASE("an allowed call works") {
    CHECK_RUN(bundle.probe(profile, {"ok"}), 0, "OK\n");
    // ioctl is allowed for every request but TIOCSTI: the kernel's answer on a pipe.
    CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tcgets"}), 1, "ENOTTY\n");
  }
  SUBCASE("a denied call gets the policy's errno") {
    CHECK_RUN(bundle.probe(profile, {"getppid"}), 1, "EPERM\n");
  }
  SUBCASE("an argument rule: TIOCSTI refused with its errno, with garbage in the upper half too") {
    CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tiocsti"}), 1, "EACCES\n");
    CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tiocsti-high"}), 1, "EACCES\n");
  }
  SUBCASE("control: the same probes under an allow-everything profile") {
    // The probe is pid 1 of the container's PID namespace: its parent is
    // outside it, so getppid(2) returns 0, which the probe reports as ESRCH:
    // the kernel's own answer, not the policy's EPERM.
    CHECK_RUN(bundle.probe(allow_all, {"getppid"}), 1, "ESRCH\n");
    CHECK_RUN(bundle.probe(allow_all, {"ioctl-pipe", "tiocsti"}), 1, "ENOTTY\n");
  }
}

// An allowlist (testdata/policies/docker-default.yaml, Docker's default
// profile's names with TIOCSTI and TIOCLINUX refused): ioctl is allowed
// everywhere but those requests, which the export writes as the complement
// of the rule, expanded into masked comparisons; runc's libseccomp must
// build the same answers from it.
TEST_CASE("oci export: runc enforces an allowlist profile whose allowed call a rule narrows") {
  const std::string runc = runc_for_test();
  if (runc.empty()) return;
  const char* testdata = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(testdata != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  TempDir dir;
  const Json profile = exported(dir, std::string(testdata) + "/policies/docker-default.yaml");
  Bundle bundle(runc, dir);
  CHECK_RUN(bundle.probe(profile, {"ok"}), 0, "OK\n");
  CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tcgets"}), 1, "ENOTTY\n");  // allowed: the kernel's answer
  CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tiocsti"}), 1, "EPERM\n");
  CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tioclinux"}), 1, "EPERM\n");
  CHECK_RUN(bundle.probe(profile, {"ioctl-pipe", "tiocsti-high"}), 1, "EPERM\n");
}

}  // namespace
}  // namespace aasm::ktest
