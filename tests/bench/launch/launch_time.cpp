// Launch time: the wall time of one `LAUNCHER -- /bin/true`, from before the
// harness's fork to after its waitpid, for every launcher variant,
// interleaved (each round runs every variant once, in a shuffled order), then
// the median and p95 of each, the overhead over a bare /bin/true and the
// ratios issue 6 sets as goals. Then, when strace is installed, the system
// calls of one launch of each (strace -f -c), less /bin/true's own.
// docs/benchmarks.md, "Launch time", has the commands and the numbers.
//
//   bench-launch-time --aasmc AASMC --aasm-launch AASM_LAUNCH --export-filter EXPORT
//       --reference REFERENCE_LAUNCHER --allowlist docker-default.yaml
//       --agent coding-agent.yaml --limits coding-agent-cgroup.yaml
//       [--rounds N] [--warmup N] [--no-strace] [--keep DIR]
//       [--compare LABEL=AASM_LAUNCH]... [--spaced N]
//
// The policies: testdata/policies/docker-default.yaml (the 300-syscall
// allowlist) and the coding-agent documents of tests/bench/launch. The
// harness compiles two plans from them with AASMC in a temporary directory
// (or --keep DIR, which it leaves behind): `plain` (Landlock + the allowlist)
// and `cgroup` (the same plus memory, pids and cpu ceilings), and exports the
// plain plan's seccomp programs for this host (EXPORT) for the reference
// launcher and bwrap. It installs nothing: bwrap, firejail and strace are
// looked up along $PATH, and what is missing is reported and skipped. A
// variant whose trial launch fails is reported (with its stderr) and skipped.
// --spaced N (default 21): after the rounds, N more launches of the two aasm
// variants, each after 250 ms of idling, because a lone launch pays what
// interleaved rounds can hide: caches gone cold, and, for a launcher that
// moves a process into a v1 cgroup through cgroup.procs, an RCU grace period
// unless another migration happened within about one grace period before
// (docs/benchmarks.md).
// --compare adds, per LABEL, another aasm-launch binary (a candidate build)
// with the plain and the cgroup plan, measured in the same rounds.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "timing.h"

namespace {

using aasm::bench::find_in_path;
using aasm::bench::now_ms;
using aasm::bench::quantile;

using Args = std::vector<std::string>;

struct Variant {
  std::string key;          // short name, used in the ratios
  std::string description;  // what it runs
  Args argv;
  std::vector<std::string> seccomp_fds;  // files opened as fds 10, 11, ... in the child (bwrap)
  std::vector<double> ms;
  bool enabled = true;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "bench-launch-time: %s\n", message.c_str());
  std::exit(2);
}

// fork, exec argv with stdout to /dev/null and stderr to `stderr_path`
// (or /dev/null), wait. Returns the wait status and sets *elapsed_ms.
int run(const Args& argv, const std::vector<std::string>& seccomp_fds, const char* stderr_path,
        double* elapsed_ms) {
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const double start = now_ms();
  const pid_t pid = fork();
  if (pid < 0) fail(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    const int err = stderr_path ? open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0600) : null;
    if (null < 0 || err < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(err, 2) < 0) _exit(120);
    for (size_t i = 0; i < seccomp_fds.size(); ++i) {
      const int fd = open(seccomp_fds[i].c_str(), O_RDONLY);
      if (fd < 0 || dup2(fd, int(10 + i)) < 0) _exit(121);
      if (fd != int(10 + i)) close(fd);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail(std::string("waitpid: ") + std::strerror(errno));
  *elapsed_ms = now_ms() - start;
  return status;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a preparation step (aasmc, the exporter); its stdout lines are returned.
std::vector<std::string> prepare(const Args& argv, const std::string& scratch) {
  const std::string out = scratch + "/step.out";
  const std::string err = scratch + "/step.err";
  std::string command;
  for (const std::string& a : argv) command += "'" + a + "' ";
  command += "> '" + out + "' 2> '" + err + "'";
  if (std::system(command.c_str()) != 0) fail("failed: " + command + "\n" + read_file(err));
  std::vector<std::string> lines;
  std::stringstream s(read_file(out));
  for (std::string line; std::getline(s, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string join(const Args& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// strace -c's summary: syscall -> calls, and the total.
struct Counts {
  std::map<std::string, long> calls;
  long total = 0;
};

Counts parse_strace_summary(const std::string& path) {
  Counts counts;
  std::stringstream s(read_file(path));
  for (std::string line; std::getline(s, line);) {
    std::stringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    // "% time seconds usecs/call calls [errors] syscall"
    if (f.size() < 5 || !std::isdigit(static_cast<unsigned char>(f[0][0]))) continue;
    const std::string name = f.back();
    const long calls = std::atol(f[3].c_str());
    if (name == "total") counts.total = calls;
    else counts.calls[name] += calls;
  }
  return counts;
}

}  // namespace

int main(int argc, char** argv) {
  std::string aasmc, aasm_launch, exporter, reference, docker, agent, limits, keep;
  int rounds = 301, warmup = 20, spaced = 21;
  bool strace_counts = true;
  std::vector<std::pair<std::string, std::string>> compare;  // label, aasm-launch binary
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--aasmc") aasmc = value();
    else if (a == "--aasm-launch") aasm_launch = value();
    else if (a == "--export-filter") exporter = value();
    else if (a == "--reference") reference = value();
    else if (a == "--allowlist") docker = value();
    else if (a == "--agent") agent = value();
    else if (a == "--limits") limits = value();
    else if (a == "--rounds") rounds = std::atoi(value().c_str());
    else if (a == "--warmup") warmup = std::atoi(value().c_str());
    else if (a == "--keep") keep = value();
    else if (a == "--spaced") spaced = std::atoi(value().c_str());
    else if (a == "--no-strace") strace_counts = false;
    else if (a == "--compare") {
      const std::string v = value();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) fail("--compare needs LABEL=PATH");
      compare.push_back({v.substr(0, eq), v.substr(eq + 1)});
    }
    else fail("unknown argument " + a);
  }
  if (aasmc.empty() || aasm_launch.empty() || exporter.empty() || reference.empty() || docker.empty() ||
      agent.empty() || limits.empty() || rounds < 1)
    fail("usage: bench-launch-time --aasmc P --aasm-launch P --export-filter P --reference P --allowlist F --agent F "
         "--limits F [--rounds N] [--warmup N] [--no-strace] [--keep DIR]");

  std::string scratch = keep;
  if (scratch.empty()) {
    char tmpl[] = "/tmp/bench-launch-XXXXXX";
    if (!mkdtemp(tmpl)) fail("mkdtemp");
    scratch = tmpl;
  } else {
    mkdir(scratch.c_str(), 0700);
  }
  const std::string plain_plan = scratch + "/plain.bin", cgroup_plan = scratch + "/cgroup.bin";
  prepare({aasmc, "compile", docker, agent, "-o", plain_plan}, scratch);
  prepare({aasmc, "compile", docker, agent, limits, "-o", cgroup_plan}, scratch);
  const std::vector<std::string> filters = prepare({exporter, plain_plan, scratch + "/filter"}, scratch);

  const std::string command = "/bin/true";
  std::vector<Variant> variants;
  auto add = [&](std::string key, std::string description, Args args, std::vector<std::string> fds = {}) {
    Variant v;
    v.key = std::move(key);
    v.description = std::move(description);
    v.argv = std::move(args);
    v.seccomp_fds = std::move(fds);
    variants.push_back(std::move(v));
  };
  add("bare", "bare /bin/true", {command});
  {
    Args ref{reference};
    ref.insert(ref.end(), filters.begin(), filters.end());
    ref.insert(ref.end(), {"--", command});
    add("reference", "reference launcher: 3 Landlock rules + the exported filter", ref);
    Args ns{reference, "--unshare"};
    ns.insert(ns.end(), filters.begin(), filters.end());
    ns.insert(ns.end(), {"--", command});
    add("reference+ns", "reference launcher + unshare(pid, mount, uts, ipc, net, cgroup)", ns);
  }
  add("aasm", "aasm-launch, Landlock + allowlist (no tree limits)", {aasm_launch, plain_plan, "--", command});
  add("aasm+cgroup", "aasm-launch, the same + cgroup (memory, pids, cpu)", {aasm_launch, cgroup_plan, "--", command});
  for (const auto& [label, binary] : compare) {
    add("aasm (" + label + ")", "aasm-launch (" + label + "), Landlock + allowlist", {binary, plain_plan, "--", command});
    add("aasm+cgroup (" + label + ")", "aasm-launch (" + label + ") + cgroup", {binary, cgroup_plan, "--", command});
  }
  // Diagnostics, to split aasm-launch's overhead: its process start-up alone
  // (exec, dynamic loading of libstdc++, static initialisation; prints the
  // usage), and start-up + reading, verifying and negotiating the plan (prints
  // the dry-run report), without fork or confinement.
  add("aasm --help", "diagnostic: aasm-launch --help (start-up only)", {aasm_launch, "--help"});
  add("aasm --dry-run", "diagnostic: aasm-launch --dry-run plain plan (no fork)", {aasm_launch, "--dry-run", plain_plan});

  const std::optional<std::string> bwrap = find_in_path("bwrap");
  if (bwrap) {
    const Args mounts{"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                      "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev"};
    Args seccomp;
    std::vector<std::string> fds;
    for (size_t i = 0; i < filters.size(); ++i) {
      seccomp.insert(seccomp.end(), {"--add-seccomp-fd", std::to_string(10 + i)});
      fds.push_back(filters[i]);
    }
    Args all{*bwrap, "--unshare-all", "--die-with-parent"};
    all.insert(all.end(), mounts.begin(), mounts.end());
    all.insert(all.end(), seccomp.begin(), seccomp.end());
    all.push_back(command);
    add("bwrap", "bwrap --unshare-all, binds, the exported filter", all, fds);
    Args nons{*bwrap, "--die-with-parent"};
    nons.insert(nons.end(), mounts.begin(), mounts.end());
    nons.insert(nons.end(), seccomp.begin(), seccomp.end());
    nons.push_back(command);
    add("bwrap-no-unshare", "bwrap, same without --unshare-all (its mount namespace only)", nons, fds);
  } else {
    std::printf("bwrap: not found along $PATH, its variants skipped (apt-get install bubblewrap)\n");
  }
  const std::optional<std::string> firejail = find_in_path("firejail");
  if (firejail) {
    add("firejail", "firejail --quiet --noprofile --seccomp", {*firejail, "--quiet", "--noprofile", "--seccomp", command});
  } else {
    std::printf("firejail: not found along $PATH, its variant skipped (apt-get install firejail)\n");
  }

  // A trial launch of each: a variant that cannot run here is reported and skipped.
  const std::string trial_err = scratch + "/trial.err";
  for (Variant& v : variants) {
    double ms = 0;
    const int status = run(v.argv, v.seccomp_fds, trial_err.c_str(), &ms);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::printf("%s: does not run here (wait status %d), skipped: %s\n  %s\n", v.key.c_str(), status,
                  join(v.argv).c_str(), read_file(trial_err).c_str());
      v.enabled = false;
    }
  }

  std::mt19937 shuffle_rng(6);
  std::vector<size_t> order;
  for (size_t i = 0; i < variants.size(); ++i)
    if (variants[i].enabled) order.push_back(i);
  long failures = 0;
  for (int round = 0; round < warmup + rounds; ++round) {
    std::shuffle(order.begin(), order.end(), shuffle_rng);
    for (size_t i : order) {
      double ms = 0;
      const int status = run(variants[i].argv, variants[i].seccomp_fds, nullptr, &ms);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ++failures;
        continue;
      }
      if (round >= warmup) variants[i].ms.push_back(ms);
    }
  }

  std::printf("\n%d rounds (+%d warm-up), every variant once per round in a shuffled order; %ld failed launches\n\n",
              rounds, warmup, failures);
  for (const Variant& v : variants)
    if (v.enabled) std::printf("%-17s %s\n", v.key.c_str(), join(v.argv).c_str());
  std::printf("\n| variant | median ms | p95 ms | min ms | overhead (median) ms | overhead (p95) ms |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  std::map<std::string, std::pair<double, double>> overhead;  // key -> (median, p95) over bare
  const Variant& bare = variants[0];
  if (!bare.enabled || bare.ms.empty()) fail("bare /bin/true does not run");
  const double bare_median = quantile(bare.ms, 0.5), bare_p95 = quantile(bare.ms, 0.95);
  for (const Variant& v : variants) {
    if (!v.enabled || v.ms.empty()) continue;
    const double median = quantile(v.ms, 0.5), p95 = quantile(v.ms, 0.95);
    overhead[v.key] = {median - bare_median, p95 - bare_p95};
    std::printf("| %s | %.3f | %.3f | %.3f | %+.3f | %+.3f |\n", v.description.c_str(), median, p95,
                *std::min_element(v.ms.begin(), v.ms.end()), median - bare_median, p95 - bare_p95);
  }

  std::printf("\nParts (differences of medians): ");
  auto part = [&](const char* what, const char* a, const char* b) {
    if (overhead.count(a) && overhead.count(b))
      std::printf("\n  %s: %+.3f ms", what, overhead[a].first - overhead[b].first);
  };
  part("aasm's cgroup (aasm+cgroup - aasm)", "aasm+cgroup", "aasm");
  part("namespaces at the floor (reference+ns - reference)", "reference+ns", "reference");
  part("bwrap's --unshare-all (bwrap - bwrap-no-unshare)", "bwrap", "bwrap-no-unshare");
  std::printf("\n\nGoals (overheads over bare, medians):\n");
  for (const char* aasm_key : {"aasm", "aasm+cgroup"}) {
    if (!overhead.count(aasm_key)) continue;
    const double mine = overhead[aasm_key].first;
    if (overhead.count("reference")) {
      const double gap = mine - overhead["reference"].first;
      std::printf("  %-11s - reference = %+.3f ms (goal <= 0.2 ms): %s\n", aasm_key, gap, gap <= 0.2 ? "met" : "NOT met");
    }
    for (const auto& [other, goal] : {std::pair<const char*, double>{"bwrap", 4.0}, {"firejail", 25.0}}) {
      if (!overhead.count(other)) continue;
      const double ratio = overhead[other].first / mine;
      std::printf("  %s / %-11s = %.1fx (goal >= %.0fx): %s\n", other, aasm_key, ratio, goal,
                  ratio >= goal ? "met" : "NOT met");
    }
  }

  if (spaced > 0) {
    std::vector<const Variant*> lone;
    for (const Variant& v : variants)
      if (v.enabled && (v.key == "aasm" || v.key == "aasm+cgroup")) lone.push_back(&v);
    if (lone.size() == 2) {
      std::vector<std::vector<double>> ms(2);
      for (int k = 0; k < spaced; ++k)
        for (size_t j = 0; j < 2; ++j) {
          const timespec idle{0, 250 * 1000 * 1000};
          nanosleep(&idle, nullptr);
          double t = 0;
          const int status = run(lone[j]->argv, {}, nullptr, &t);
          if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ms[j].push_back(t);
          else ++failures;
        }
      std::printf("\nSpaced launches (%d each, every launch after 250 ms idle; overhead over the bare median above):\n", spaced);
      for (size_t j = 0; j < 2; ++j)
        if (!ms[j].empty())
          std::printf("  %-11s median %.3f ms (%+.3f), p95 %.3f ms (%+.3f)\n", lone[j]->key.c_str(),
                      quantile(ms[j], 0.5), quantile(ms[j], 0.5) - bare_median, quantile(ms[j], 0.95),
                      quantile(ms[j], 0.95) - bare_median);
      if (!ms[0].empty() && !ms[1].empty())
        std::printf("  the cgroup of a lone launch (aasm+cgroup - aasm, medians): %+.3f ms\n",
                    quantile(ms[1], 0.5) - quantile(ms[0], 0.5));
    }
  }

  const std::optional<std::string> strace = find_in_path("strace");
  if (strace_counts && !strace) std::printf("\nstrace: not found along $PATH, syscall counts skipped (apt-get install strace)\n");
  if (strace_counts && strace) {
    std::printf("\nSystem calls of one launch (strace -f -c; 'own' = the variant's counts less bare /bin/true's, per call):\n\n");
    std::map<std::string, Counts> counts;
    for (const Variant& v : variants) {
      if (!v.enabled || (v.key != "bare" && v.key != "reference" && v.key != "aasm" && v.key != "aasm+cgroup")) continue;
      const std::string out = scratch + "/strace-" + v.key + ".txt";
      Args traced{*strace, "-f", "-c", "-o", out};
      traced.insert(traced.end(), v.argv.begin(), v.argv.end());
      double ms = 0;
      const int status = run(traced, v.seccomp_fds, nullptr, &ms);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::printf("%s: strace run failed (wait status %d)\n", v.key.c_str(), status);
        continue;
      }
      counts[v.key] = parse_strace_summary(out);
    }
    for (const auto& [key, c] : counts) {
      std::vector<std::pair<long, std::string>> own;
      long own_total = 0;
      for (const auto& [name, n] : c.calls) {
        const long base = key == "bare" ? 0 : (counts["bare"].calls.count(name) ? counts["bare"].calls.at(name) : 0);
        if (n - base != 0) own.push_back({n - base, name});
        own_total += n - base;
      }
      std::sort(own.rbegin(), own.rend());
      std::printf("%-12s total %ld, own %ld; top own calls:", key.c_str(), c.total, own_total);
      for (size_t i = 0; i < own.size() && i < 12; ++i) std::printf(" %s %ld%s", own[i].second.c_str(), own[i].first, i + 1 < std::min<size_t>(own.size(), 12) ? "," : "");
      std::printf("\n");
    }
  }
  if (keep.empty()) {
    const std::string cleanup = "rm -rf '" + scratch + "'";
    if (std::system(cleanup.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", scratch.c_str());
  } else {
    std::printf("\nplans, filters and strace summaries kept in %s\n", scratch.c_str());
  }
  return failures == 0 ? 0 : 1;
}
