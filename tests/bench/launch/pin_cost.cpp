// The cost of pinned files (filesystem.pinned; docs/benchmarks.md, "The cost
// of pinned files"): what the launcher pays per pinned MiB before the command
// starts. Two measurements, interleaved in rounds, medians:
//   - the hashing itself: sha256_of_descriptor (the one function both aasmc
//     and aasm-launch call) over files of 1, 16 and 64 MiB in the page cache,
//     against the same reads (pread, 1 MiB at a time) without the hash, so
//     the split between reading and hashing shows: ms per MiB of each;
//   - a whole launch (with --aasmc and --aasm-launch): `aasm-launch PLAN --
//     /bin/true` with no pin against the same plan pinning a 64 MiB file:
//     the added ms, and that over 64, per MiB.
//
//   bench-pin-cost [--aasmc AASMC --aasm-launch AASM_LAUNCH] [--rounds N]
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "crypto/file_digest.h"
#include "timing.h"

namespace {

using aasm::bench::now_ms;
using aasm::bench::quantile;

constexpr size_t kMiB = 1u << 20;

std::string make_file(const std::string& dir, size_t mib) {
  const std::string path = dir + "/pinned-" + std::to_string(mib) + "MiB";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  std::vector<uint8_t> block(kMiB);
  for (size_t i = 0; i < block.size(); ++i) block[i] = uint8_t(i * 2654435761u >> 24);
  for (size_t i = 0; i < mib; ++i) {
    block[0] = uint8_t(i);
    if (::write(fd, block.data(), block.size()) != ssize_t(block.size())) std::exit(2);
  }
  ::close(fd);
  return path;
}

double time_hash(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const double start = now_ms();
  auto digest = aasm::sha256_of_descriptor(fd);
  const double took = now_ms() - start;
  ::close(fd);
  if (!digest) std::exit(2);
  return took;
}

double time_read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  std::vector<uint8_t> buffer(kMiB);
  const double start = now_ms();
  off_t at = 0;
  for (ssize_t n; (n = ::pread(fd, buffer.data(), buffer.size(), at)) > 0;) at += n;
  const double took = now_ms() - start;
  ::close(fd);
  return took;
}

int run_quiet(const std::vector<std::string>& argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::string compile(const std::string& aasmc, const std::string& dir, const std::string& name, const std::string& pinned) {
  const std::string policy = dir + "/" + name + ".yaml", plan = dir + "/" + name + ".bin";
  FILE* out = std::fopen(policy.c_str(), "w");
  std::fprintf(out,
               "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: %s, tier: agent}\nspec:\n"
               "  filesystem:\n    read: {allow: [\"/usr\", \"/etc\"]}\n    write: {allow: []}\n"
               "    execute: {allow: [\"/usr\"]}\n%s",
               name.c_str(), pinned.empty() ? "" : ("    pinned: [\"" + pinned + "\"]\n").c_str());
  std::fclose(out);
  if (run_quiet({aasmc, "compile", policy, "-o", plan}) != 0) {
    std::fprintf(stderr, "cannot compile %s\n", policy.c_str());
    std::exit(2);
  }
  return plan;
}

}  // namespace

int main(int argc, char** argv) {
  std::string aasmc, launcher;
  int rounds = 21;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--aasmc")) aasmc = argv[i + 1];
    else if (!std::strcmp(argv[i], "--aasm-launch")) launcher = argv[i + 1];
    else if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
  }
  char dir_template[] = "/var/tmp/aasm-pin-cost-XXXXXX";
  const std::string dir = ::mkdtemp(dir_template);
  const std::vector<size_t> sizes = {1, 16, 64};
  std::map<size_t, std::string> files;
  for (size_t mib : sizes) files[mib] = make_file(dir, mib);
  std::map<size_t, std::vector<double>> hashed, read;
  for (int r = 0; r < rounds; ++r)
    for (size_t mib : sizes) {
      hashed[mib].push_back(time_hash(files[mib]));
      read[mib].push_back(time_read(files[mib]));
    }
  std::printf("hashing a pinned file (sha256_of_descriptor), page cache warm, %d rounds, medians:\n", rounds);
  std::printf("  %6s %12s %12s %14s %14s %10s\n", "MiB", "hash ms", "read ms", "hash ms/MiB", "read ms/MiB", "MiB/s");
  for (size_t mib : sizes) {
    const double h = quantile(hashed[mib], 0.5), rd = quantile(read[mib], 0.5);
    std::printf("  %6zu %12.2f %12.2f %14.3f %14.3f %10.0f\n", mib, h, rd, h / double(mib), rd / double(mib),
                double(mib) / (h / 1e3));
  }
  if (!aasmc.empty() && !launcher.empty()) {
    const std::string bare = compile(aasmc, dir, "no-pin", "");
    const std::string pinned = compile(aasmc, dir, "pin-64", files[64]);
    std::vector<double> without, with;
    for (int r = 0; r < rounds; ++r)
      for (int k = 0; k < 5; ++k) {
        double start = now_ms();
        if (run_quiet({launcher, bare, "--", "/bin/true"}) != 0) std::exit(2);
        without.push_back(now_ms() - start);
        start = now_ms();
        if (run_quiet({launcher, pinned, "--", "/bin/true"}) != 0) std::exit(2);
        with.push_back(now_ms() - start);
      }
    const double a = quantile(without, 0.5), b = quantile(with, 0.5);
    std::printf("aasm-launch PLAN -- /bin/true, %zu launches each, interleaved, medians:\n", without.size());
    std::printf("  no pin %.2f ms, one 64 MiB pin %.2f ms: +%.2f ms, %.3f ms per pinned MiB (ratio %.2f)\n", a, b, b - a,
                (b - a) / 64.0, b / a);
  }
  for (size_t mib : sizes) ::unlink(files[mib].c_str());
  for (const char* name : {"no-pin.yaml", "no-pin.bin", "pin-64.yaml", "pin-64.bin"}) ::unlink((dir + "/" + name).c_str());
  ::rmdir(dir.c_str());
  return 0;
}
