#include "bwrap_exec.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/real_path.h"
#include "kernel/mount_view.h"
#include "kernel/namespaces.h"
#include "supervisor/path_binding.h"

namespace aasm::bwrap {
namespace {

// A template argument on this host; a system root where the plan binds it
// is refused (a writable ${CWD} started from / would be the whole host).
Result<std::string> resolve(const plan::BwrapArg& arg, const LaunchContext& context) {
  const plan::PathBase base = arg.kind == plan::BwrapArgKind::kCwd ? plan::PathBase::kCwd : plan::PathBase::kHome;
  auto path = expand_rule_path(plan::LandlockRule{0, base, 0, arg.text}, context);
  if (!path) return path.error();
  const std::string real = real_path(*path);
  if (!real.empty() && is_system_root(real))
    return make_error(std::string("bwrap: the plan binds ") + variable_name(base) + arg.text + ", which is " + real +
                      " here, a system root; run from the project's directory");
  return std::move(*path);
}

// The host root's links (/bin -> usr/bin) into the trees the arguments
// bind, as the filesystem view adds them (kernel/mount_view.h).
void add_root_links(const std::vector<std::string>& args, std::vector<std::string>& out) {
  mount_view::Spec spec;
  for (size_t i = 0; i + 2 < args.size(); ++i)
    if (args[i].find("bind") != std::string::npos && !args[i + 1].empty() && args[i + 1][0] == '/') {
      if (args[i + 1] == "/") return;  // the host's root itself, its links with it
      const std::string real = real_path(args[i + 1]);
      spec.trees.push_back({real.empty() ? args[i + 1] : real, "", 0, true});
      i += 2;
    }
  mount_view::add_root_symlinks(spec);
  for (const mount_view::Symlink& link : spec.symlinks) {
    out.push_back("--symlink");
    out.push_back(link.target);
    out.push_back(link.view_path);
  }
}

Result<int> program_descriptor(const seccomp::PreparedFilter& filter) {
  const int fd = ::memfd_create("aasm-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return make_error(std::string("bwrap: memfd_create: ") + std::strerror(errno));
  const size_t size = filter.instructions.size() * sizeof(sock_filter);
  // Sealed once written: whoever holds the descriptor can read the program, not change it.
  const bool written = ::write(fd, filter.instructions.data(), size) == ssize_t(size) && ::lseek(fd, 0, SEEK_SET) == 0 &&
                       ::fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) == 0;
  if (!written) {
    const int error = errno;
    ::close(fd);
    return make_error(std::string("bwrap: writing a seccomp program to its descriptor: ") + std::strerror(error));
  }
  return fd;
}

}  // namespace

std::string probe(const std::string& path, uid_t uid, gid_t gid) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
    return "bwrap: " + path + " is not an executable file here (" + std::strerror(errno ? errno : ENOEXEC) +
           "); install bubblewrap (Debian's package bubblewrap) or give its path with --bwrap PATH";
  if (st.st_mode & S_ISUID)
    return "bwrap: " + path + " is setuid; a setuid bwrap runs its setup with its owner's privileges, outside "
           "what the plan confines; use a bwrap without the setuid bit (chmod u-s, or Debian's bubblewrap, which has "
           "none) where the host allows user namespaces";
  if (int error = namespaces::try_user_namespace(uid, gid)) {
    std::string message = "bwrap: user namespaces: this host refused one (" + std::string(std::strerror(error)) +
                          "), and bwrap --unshare-user needs one";
    const std::string setting = namespaces::user_namespace_restriction();
    if (!setting.empty()) message += " (" + setting + ")";
    return message + "; " + namespaces::kUserNamespaceSettings + " (root needs one too: bwrap makes its namespaces in it)";
  }
  return "";
}

Result<Exec> prepare(const plan::Plan& plan, const std::vector<seccomp::PreparedFilter>& filters,
                     const std::vector<std::string>& command, const std::string& bwrap_path) {
  Result<LaunchContext> context = current_launch_context();
  if (!context) return context.error();
  Exec exec;
  exec.path = bwrap_path;
  exec.args.push_back(bwrap_path);
  for (const plan::BwrapArg& arg : plan.bwrap->args) {
    switch (arg.kind) {
      case plan::BwrapArgKind::kLiteral: exec.args.push_back(arg.text); break;
      case plan::BwrapArgKind::kCwd:
      case plan::BwrapArgKind::kHome: {
        auto path = resolve(arg, *context);
        if (!path) return path.error();
        exec.args.push_back(std::move(*path));
        break;
      }
      case plan::BwrapArgKind::kRootLinks: {
        std::vector<std::string> links;
        add_root_links(exec.args, links);
        exec.args.insert(exec.args.end(), links.begin(), links.end());
        break;
      }
      case plan::BwrapArgKind::kSeccomp:
        for (const seccomp::PreparedFilter& filter : filters) {
          auto fd = program_descriptor(filter);
          if (!fd) return fd.error();
          exec.seccomp_fds.push_back(*fd);
          exec.args.push_back("--add-seccomp-fd");
          exec.args.push_back(std::to_string(*fd));
        }
        break;
    }
  }
  exec.args.push_back("--");
  exec.args.insert(exec.args.end(), command.begin(), command.end());
  for (std::string& arg : exec.args) exec.argv.push_back(arg.data());
  exec.argv.push_back(nullptr);
  return exec;
}

}  // namespace aasm::bwrap
