#include "profile_plan.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/directories.h"
#include "crypto/file_digest.h"
#include "plan/plan.h"

extern char** environ;

namespace aasm {
namespace {

Error profile_error(const std::string& name, const std::string& why) {
  return make_error("profile " + name + ": " + why);
}

// A shipped profile is named, never given by path: the cache and its key are
// for the files the installation ships. A policy of one's own is compiled
// with aasmc and given as PLAN, so one option never means two things.
bool is_profile_name(const std::string& name) {
  if (name.empty() || name[0] == '.' || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
}

// The directory of this aasm-launch: an installation's PREFIX/bin.
std::string own_directory() {
  char buffer[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (n <= 0) return "";
  const std::string self(buffer, size_t(n));
  return self.substr(0, self.rfind('/'));
}

// `variable` where it is an absolute path (a build tree's, as the tests
// set it), else the installation's file beside the launcher.
std::string installed_path(const char* variable, const std::string& beside) {
  const char* value = std::getenv(variable);
  if (value && value[0] == '/') return value;
  return own_directory() + "/" + beside;
}

std::string shipped_names(const std::string& directory) {
  std::vector<std::string> names;
  if (DIR* dir = ::opendir(directory.c_str())) {
    while (const dirent* entry = ::readdir(dir)) {
      const std::string file = entry->d_name;
      if (file.size() > 5 && file.ends_with(".yaml")) names.push_back(file.substr(0, file.size() - 5));
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none found" : text;
}

// Runs aasmc with `args`; its stdout goes to `out` when given, else to the
// launcher's stderr (the launcher's stdout is the command's). Ok only when
// it exits 0; its own diagnostics are on stderr already.
Status run_aasmc(const std::string& aasmc, std::vector<std::string> args, std::string* out) {
  int pipe_fds[2] = {-1, -1};
  if (out && ::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out ? pipe_fds[1] : STDERR_FILENO, STDOUT_FILENO);
  args.insert(args.begin(), aasmc);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = ::posix_spawn(&pid, aasmc.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (out) {
    ::close(pipe_fds[1]);
    char buffer[512];
    ssize_t n;
    while (spawned == 0 && ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR)))
      if (n > 0) out->append(buffer, size_t(n));
    ::close(pipe_fds[0]);
  }
  if (spawned != 0)
    return make_error("cannot run the compiler '" + aasmc + "': " + std::strerror(spawned) +
                      "; install aasmc beside aasm-launch, or set AASMC to its absolute path");
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Ok{};
  return make_error("'" + aasmc + " " + args[1] + "' failed (" +
                    (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                       : "killed by " + std::string(strsignal(WTERMSIG(status)))) + ")");
}

// $XDG_CACHE_HOME/aasm/plans, else ~/.cache/aasm/plans.
Result<std::string> cache_directory() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache && cache[0] == '/') return std::string(cache) + "/aasm/plans";
  const char* home = std::getenv("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/aasm/plans";
  return make_error("no place for the plan cache (XDG_CACHE_HOME and HOME unset or relative); set XDG_CACHE_HOME");
}

// A directory only this user may change: whoever else could write it could
// put a plan of their choosing under a name this launcher trusts.
Status check_private(const std::string& directory) {
  struct stat st {};
  if (::lstat(directory.c_str(), &st) != 0) return make_error("cannot stat '" + directory + "': " + std::strerror(errno));
  std::string why;
  if (!S_ISDIR(st.st_mode)) why = "is not a directory (a symbolic link is refused too)";
  else if (st.st_uid != ::geteuid()) why = "is not owned by this user";
  else if (st.st_mode & 022) why = "is writable by others (chmod 700 it)";
  if (why.empty()) return Ok{};
  return make_error("the plan cache '" + directory + "' " + why + "; or set XDG_CACHE_HOME to a directory of your own");
}

Result<std::string> private_cache_directory() {
  Result<std::string> plans = cache_directory();
  if (!plans) return plans;
  if (Status made = make_private_directories(*plans); !made)
    return make_error("the plan cache: " + made.error().message + "; set XDG_CACHE_HOME to a directory of your own");
  for (const std::string& dir : {plans->substr(0, plans->rfind('/')), *plans})
    if (Status ok = check_private(dir); !ok) return ok.error();
  return plans;
}

// The cache key: the compiler's version line, the profile's path (the plan
// records it in its provenance) and the SHA-256 of the profile's bytes. A
// changed profile or another compiler version is another plan.
Result<std::string> cache_key(const std::string& aasmc, const std::string& profile) {
  const int fd = ::open(profile.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return make_error("cannot open '" + profile + "': " + std::strerror(errno), errno);
  const Result<FileDigest> digest = sha256_of_descriptor(fd);
  ::close(fd);
  if (!digest) return make_error("cannot read '" + profile + "': " + digest.error().message);
  std::string version;
  if (Status ran = run_aasmc(aasmc, {"--version"}, &version); !ran) return ran.error();
  const std::string key = version + '\0' + profile + '\0' + to_hex(digest->sha256);
  return to_hex(sha256({reinterpret_cast<const uint8_t*>(key.data()), key.size()}));
}

// The plan at `path`, with every check of the reader (its digest first).
Result<Sha256Digest> verified_identity(const std::string& path) {
  Result<std::vector<uint8_t>> bytes = plan::read_plan_file(path);
  if (!bytes) return bytes.error();
  if (auto decoded = plan::decode_plan(*bytes, plan::Decode::kDeferProvenance); !decoded) return decoded.error();
  return plan::plan_digest(*bytes);
}

}  // namespace

Result<ProfilePlan> profile_plan(const std::string& name) {
  const std::string profiles = installed_path("AASM_PROFILES", "../share/aasm/profiles");
  if (!is_profile_name(name))
    return profile_error(name, "--profile takes the name of a shipped profile (" + shipped_names(profiles) +
                                   "), not a path; compile a policy of your own with `aasmc compile FILE -o PLAN` and give PLAN");
  const std::string aasmc = installed_path("AASMC", "aasmc");
  const std::string profile = profiles + "/" + name + ".yaml";
  Result<std::string> key = cache_key(aasmc, profile);
  if (!key && key.error().code == ENOENT)
    return profile_error(name, "no such shipped profile in " + profiles + " (shipped: " + shipped_names(profiles) + ")");
  if (!key) return profile_error(name, key.error().message);
  Result<std::string> cache = private_cache_directory();
  if (!cache) return profile_error(name, cache.error().message);
  const std::string plan = *cache + "/" + name + "." + *key + ".plan";
  // aasmc writes PLAN.tmp.XXXXXX and renames it over PLAN when complete, so
  // two first runs each write a whole plan and either one's rename wins.
  struct stat st {};
  const bool cached = ::lstat(plan.c_str(), &st) == 0;
  if (!cached) {
    if (Status compiled = run_aasmc(aasmc, {"compile", profile, "-o", plan}, nullptr); !compiled)
      return profile_error(name, compiled.error().message);
  }
  Result<Sha256Digest> identity = verified_identity(plan);
  if (!identity)
    return profile_error(name, "the cached plan is refused: " + identity.error().message +
                                   "; it changed after aasmc wrote it: remove it (rm " + plan + ") to recompile");
  std::fprintf(stderr, "aasm-launch: profile %s: plan %s (%s; %s)\n", name.c_str(), plan::identity_text(*identity).c_str(),
               plan.c_str(), cached ? "cached" : "compiled now");
  return ProfilePlan{plan, *identity};
}

}  // namespace aasm
