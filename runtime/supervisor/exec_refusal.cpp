#include "supervisor/exec_refusal.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "base/real_path.h"
#include "kernel/landlock_uapi.h"

namespace aasm {
namespace {

// Reads exactly `size` bytes at `offset`.
bool read_at(int fd, void* out, size_t size, uint64_t offset) {
  return ::pread(fd, out, size, off_t(offset)) == ssize_t(size);
}

// PT_INTERP of an ELF file of either class; "" when it has none.
template <typename Ehdr, typename Phdr>
std::string elf_interpreter(int fd) {
  Ehdr header;
  if (!read_at(fd, &header, sizeof header, 0) || header.e_phentsize != sizeof(Phdr)) return "";
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Phdr program;
    if (!read_at(fd, &program, sizeof program, header.e_phoff + uint64_t(i) * sizeof program)) return "";
    if (program.p_type != PT_INTERP) continue;
    if (program.p_filesz == 0 || program.p_filesz > PATH_MAX) return "";
    std::string path(size_t(program.p_filesz), '\0');
    if (!read_at(fd, path.data(), path.size(), program.p_offset)) return "";
    return path.substr(0, path.find('\0'));
  }
  return "";
}

// The program of a #! line: its first word (the kernel reads at most the
// first 256 bytes, BINPRM_BUF_SIZE).
std::string script_interpreter(int fd) {
  char line[256] = {};
  const ssize_t got = ::pread(fd, line, sizeof line - 1, 0);
  if (got < 3 || line[0] != '#' || line[1] != '!') return "";
  std::string text(line + 2, size_t(got - 2));
  text = text.substr(0, text.find('\n'));
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find_first_of(" \t", start) - start);
}

// Whether a rule granting `execute` is bound to `path` or a directory above
// it: Landlock's rules apply to the file hierarchy beneath their file, found
// here by identity as the ruleset found them.
bool execute_granted(const std::string& path, const std::vector<BoundPath>& granted) {
  std::string at = path;
  while (true) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0) {
      const FileIdentity identity{uint64_t(st.st_dev), uint64_t(st.st_ino)};
      if (std::any_of(granted.begin(), granted.end(), [&](const BoundPath& b) {
            return b.identity == identity && (b.access & landlock::fs::kExecute);
          }))
        return true;
    }
    if (at == "/") return false;
    const size_t slash = at.find_last_of('/');
    at = slash == 0 ? "/" : at.substr(0, slash);
  }
}

}  // namespace

std::string exec_interpreter(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  unsigned char ident[EI_NIDENT] = {};
  std::string interpreter;
  if (read_at(fd, ident, sizeof ident, 0) && std::memcmp(ident, ELFMAG, SELFMAG) == 0)
    interpreter = ident[EI_CLASS] == ELFCLASS64 ? elf_interpreter<Elf64_Ehdr, Elf64_Phdr>(fd)
                  : ident[EI_CLASS] == ELFCLASS32 ? elf_interpreter<Elf32_Ehdr, Elf32_Phdr>(fd)
                                                  : "";
  else
    interpreter = script_interpreter(fd);
  ::close(fd);
  return interpreter;
}

std::optional<denials::Denial> exec_refusal(const std::string& executable, const std::vector<BoundPath>& granted) {
  std::vector<std::pair<std::string, std::string>> files = {{executable, ""}};  // path, what it is to the command
  if (const std::string interpreter = exec_interpreter(executable); !interpreter.empty())
    files.push_back({interpreter, "the interpreter of " + executable + " (" + interpreter + ")"});
  for (const auto& [path, role] : files) {
    const std::string real = real_path(path);
    if (real.empty() || execute_granted(real, granted)) continue;
    denials::Denial d;
    d.layer = denials::Layer::kLandlockFs;
    d.witness = denials::Witness::kLauncher;
    d.syscall = SYS_execve;
    d.error = EACCES;
    d.rights = landlock::fs::kExecute;
    d.path = real;
    d.arguments = role;
    return d;
  }
  return std::nullopt;
}

}  // namespace aasm
