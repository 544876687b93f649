#include "preparation.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <tuple>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "command_path.h"
#include "base/path_tree.h"
#include "base/real_path.h"
#include "crypto/file_digest.h"
#include "exit_codes.h"
#include "self_checks.h"
#include "kernel/arch.h"
#include "kernel/bpf_interpreter.h"
#include "kernel/capabilities.h"
#include "kernel/descriptors.h"
#include "kernel/landlock_uapi.h"
#include "kernel/mount_view.h"
#include "plan/view_mounts.h"
#include "kernel/namespaces.h"
#include "kernel/raw_syscall.h"
#include "kernel/seccomp_notify.h"
#include "supervisor/egress_broker.h"
#include "supervisor/environment.h"
#include "supervisor/git_dirs.h"
#include "supervisor/listener_answers.h"
#include "supervisor/path_binding.h"

extern char** environ;

namespace aasm {
namespace {

struct Inputs {
  const LaunchRequest& request;
  const Host& host;
};

// A refusal names its control first, as --dry-run and the receipt do.
Error refusal(Control control, const std::string& why) {
  return make_error(std::string(control_name(control)) + ": " + why);
}

// A plan that confines nothing is refused (running "confined" by it would be
// a lie), and so is one without a seccomp program for this architecture.
Status check_plan_shape(Preparation& p, const Inputs&) {
  const plan::Plan& plan = p.prepared.plan;
  if (!plan.landlock && plan.seccomp.empty())
    return make_error("the plan enforces no control (no Landlock ruleset, no seccomp program)");
  if (!plan.seccomp.empty() && !plan::find_program(plan, kNativeAuditArch)) {
    // An architecture can have several programs (the main one last); each is named once.
    std::vector<uint32_t> archs;
    for (const auto& program : plan.seccomp)
      if (std::find(archs.begin(), archs.end(), program.audit_arch) == archs.end()) archs.push_back(program.audit_arch);
    std::string has;
    for (const uint32_t arch : archs) has += std::string(has.empty() ? "" : ", ") + plan::audit_arch_name(arch);
    return refusal(Control::kSyscall, std::string("the plan has no seccomp program for this host's architecture (") +
                                          plan::audit_arch_name(kNativeAuditArch) + "; it has " + has +
                                          "); recompile with --arch " + plan::audit_arch_name(kNativeAuditArch));
  }
  return Ok{};
}

// Whether this launcher may create namespaces and mount in them without a
// user namespace of its own.
bool holds_sys_admin() { return capabilities::permitted() & (uint64_t(1) << CAP_SYS_ADMIN); }

// Signals are scoped on every launch (docs/policy-language.md, spec.ipc): by
// Landlock from ABI 6; below it, by a new PID namespace, in which the
// supervisor, the janitor and the host's processes have no pid the command
// could name. Moves the scope from the ruleset to the plan's namespaces and
// returns true when that is needed and possible (CAP_SYS_ADMIN); otherwise
// the negotiation refuses the ipc control, or degrades it where allowed.
bool scope_signals_by_pid_namespace(plan::Plan& plan, const landlock::AbiProbe& probe) {
  if (!plan.landlock || !(plan.landlock->scoped & landlock::scope::kSignal) ||
      (landlock::scopes_for_abi(probe.abi) & landlock::scope::kSignal))
    return false;
  if (!holds_sys_admin()) return false;
  plan::LandlockRuleset& ruleset = *plan.landlock;
  ruleset.scoped &= ~landlock::scope::kSignal;
  for (plan::LandlockControl& control : ruleset.controls) control.scoped &= ~landlock::scope::kSignal;
  std::erase_if(ruleset.controls, [](const plan::LandlockControl& c) {
    return c.domain == plan::ControlDomain::kIpc && !c.fs && !c.net && !c.scoped;
  });
  if (!ruleset.handled_fs && !ruleset.handled_net && !ruleset.scoped) plan.landlock.reset();
  if (!plan.process) plan.process.emplace();
  plan.process->namespaces |= plan::kNamespacePid;
  return true;
}

ControlReport report_of(Control control, std::string requested, Planned planned = Planned::kRequired) {
  ControlReport c;
  c.control = control;
  c.requested = std::move(requested);
  c.planned = planned;
  return c;
}

ControlReport landlock_control(const ControlOutcome& outcome, const plan::Plan& plan) {
  const plan::LandlockControl& control = outcome.control;
  ControlReport c = report_of(control_of(control.domain), control_rights_text(control),
                              planned_of(control.flags & plan::kControlDegradable));
  c.also_by = plan::meta_value(plan, std::string("lowering.") + control_name(c.control));
  c.achievable = outcome.level;
  c.why = outcome.why;
  if (outcome.level == ControlLevel::kNotEnforced) {
    c.evidence = {Basis::kAsserted, outcome.why};  // nothing at the launch establishes it
  } else {
    c.established_by = kLandlockRestricted;
    c.stopped_before = "landlock_restrict_self";
    c.landlock = control;
  }
  return c;
}

ControlReport signals_by_pid_namespace(const landlock::AbiProbe& probe) {
  const uint32_t signal_abi = landlock::abi_floor(0, 0, landlock::scope::kSignal);
  ControlReport c = report_of(Control::kIpc, "signals scoped to the command's tree");
  c.why = "signals are scoped by a new PID namespace (Landlock ABI " + std::to_string(probe.abi) +
          " here has no signal scope; ABI " + std::to_string(signal_abi) + ", Linux " +
          kernel_for_landlock_abi(signal_abi) + ", has)";
  c.established_by = kNamespacesReady;
  c.stopped_before = "its namespaces were set up";
  c.evidence = {Basis::kMeasured,
                "the command's process was created in a new PID namespace (clone returned its pid), where no process "
                "outside its tree has a pid"};
  return c;
}

// Every Landlock control against this host's ABI: enforced, partial or not
// enforced where the plan lets the domain degrade, or refused.
Status negotiate(Preparation& p, const Inputs& in) {
  plan::Plan& plan = p.prepared.plan;
  const bool by_pid_namespace = scope_signals_by_pid_namespace(plan, in.host.landlock);
  Status status = Ok{};
  if (plan.landlock) {
    const LandlockNegotiation& negotiation =
        p.prepared.negotiation.emplace(negotiate_landlock(*plan.landlock, in.host.landlock));
    for (const ControlOutcome& outcome : negotiation.controls) p.report.controls.push_back(landlock_control(outcome, plan));
    if (negotiation.refused()) status = make_error(negotiation.refusal());
  }
  if (by_pid_namespace) p.report.controls.push_back(signals_by_pid_namespace(in.host.landlock));
  return status;
}

// Still unconfined, so the lookup sees the host as the user does.
Status find_the_command(Preparation& p, const Inputs& in) {
  auto executable = find_command(in.request.command.front());
  if (!executable) return executable.error();
  p.prepared.executable = std::move(*executable);
  return Ok{};
}

// filesystem.pinned (docs/cli.md): each pinned file opened and re-hashed
// here, before anything runs; a symbolic link is followed, as the compiler
// followed it (the pin is of the content the path reaches, and that content
// is what is checked). The command's executable, when pinned (its path or
// its inode), keeps the descriptor its content was checked through: the child
// execs that, so nothing can replace the file between check and exec.
// `command` is the command as found: its canonical path and what stat said
// of it before any pin was opened. The path decides where it names the pin
// (a file renamed over the path between that stat and the pin's open would
// otherwise look like another file and run by its path, unchecked); the
// inode covers another name of the same file.
struct CommandFile {
  std::string canonical;
  struct stat st {};
  bool found = false;
};

PinCheck check_pin(const plan::PinnedFile& pin, const CommandFile& command, int& keep_fd) {
  PinCheck check{pin, std::nullopt, "", false};
  const int fd = ::open(pin.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    check.problem = std::strerror(errno);
    return check;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    check.problem = "not a regular file";
  } else if (auto digest = sha256_of_descriptor(fd); !digest) {
    check.problem = digest.error().message;
  } else {
    check.now = *digest;
    check.executed = command.found && ((command.st.st_dev == st.st_dev && command.st.st_ino == st.st_ino) ||
                                       (!command.canonical.empty() && command.canonical == real_path(pin.path)));
  }
  if (check.executed && check.unchanged()) keep_fd = fd;
  else ::close(fd);
  return check;
}

// Whether the plan's programs for this host refuse execveat(fd, "",
// AT_EMPTY_PATH): the safe default @descriptor-exec does wherever
// filesystem.execute is confined.
bool execveat_refused(const plan::Plan& plan) {
  bpf::SeccompData data;
  data.nr = SYS_execveat;
  data.arch = kNativeAuditArch;
  data.args[4] = AT_EMPTY_PATH;
  for (const plan::SeccompProgram* program : plan::programs_for(plan, kNativeAuditArch)) {
    const auto outcome = bpf::run(program->instructions, data);
    const uint32_t action = outcome ? outcome->action & SECCOMP_RET_ACTION_FULL : 0;
    if (action != SECCOMP_RET_ALLOW && action != SECCOMP_RET_LOG) return true;
  }
  return false;
}

// Under the filesystem view the child execs a pinned command's descriptor by
// execveat or through the view's /proc/self/fd; where the plan refuses the
// first and the view has no /proc, the exec would fail with EACCES after the
// command's process exists: refused here instead, with the fix.
Status check_pinned_exec(const Prepared& prepared) {
  const plan::Plan& plan = prepared.plan;
  if (prepared.exec_fd < 0 || !plan.view || (plan.view->flags & plan::kViewProc) || !execveat_refused(plan)) return Ok{};
  return refusal(Control::kPinnedFiles,
                 "the command " + prepared.executable +
                     " is pinned, so it is exec'd from the descriptor its content was checked through; under the "
                     "filesystem view that takes execveat(AT_EMPTY_PATH), which the plan refuses (the safe default "
                     "@descriptor-exec), or the view's /proc/self/fd, and the view has no /proc: add /proc to "
                     "filesystem.read");
}

Status check_pinned_files(Preparation& p, const Inputs&) {
  Prepared& prepared = p.prepared;
  const std::vector<plan::PinnedFile>& pins = prepared.plan.pinned;
  if (pins.empty()) return Ok{};
  CommandFile command;
  if (!prepared.executable.empty() && ::stat(prepared.executable.c_str(), &command.st) == 0) {
    command.found = true;
    command.canonical = real_path(prepared.executable);
  }
  Status stale = Ok{};
  for (const plan::PinnedFile& pin : pins) {
    int fd = -1;
    PinCheck check = check_pin(pin, command, fd);
    if (fd >= 0 && prepared.exec_fd < 0) {
      prepared.exec_fd = fd;
      prepared.exec_fd_path = "/proc/self/fd/" + std::to_string(fd);
      char magic[2] = {};
      prepared.exec_fd_script = ::pread(fd, magic, 2, 0) == 2 && magic[0] == '#' && magic[1] == '!';
    } else if (fd >= 0) {
      ::close(fd);
    }
    if (stale && !check.unchanged())
      stale = refusal(Control::kPinnedFiles,
                      "stale: pinned file " + pin.path +
                          (check.now ? " changed: plan " + plan::identity_text(pin.sha256) + ", now " +
                                           plan::identity_text(check.now->sha256)
                                     : " cannot be read (" + check.problem + "): plan " +
                                           plan::identity_text(pin.sha256)) +
                          "; recompile the plan (aasmc compile) once the new content is reviewed, or restore the file");
    p.report.pins.push_back(std::move(check));
  }
  if (stale) stale = check_pinned_exec(prepared);
  ControlReport c = report_of(Control::kPinnedFiles, std::to_string(pins.size()) + (pins.size() == 1 ? " file" : " files") +
                                                         " by SHA-256");
  c.evidence = {Basis::kMeasured, prepared.exec_fd >= 0
                                      ? "every pinned file re-hashed before the command started; the command exec'd "
                                        "from the descriptor it was checked through"
                                      : "every pinned file re-hashed before the command started"};
  if (!stale) {
    c.achievable = ControlLevel::kRefused;
    c.why = stale.error().message;
  }
  p.report.controls.push_back(std::move(c));
  return stale;
}

// The paths are opened here because the child could not open them once
// confined; the denied directory too, for the self-checks.
Status bind_ruleset(Preparation& p, const Inputs& in) {
  Prepared& prepared = p.prepared;
  if (!prepared.negotiation || !prepared.negotiation->applies) return Ok{};
  const plan::LandlockRuleset& effective = prepared.negotiation->effective;
  auto context = current_launch_context();
  if (!context) return context.error();
  auto bound = bind_landlock_ruleset(effective, *context,
                                     in.request.receipt_path ? ResolvedPaths::kRecord : ResolvedPaths::kSkip);
  if (!bound) return bound.error();
  prepared.ruleset_fd = bound->ruleset_fd;
  if (effective.handled_fs & landlock::fs::kReadDir) prepared.denied_dir_fd = open_denied_directory(*bound);
  prepared.self_checks =
      plan_self_checks(effective, *bound, prepared.denied_dir_fd, plan::namespaces_of(prepared.plan));
  p.report.paths = std::move(bound->granted);
  p.report.skipped_optional = std::move(bound->skipped_optional);
  return Ok{};
}

// The filesystem view (docs/filesystem-view.md): its templates resolved as
// the ruleset's are, every host path checked and laid out by
// mount_view::prepare here, before the clone; the child only mounts.
constexpr const char* kViewOwnFilesystems[] = {"/proc", "/tmp", "/dev/shm", "/dev/pts"};

// Without CAP_SYS_ADMIN, `what` (the view's mounts, the command's own
// network) is made in a user namespace of its own, which is tried here for
// real, before anything runs: a sysctl, an AppArmor policy, a container's
// seccomp filter or an exhausted count can each forbid it, and only trying
// tells them all apart from a host that allows it. "" where the host gives
// one, else why not and the remedy.
std::string user_namespace_unavailable(const char* what) {
  if (holds_sys_admin()) return "";
  const int error = namespaces::try_user_namespace(::geteuid(), ::getegid());
  if (!error) return "";
  const std::string setting = namespaces::user_namespace_restriction();
  return std::string("without root (CAP_SYS_ADMIN) ") + what + " needs a user namespace, and this host refuses aasm-launch one (" +
         std::strerror(error) + (setting.empty() ? "" : "; " + setting) + "); " + namespaces::kUserNamespaceRemedy;
}

}  // namespace

std::string view_unavailable() {
  if (raw::syscall6(SYS_mount_setattr, -1, long(""), 0, 0, 0) == -ENOSYS)
    return "the kernel has no mount_setattr (Linux 5.12 or later is needed)";
  return user_namespace_unavailable("the view");
}

namespace {

Status add_view_trees(const plan::FilesystemView& view, const std::vector<plan::ViewMountText>& rows,
                      const LaunchContext& context, mount_view::Spec& spec, LaunchReport& report) {
  for (size_t i = 0; i < view.trees.size(); ++i) {
    const plan::ViewTree& tree = view.trees[i];
    const plan::LandlockRule as_rule{0, tree.base, 0, tree.path};
    const plan::ViewMountText& row = rows[i];
    const std::string& path_template = row.path;
    auto host_path = expand_rule_path(as_rule, context);
    if (!host_path) return refusal(Control::kFilesystemView, host_path.error().message);
    struct stat st {};
    if (::stat(host_path->c_str(), &st) != 0) {
      if (path_absent(errno) && (tree.flags & plan::kViewOptional)) {
        if (tree.flags & plan::kViewProtected) report.skipped_protected.push_back({path_template, *host_path});
        else report.skipped_optional.push_back(path_template);
        report.view.push_back({path_template, row.what, row.options, "skipped (optional, missing)"});
        continue;
      }
      return refusal(Control::kFilesystemView, path_template + " (" + *host_path + "): " + std::strerror(errno) +
                        (tree.flags & plan::kViewProtected
                             ? "; a protected path must exist to be protected: list it in filesystem.optional to skip it where it is missing"
                             : ""));
    }
    uint32_t flags = 0;
    if (tree.flags & plan::kViewWritable) flags |= mount_view::kWritable;
    if (tree.flags & plan::kViewNoExec) flags |= mount_view::kNoExec;
    if (tree.flags & plan::kViewProtected) flags |= mount_view::kProtected;
    spec.trees.push_back({*host_path, "", flags, S_ISDIR(st.st_mode)});
    report.view.push_back({path_template, row.what, row.options, "bound"});
  }
  return Ok{};
}

// The protected paths of a git directory's table (supervisor/git_dirs.h)
// name their git directory: its template, its host path and the first such
// path's flags, once per directory, in the plan's order.
struct GitDirOfPlan {
  std::string path_template;
  std::string host_path;
  uint32_t flags = 0;  // mount_view flags of its discovered paths: protected, the tree's noexec
};

Result<std::vector<GitDirOfPlan>> git_dirs_of_plan(const plan::FilesystemView& view,
                                                   const std::vector<plan::ViewMountText>& rows,
                                                   const LaunchContext& context) {
  std::vector<GitDirOfPlan> dirs;
  for (size_t i = 0; i < view.trees.size(); ++i) {
    const plan::ViewTree& tree = view.trees[i];
    const std::string& path = rows[i].path;
    if (!(tree.flags & plan::kViewProtected) || !git_dirs::is_protected_name(path.substr(path.rfind('/') + 1)))
      continue;
    auto host_path = expand_rule_path(plan::LandlockRule{0, tree.base, 0, tree.path}, context);
    if (!host_path) return refusal(Control::kFilesystemView, host_path.error().message);
    GitDirOfPlan dir{std::string(parent_of(path)), std::string(parent_of(*host_path)),
                     mount_view::kProtected | (tree.flags & plan::kViewNoExec ? mount_view::kNoExec : 0u)};
    if (std::none_of(dirs.begin(), dirs.end(), [&](const GitDirOfPlan& d) { return d.host_path == dir.host_path; }) &&
        git_dirs::is_git_directory(dir.host_path))
      dirs.push_back(std::move(dir));
  }
  return dirs;
}

// The table's names in one nested git directory: each there bound read-only
// like the plan's protected paths, each missing skipped like an optional one
// (and named at the run's end if the command creates it). A path the plan
// protects itself is left to the plan's row.
void protect_nested(const GitDirOfPlan& dir, const std::string& nested, const std::string& options,
                    mount_view::Spec& spec, LaunchReport& report) {
  for (const std::string_view name : git_dirs::names_for(nested)) {
    const std::string relative = nested + "/" + std::string(name);
    const std::string host_path = dir.host_path + "/" + relative, path_template = dir.path_template + "/" + relative;
    if (std::any_of(spec.trees.begin(), spec.trees.end(), [&](const mount_view::Tree& t) { return t.host_path == host_path; }))
      continue;
    const std::string what = "bind, protected (found at launch in the git directory " + dir.path_template + "/" +
                             nested + ": read-only over its writable tree)";
    struct stat st {};
    if (::lstat(host_path.c_str(), &st) != 0) {
      report.skipped_protected.push_back({path_template, host_path});
      report.view.push_back({path_template, what, options, "skipped (optional, missing)"});
      continue;
    }
    spec.trees.push_back({host_path, "", dir.flags, S_ISDIR(st.st_mode)});  // a link: mount_view::prepare refuses it
    report.view.push_back({path_template, what, options, "bound"});
  }
}

// Submodules' and linked worktrees' git directories (.git/modules/**,
// .git/worktrees/*), found now because only the checkout knows them, each
// protected as its superproject's is (docs/filesystem-view.md#git-directories-found-at-launch).
// A link where one could be is not followed: listed, nothing bound.
Status add_nested_git_dirs(const plan::FilesystemView& view, const std::vector<plan::ViewMountText>& rows,
                           const LaunchContext& context, mount_view::Spec& spec, LaunchReport& report) {
  auto dirs = git_dirs_of_plan(view, rows, context);
  if (!dirs) return dirs.error();
  for (const GitDirOfPlan& dir : *dirs) {
    auto found = git_dirs::find_nested(dir.host_path);
    if (!found) return refusal(Control::kFilesystemView, found.error().message);
    const std::string options = std::string("ro,nosuid,nodev") + (dir.flags & mount_view::kNoExec ? ",noexec" : "");
    for (const std::string& nested : found->git_dirs) protect_nested(dir, nested, options, spec, report);
    for (const std::string& link : found->links)
      report.view.push_back({dir.path_template + "/" + link, "where git would look for a git directory (nothing bound)", "",
                             kViewLinkNotFollowed});
    report.git_dirs.push_back({dir.path_template, dir.host_path, std::move(found->git_dirs), std::move(found->links)});
  }
  return Ok{};
}

// The evidence's tail: "; git directories found at launch, each one's hooks and config
// protected too: ...", then the links not followed.
std::string git_dirs_evidence(const LaunchReport& report) {
  std::string found, links;
  for (const LaunchReport::GitDir& dir : report.git_dirs) {
    for (const std::string& nested : dir.nested) found += " " + dir.path_template + "/" + nested + ";";
    for (const std::string& link : dir.links) links += " " + dir.path_template + "/" + link + ";";
  }
  return (found.empty() ? "" : "; git directories found at launch, each one's hooks and config protected too:" + found) +
         (links.empty() ? "" : "; symbolic links where a git directory could be, not followed (nothing bound):" + links);
}

void add_view_filesystems(const plan::FilesystemView& view, const std::vector<plan::ViewMountText>& rows,
                          mount_view::Spec& spec, LaunchReport& report) {
  spec.proc = view.flags & plan::kViewProc;
  spec.dev_pts = view.flags & plan::kViewDevPts;
  for (size_t i = 0; i < std::size(mount_view::kDevNodes); ++i)
    if (view.dev_nodes & (1u << i)) spec.dev_nodes.emplace_back(mount_view::kDevNodes[i]);
  for (const plan::ViewTmpfs& tmpfs : view.tmpfs)
    spec.tmpfs.push_back({tmpfs.path, tmpfs.max_bytes, !(tmpfs.flags & plan::kViewNoExec)});
  for (size_t i = view.trees.size(); i < rows.size(); ++i)
    report.view.push_back({rows[i].path, rows[i].what, rows[i].options, "bound"});
}

bool view_has(const plan::FilesystemView& view, const std::string& path) {
  if (path == "/proc") return view.flags & plan::kViewProc;
  if (path == "/dev/pts") return view.flags & plan::kViewDevPts;
  return std::any_of(view.tmpfs.begin(), view.tmpfs.end(), [&](const plan::ViewTmpfs& t) { return t.path == path; });
}

std::string view_requested(const plan::FilesystemView& view) {
  size_t writable = 0, protected_paths = 0;
  for (const plan::ViewTree& tree : view.trees) {
    writable += (tree.flags & plan::kViewWritable) != 0;
    protected_paths += (tree.flags & plan::kViewProtected) != 0;
  }
  return std::to_string(view.trees.size() - protected_paths) + " trees (" + std::to_string(writable) + " writable), " +
         std::to_string(protected_paths) + " protected paths, " + std::to_string(view.tmpfs.size()) + " private tmpfs" +
         (view.flags & plan::kViewProc ? ", /proc" : "");
}

// Where the view degrades: what it would have added, named as not there,
// each of its mounts listed as not built and each protected path as NOT
// protected, so neither --dry-run nor the receipt reads as if it were.
std::string without_the_view(const plan::FilesystemView& view, LaunchReport& report) {
  const std::vector<plan::ViewMountText> rows = plan::describe_view(view);  // the trees first, same index
  std::string unprotected, own;
  for (size_t i = 0; i < rows.size(); ++i) {
    const bool protects = i < view.trees.size() && (view.trees[i].flags & plan::kViewProtected);
    report.view.push_back({rows[i].path, rows[i].what, rows[i].options, protects ? kViewNotProtected : kViewNotBuilt});
    if (protects) unprotected += (unprotected.empty() ? "" : ", ") + rows[i].path;
  }
  for (const plan::ViewTmpfs& tmpfs : view.tmpfs) own += (own.empty() ? "" : ", ") + tmpfs.path;
  return "; isolation.degraded lists " + std::string(control_name(Control::kFilesystemView)) +
         ", so the command runs with Landlock alone, and what the view adds is not there: " +
         (unprotected.empty() ? "" : "NOT protected (writable wherever their tree is): " + unprotected + "; ") +
         (own.empty() ? "" : "the host's own " + own + ", shared and without a size ceiling; ") +
         "every host path visible to stat(), host processes in /proc";
}

Status prepare_view(Preparation& p, const Inputs&) {
  plan::Plan& plan = p.prepared.plan;
  if (!plan.view) return Ok{};
  const plan::FilesystemView& view = *plan.view;
  ControlReport c = report_of(Control::kFilesystemView, view_requested(view), planned_of(view.flags & plan::kViewDegradable));
  if (const std::string missing = view_unavailable(); !missing.empty()) {
    if (view.flags & plan::kViewDegradable) {
      // Without CAP_SYS_ADMIN only the user namespace that is missing could
      // have made its namespaces; with it they stay (a PID namespace may also
      // stand in for Landlock's signal scope, negotiate()).
      const bool own_namespaces_too = (view.flags & plan::kViewOwnNamespaces) && !holds_sys_admin();
      c.achievable = ControlLevel::kNotEnforced;
      c.why = missing + without_the_view(view, p.report) +
              (own_namespaces_too ? "; nor its mount and PID namespaces (the command is not PID 1)" : "");
      c.evidence = {Basis::kAsserted, c.why};
      p.report.controls.push_back(std::move(c));
      if (own_namespaces_too) plan.process->namespaces &= ~(plan::kNamespaceMount | plan::kNamespacePid);
      plan.view.reset();
      return Ok{};
    }
    c.achievable = ControlLevel::kRefused;
    c.why = missing;
    p.report.controls.push_back(std::move(c));
    return refusal(Control::kFilesystemView, missing + " (or list " + control_name(Control::kFilesystemView) +
                                                 " in isolation.degraded to run with Landlock alone where the host "
                                                 "cannot build the view)");
  }
  if (!holds_sys_admin()) plan.process->namespaces |= plan::kNamespaceUser;
  auto context = current_launch_context();
  if (!context) return context.error();
  mount_view::Spec spec;
  const std::vector<plan::ViewMountText> rows = plan::describe_view(view);
  if (Status trees = add_view_trees(view, rows, *context, spec, p.report); !trees) return trees;
  if (Status nested = add_nested_git_dirs(view, rows, *context, spec, p.report); !nested) return nested;
  add_view_filesystems(view, rows, spec, p.report);
  mount_view::add_root_symlinks(spec);
  spec.working_directory = context->cwd;
  auto prepared = mount_view::prepare(spec);
  if (!prepared) return refusal(Control::kFilesystemView, prepared.error().message);
  std::string protected_paths;
  for (const ViewMount& m : p.report.view)
    if (m.what.starts_with("bind, protected") && m.status == "bound") protected_paths += " " + m.path + ";";
  c.established_by = kViewBuilt;
  c.stopped_before = "building its filesystem view";
  c.evidence = {Basis::kMeasured, "the view was built in the child's mount namespace (" +
                                      std::to_string(prepared->steps.size()) + " steps, every one returned 0)" +
                                      (protected_paths.empty() ? std::string("")
                                                               : "; each protected path answered a write-access check "
                                                                 "with EROFS before exec:" + protected_paths) +
                                      git_dirs_evidence(p.report)};
  p.prepared.view = std::move(*prepared);
  if (p.prepared.negotiation && p.prepared.negotiation->applies)
    for (const plan::LandlockRule& rule : p.prepared.negotiation->effective.rules)
      for (const char* own : kViewOwnFilesystems)
        if (rule.base == plan::PathBase::kAbsolute && rule.path == own && view_has(view, own))
          p.prepared.view_rules.push_back({own, rule.access});
  p.report.controls.push_back(std::move(c));
  return Ok{};
}

// The programs this host installs, in order: the fallback ones only where a
// control they stand in for degraded.
std::vector<const plan::SeccompProgram*> installed_programs(const Prepared& prepared) {
  // Under bwrap no Landlock control is enforced: every fallback stands in.
  const bool fallback = prepared.plan.bwrap || (prepared.negotiation && prepared.negotiation->needs_seccomp_fallback());
  std::vector<const plan::SeccompProgram*> installed;
  for (const plan::SeccompProgram* program : plan::programs_for(prepared.plan, kNativeAuditArch))
    if (program->mode != plan::FilterMode::kFallback || fallback) installed.push_back(program);
  return installed;
}

// The programs in the kernel's layout, so the child has nothing left to
// prepare.
Status prepare_filters(Preparation& p, const Inputs&) {
  Prepared& prepared = p.prepared;
  for (const plan::SeccompProgram* program : installed_programs(prepared))
    prepared.filters.push_back(seccomp::prepare(*program));
  if (prepared.filters.empty()) return Ok{};
  ControlReport c = report_of(Control::kSyscall, std::to_string(prepared.filters.size()) + " seccomp programs for " +
                                                     plan::audit_arch_name(kNativeAuditArch));
  c.established_by = kSeccompInstalled;
  c.stopped_before = "the filters were installed";
  c.evidence = {Basis::kMeasured, "seccomp(SECCOMP_SET_MODE_FILTER) returned 0 for every program"};
  if (prepared.plan.bwrap) {  // bwrap installs them, from the descriptors it is given
    c.established_by = kBwrapExecuted;
    c.stopped_before = "it executed bwrap";
    c.evidence = {Basis::kAsserted, "bwrap --add-seccomp-fd loads every program before it executes the command"};
  }
  p.report.controls.push_back(std::move(c));
  return Ok{};
}

// Where the ruleset applied handles TCP connect, the supervisor answers a
// refused port ECONNREFUSED (supervisor/connect_answers.h): not a control
// of its own (Landlock's network controls stay the enforcement), so nothing
// in the report.
Status prepare_connect_answers(Preparation& p, const Inputs&) {
  Prepared& prepared = p.prepared;
  if (!prepared.negotiation || !prepared.negotiation->applies) return Ok{};
  prepared.connect_answers = ConnectAnswers::for_ruleset(prepared.negotiation->effective);
  if (prepared.connect_answers) prepared.connect_notifier = seccomp::notifier_for(kNativeAuditArch, SYS_connect);
  return Ok{};
}

// Whether the filters, the main program as `observing`, stay within the
// kernel's limit on a filter chain (MAX_INSNS_PER_PATH of kernel/seccomp.c:
// every filter's length plus 4), with room for the launcher's own
// (--explain's trace filter).
bool chain_fits(const std::vector<seccomp::PreparedFilter>& filters, const seccomp::PreparedFilter& observing) {
  constexpr size_t kChainLimit = (size_t(1) << 18) / sizeof(sock_filter), kLaunchersOwn = 256;
  size_t chain = kLaunchersOwn + observing.instructions.size() + 4;
  for (size_t i = 0; i + 1 < filters.size(); ++i) chain += filters[i].instructions.size() + 4;
  return chain <= kChainLimit;
}

// Why the rule programs cannot go in notifying (seccomp::notifying_rule)
// below `observing`, the main program notifying what they refuse, or ""
// when they can.
std::string rules_unobservable(const Prepared& prepared, const std::optional<seccomp::PreparedFilter>& observing) {
  // Under filters of its own (an outer sandbox's) the launcher cannot tell
  // whether one holds a listener, which would leave the main program to go
  // in as written above rules that notify nobody (launch.cpp listen_on_main).
  if (::prctl(PR_GET_SECCOMP) != 0) return "under an outer seccomp filter, whose listener would take the run's";
  if (!observing || !chain_fits(prepared.filters, *observing))
    return "the main program cannot carry copies of the rule programs within the kernel's length limits";
  return "";
}

// The main program goes in with the run's listener, its errno answers
// handed to the supervisor (supervisor/listener_answers.h), connect() too
// where it is answered, and the rule programs' errno answers too (they go
// in notifying, and the main program notifies the same calls); where that
// cannot be, the rules as written, and the report says what goes unseen.
// Observation only: nothing in the report.
Status prepare_listener(Preparation& p, const Inputs&) {
  Prepared& prepared = p.prepared;
  if (prepared.plan.bwrap) {  // the programs go to bwrap as written: nobody listens
    p.report.denials_unseen.push_back("seccomp: under bwrap the calls the plan refuses are answered by the kernel "
                                      "alone and not recorded (no listener)");
    return Ok{};
  }
  std::vector<const plan::SeccompProgram*> rules = installed_programs(prepared);
  if (rules.empty()) return Ok{};
  const plan::SeccompProgram& main = *rules.back();
  rules.pop_back();
  const bool connect = prepared.connect_answers.has_value();
  const std::optional<int> notify_nr = connect ? std::optional<int>(SYS_connect) : std::nullopt;
  std::string conflict = rewrite_conflict(main, connect);
  const std::vector<int32_t> ruled = conflict.empty() ? rule_errno_numbers(rules) : std::vector<int32_t>{};
  std::optional<seccomp::PreparedFilter> observing;
  if (conflict.empty()) observing = seccomp::notifying_main(main, notify_nr, rules, ruled);
  const std::string unobservable = ruled.empty() ? "" : rules_unobservable(prepared, observing);
  if (!unobservable.empty()) {
    p.report.denials_unseen.push_back(
        "seccomp: calls refused with an errno by an argument rule (spec.syscalls rules, the safe defaults) that the "
        "main program allows are answered by the kernel alone and not recorded (" + unobservable + ")");
    prepared.errno_kept = shared_errno_numbers(main, rules);
    observing = seccomp::with_errno_answers_notified(main, notify_nr, prepared.errno_kept);
  }
  if (!observing) {
    prepared.errno_kept.clear();
    if (conflict.empty()) conflict = "the main program cannot be rewritten in place";
    p.report.denials_unseen.push_back("seccomp: calls refused with an errno are answered by the kernel alone and not "
                                      "recorded (" + conflict + ")");
    return Ok{};
  }
  if (unobservable.empty())
    for (size_t i = 0; i < rules.size(); ++i) prepared.filters[i] = seccomp::notifying_rule(*rules[i]);
  rules.push_back(&main);
  for (const plan::SeccompProgram* program : rules) prepared.observed.push_back(*program);
  prepared.observing = std::move(observing);
  prepared.futex_allowed = std::all_of(rules.begin(), rules.end(), [](const plan::SeccompProgram* program) {
    return bpf::is_constant_allow(program->instructions, program->audit_arch, SYS_futex);
  });
  return Ok{};
}

// network.outbound.hosts (docs/egress.md): the command's own network
// namespace, made in a user namespace where the launcher lacks CAP_SYS_ADMIN;
// the child makes the broker's socket there (launch.cpp), the supervisor
// serves it, and the proxy variables point the command at it.
Status prepare_egress(Preparation& p, const Inputs&) {
  plan::Plan& plan = p.prepared.plan;
  if (!plan.egress) return Ok{};
  const plan::Egress& egress = *plan.egress;
  std::string requested = egress.any_name ? "every name" : std::to_string(egress.allow.size()) + " allowed";
  if (!egress.deny.empty()) requested += ", " + std::to_string(egress.deny.size()) + " denied";
  ControlReport c = report_of(Control::kNetworkHosts, requested + ", through the broker at 127.0.0.1:" +
                                                          std::to_string(plan::kBrokerPort));
  c.established_by = kBrokerListening;
  c.stopped_before = "the broker's socket was made in its network namespace";
  c.evidence = {Basis::kMeasured,
                "the command's process was made in a network namespace of its own, with loopback only, where the "
                "broker's socket was listening before it started; every connection out went through the broker's "
                "check of the plan's patterns"};
  // Never the host's network: without a namespace of its own, no launch.
  if (std::string missing = user_namespace_unavailable("the command's own network namespace"); !missing.empty()) {
    c.achievable = ControlLevel::kRefused;
    c.why = std::move(missing);
    p.report.controls.push_back(c);
    return refusal(Control::kNetworkHosts, c.why);
  }
  if (!holds_sys_admin()) plan.process->namespaces |= plan::kNamespaceUser;  // the reader checked the section is there
  p.report.controls.push_back(std::move(c));
  return Ok{};
}

// Created by the clone that starts the command: nothing to prepare, but
// reported.
Status plan_namespaces(Preparation& p, const Inputs&) {
  const uint32_t fresh = plan::namespaces_of(p.prepared.plan);
  if (!fresh) return Ok{};
  ControlReport c = report_of(Control::kNamespaces, plan::namespace_names(fresh));
  c.established_by = kNamespacesReady;
  c.stopped_before = "its namespaces were set up";
  c.evidence = {Basis::kMeasured, std::string("the command's process was created in them (clone returned its pid)") +
                                      (fresh & plan::kNamespaceUser ? "; its user namespace's id maps were written" : "") +
                                      (fresh & plan::kNamespaceMount ? "; its mounts were made private" : "")};
  p.report.controls.push_back(std::move(c));
  return Ok{};
}

// A capability the plan keeps must be one the launcher holds: it cannot be
// granted from nothing, and running without it would be less than planned.
Status check_kept_capabilities(Preparation& p, const Inputs&) {
  if (p.prepared.plan.bwrap) return Ok{};  // bwrap's --cap-drop, reported by prepare_bwrap
  const uint64_t kept = plan::kept_capabilities_of(p.prepared.plan);
  ControlReport c = report_of(Control::kCapabilities, kept ? "kept: " + capabilities::names(kept) : "none kept");
  c.established_by = kCapabilitiesDropped;
  c.stopped_before = "dropping its capabilities";
  c.evidence = {Basis::kMeasured,
                kept ? "every other capability dropped from the bounding set, the kept ones set as effective, permitted, "
                       "inheritable and ambient, the securebits locked; every call returned 0"
                     : "the ambient set cleared, the bounding set emptied, the securebits locked and capset to empty "
                       "sets returned 0"};
  Status held = Ok{};
  if (const uint64_t missing = kept ? kept & ~capabilities::permitted() : 0) {  // no capget for nothing
    held = make_error("isolation.linux_capabilities: the plan keeps " + capabilities::names(missing) +
                      ", which aasm-launch does not hold; run it as root, or grant it the capability "
                      "(setcap, or the service manager's AmbientCapabilities)");
    c.achievable = ControlLevel::kRefused;
    c.why = held.error().message;
  }
  p.report.controls.push_back(std::move(c));
  return held;
}

std::string tree_limits_text(const plan::ProcessSettings& p) {
  std::string text;
  const auto add = [&text](const char* name, const std::optional<uint64_t>& value, const char* unit) {
    if (value) text += (text.empty() ? "" : ", ") + std::string(name) + " " + std::to_string(*value) + unit;
  };
  add("memory", p.memory, " bytes");
  add("swap", p.swap, " bytes");
  add("pids", p.pids, "");
  add("cpu", p.cpu_millicores, " millicores");
  return text + " for the whole tree";
}

// Without the run's cgroup, where resource may degrade: per-process
// rlimits for the memory and task ceilings, nothing for swap and CPU.
void stand_in_for_tree_limits(ControlReport& c, const plan::ProcessSettings& p, const std::string& no_cgroup) {
  LevelOfParts level;
  std::string stand_ins;
  if (p.memory) {
    level.add(ControlLevel::kPartial);
    stand_ins += " RLIMIT_AS=" + std::to_string(*p.memory) + " (each process, not the tree);";
  }
  if (p.pids) {
    const bool root = ::geteuid() == 0;
    level.add(root ? ControlLevel::kNotEnforced : ControlLevel::kPartial);
    stand_ins += " RLIMIT_NPROC=" + std::to_string(*p.pids) + " (every process of the user" +
                 (root ? "; root is exempt, so not enforced here)" : ")") + ";";
  }
  if (p.swap) {
    level.add(ControlLevel::kNotEnforced);
    stand_ins += " swap not enforced;";
  }
  if (p.cpu_millicores) {
    level.add(ControlLevel::kNotEnforced);
    stand_ins += " cpu not enforced;";
  }
  c.achievable = level.level();
  c.why = no_cgroup + "; isolation.degraded permits running with per-process rlimits instead (RLIMIT_AS for memory, "
                      "RLIMIT_NPROC for tasks; swap and cpu not enforced)";
  c.established_by = kResourceLimitsSet;
  c.stopped_before = "its resource limits";
  c.evidence = {Basis::kMeasured, "no cgroup (" + no_cgroup + "); per-process stand-ins set in the child:" + stand_ins};
}

// Limits of the whole tree (memory, tasks, CPU) go into the run's cgroup,
// created beneath the launcher's own. Without one the launch is refused, or,
// where the plan lets the resource domain degrade, runs with per-process
// stand-ins. A dry run creates it too (and removes it), so that it reports
// what a launch would get.
//
// Made here, on the launcher's own thread: a thread of its own from the
// plan's reading on (the third pass of issue 12) cost more than it overlapped
// on a host where making a thread is slow (docs/benchmarks.md, fifth pass).
Status create_run_cgroup(Preparation& p, const Inputs&) {
  if (!plan::has_tree_limits(p.prepared.plan)) return Ok{};
  const plan::ProcessSettings& s = *p.prepared.plan.process;
  const bool may_degrade = s.flags & plan::kProcessResourceDegradable;
  ControlReport c = report_of(Control::kResource, tree_limits_text(s), planned_of(may_degrade));
  auto created = cgroup::RunCgroup::create(cgroup::Limits{s.memory, s.swap, s.pids, s.cpu_millicores},
                                           cgroup::unique_run_name());
  Status status = Ok{};
  if (created) {
    std::string read_back;
    for (const cgroup::Knob& knob : created->knobs()) read_back += " " + knob.path + "=" + knob.read_back + ";";
    c.evidence = {Basis::kMeasured, "the kernel read back" + read_back};
    p.prepared.cgroup = std::move(*created);
  } else if (may_degrade) {
    stand_in_for_tree_limits(c, s, created.error().message);
    p.prepared.tree_limits = rlimits::TreeLimits::kPerProcessStandIns;
  } else {
    c.achievable = ControlLevel::kRefused;
    c.why = created.error().message + " (or list " + control_name(Control::kResource) +
            " in isolation.degraded to run with per-process stand-ins)";
    status = refusal(Control::kResource, c.why);
  }
  p.report.controls.push_back(std::move(c));
  return status;
}

Status build_command_environment(Preparation& p, const Inputs&) {
  Prepared& prepared = p.prepared;
  prepared.environment = build_environment(prepared.plan.process ? &*prepared.plan.process : nullptr, environ);
  if (prepared.plan.egress) point_at_broker(prepared.environment, egress::proxy_environment());
  for (std::string& variable : prepared.environment) prepared.envp.push_back(variable.data());
  prepared.envp.push_back(nullptr);
  return Ok{};
}

// A report of a control bwrap establishes: the launcher only sees bwrap
// exec'd with the arguments, so its basis is asserted (bwrap exits before
// the command on any failure of its setup).
ControlReport bwrap_control(Control control, std::string requested, const plan::Plan& plan) {
  const std::string key = std::string("backend.degraded.") + control_name(control);
  const std::string gap = meta_value(plan, key);
  ControlReport c = report_of(control, std::move(requested), planned_of(!gap.empty()));
  if (!gap.empty()) {
    const std::string achievable = meta_value(plan, key + ".achievable");
    for (ControlLevel level : {ControlLevel::kPartial, ControlLevel::kNotEnforced})
      if (achievable.starts_with(control_level_name(level))) c.achievable = level;
    c.why = "bwrap: " + gap;
  }
  c.established_by = kBwrapExecuted;
  c.stopped_before = "it executed bwrap";
  c.evidence = {Basis::kAsserted, "bwrap was executed with the plan's arguments; its setup is bwrap's"};
  return c;
}

// The options of `bwrap` for which `values` says how many arguments follow
// (nullopt: not one of those asked for), each with them.
std::string bwrap_options(const plan::Bwrap& bwrap, std::optional<size_t> (*values)(std::string_view option)) {
  std::string text;
  for (size_t i = 0; i < bwrap.args.size(); ++i) {
    const plan::BwrapArg& arg = bwrap.args[i];
    if (arg.kind != plan::BwrapArgKind::kLiteral || !arg.text.starts_with("--")) continue;
    const std::optional<size_t> count = values(arg.text);
    if (!count) continue;
    text += (text.empty() ? "" : " ") + arg.text;
    for (size_t v = 0; v < *count && i + 1 < bwrap.args.size(); ++v) text += " " + plan::bwrap_arg_text(bwrap.args[++i]);
  }
  return text;
}

std::optional<size_t> unshare_option(std::string_view o) { return o.starts_with("--unshare-") ? std::optional<size_t>(0) : std::nullopt; }
std::optional<size_t> net_option(std::string_view o) { return o == "--unshare-net" ? std::optional<size_t>(0) : std::nullopt; }
std::optional<size_t> cap_option(std::string_view o) { return o.starts_with("--cap-") ? std::optional<size_t>(1) : std::nullopt; }
// The root: every bind with its two paths, the view's own filesystems.
std::optional<size_t> root_option(std::string_view o) {
  if (o.find("bind") != std::string_view::npos) return 2;
  if (o == "--size" || o == "--tmpfs" || o == "--proc" || o == "--dev") return 1;
  return std::nullopt;
}

// What bwrap's arguments do for `control`, as its report's "requested".
std::string bwrap_requested(const plan::Bwrap& bwrap, Control control) {
  switch (control) {
    case Control::kNamespaces:
    case Control::kIpc: return bwrap_options(bwrap, unshare_option);
    case Control::kCapabilities: return bwrap_options(bwrap, cap_option);
    case Control::kNetworkOutbound:
    case Control::kNetworkBind: {
      const std::string net = bwrap_options(bwrap, net_option);
      return net.empty() ? "the host's network (no --unshare-net); the filter's socket rules" : net;
    }
    default: return bwrap_options(bwrap, root_option);
  }
}

// A bwrap plan: the host's bwrap probed by trying (bwrap_exec.h), refused
// before anything runs where it cannot serve; the argument vector resolved
// for a launch; every control bwrap establishes reported, with the level
// the plan's meta records for the degraded ones (aasmc's table).
Status prepare_bwrap(Preparation& p, const Inputs& in) {
  Prepared& prepared = p.prepared;
  if (!prepared.plan.bwrap) return Ok{};
  const plan::Plan& plan = prepared.plan;
  const std::string path = in.request.bwrap.value_or(bwrap::kDefaultPath);
  ControlReport namespaces = bwrap_control(Control::kNamespaces, bwrap_requested(*plan.bwrap, Control::kNamespaces), plan);
  Status status = Ok{};
  if (std::string missing = bwrap::probe(path, ::getuid(), ::getgid()); !missing.empty()) {
    namespaces.achievable = ControlLevel::kRefused;
    namespaces.why = missing;
    status = refusal(Control::kNamespaces, missing);
  }
  p.report.controls.push_back(std::move(namespaces));
  p.report.controls.push_back(bwrap_control(Control::kCapabilities, bwrap_requested(*plan.bwrap, Control::kCapabilities), plan));
  for (Control control : {Control::kFileRead, Control::kFileWrite, Control::kFileExecute, Control::kNetworkOutbound,
                          Control::kNetworkBind, Control::kIpc, Control::kFilesystemView})
    if (!meta_value(plan, std::string("backend.degraded.") + control_name(control)).empty())
      p.report.controls.push_back(bwrap_control(control, bwrap_requested(*plan.bwrap, control), plan));
  p.report.backend = meta_value(plan, "backend");
  if (!status || in.request.command.empty()) return status;
  if (in.request.explain)  // the tracer would follow bwrap's own setup, and there is no Landlock to explain
    return make_error("--explain traces Landlock denials, and a bwrap plan has no Landlock ruleset; run it without "
                      "--explain");
  if (prepared.filters.size() > std::tuple_size_v<descriptors::Kept>)
    return refusal(Control::kSyscall, "bwrap: the plan has " + std::to_string(prepared.filters.size()) +
                                          " seccomp programs for this host, more than the launcher passes on");
  auto exec = bwrap::prepare(plan, prepared.filters, in.request.command, path);
  if (!exec) return refusal(Control::kFilesystemView, exec.error().message);
  prepared.bwrap = std::move(*exec);
  return Ok{};
}

// The steps, in order (nsjail's containProc is the model: a list of small
// functions, each refusing on its own). Each adds its controls to the
// report; the first refusal ends a launch's preparation, while a dry run
// goes on to report every control. docs/cli.md numbers them.
struct Step {
  Status (*run)(Preparation&, const Inputs&);
  bool launch_only = false;   // a dry run has no command and no environment to build
  bool finds_command = false;  // its refusal's status is the command's own: 126 or 127
};

constexpr Step kSteps[] = {
    {check_plan_shape},
    {negotiate},
    {find_the_command, true, true},
    {check_pinned_files},
    {bind_ruleset},
    {prepare_view},
    {prepare_filters},
    {prepare_connect_answers},
    {prepare_listener},
    {prepare_egress},
    {plan_namespaces},
    {check_kept_capabilities},
    {prepare_bwrap},
    {create_run_cgroup},
    {build_command_environment, true},
};

// The plan, verified (every reader check, the digest included) and decoded.
Status load_plan(Preparation& p, const LaunchRequest& request) {
  auto bytes = plan::read_plan_file(request.plan_path);
  if (!bytes) return bytes.error();
  p.report.plan_sha256 = to_hex(plan::plan_digest(*bytes));
  auto decoded = plan::decode_plan(*bytes, plan::Decode::kDeferProvenance);
  if (!decoded) return make_error(request.plan_path + ": " + decoded.error().message);
  p.prepared.plan = std::move(*decoded);
  p.prepared.plan_bytes = std::move(*bytes);
  p.plan_decoded = true;
  if (request.expect_digest && plan::plan_digest(p.prepared.plan_bytes) != *request.expect_digest)
    return make_error(request.plan_path + ": digest " + plan::plan_identity(p.prepared.plan_bytes) +
                      " is not the expected " + plan::identity_text(*request.expect_digest));
  return Ok{};
}

}  // namespace

void install_as_written(Prepared& prepared) {
  for (size_t i = 0; i + 1 < prepared.observed.size(); ++i) prepared.filters[i] = seccomp::prepare(prepared.observed[i]);
  prepared.observed.clear();
  prepared.observing.reset();
  prepared.errno_kept.clear();
}

namespace {

// Runs the steps on the decoded plan: a launch stops at the first refusal,
// a dry run reports on past it.
void run_steps(Preparation& p, const Inputs& inputs, Exit exit) {
  for (const Step& step : kSteps) {
    if (step.launch_only && exit == Exit::kDryRun) continue;
    Status status = step.run(p, inputs);
    if (status) continue;
    const int code = step.finds_command ? exit_code::of_exec_failure(status.error().code) : exit_code::kLauncherError;
    if (!p.report.refusal) p.report.refusal = Refusal{status.error(), code};
    if (exit == Exit::kLaunch) return;
  }
}

std::string backends_text(const std::vector<LaunchReport::BackendTried>& tried) {
  std::string text;
  for (const LaunchReport::BackendTried& t : tried) text += (text.empty() ? "" : "; ") + t.backend + ": " + t.why;
  return text;
}

// How much weaker than planned a prepared backend runs here: its controls
// not enforced, then its partial ones (the policy let each degrade).
struct Weakness {
  int not_enforced = 0, partial = 0;
  std::string names;  // "file_read not enforced, ipc partial"
  bool none() const { return not_enforced == 0 && partial == 0; }
  bool operator<(const Weakness& o) const { return std::tie(not_enforced, partial) < std::tie(o.not_enforced, o.partial); }
};

Weakness weakness_of(const LaunchReport& report) {
  Weakness w;
  for (const ControlReport& c : report.controls) {
    if (c.achievable != ControlLevel::kNotEnforced && c.achievable != ControlLevel::kPartial) continue;
    (c.achievable == ControlLevel::kPartial ? w.partial : w.not_enforced) += 1;
    w.names += (w.names.empty() ? "" : ", ") + std::string(control_name(c.control)) + " " +
               control_level_name(c.achievable);
  }
  return w;
}

Preparation attempt_of(const Preparation& first, const plan::Plan& several, const plan::Lowering& lowering,
                       const Inputs& inputs, Exit exit) {
  Preparation attempt;
  attempt.report.host = first.report.host;
  attempt.report.plan_sha256 = first.report.plan_sha256;
  attempt.report.refusal = first.report.refusal;  // a dry run's unexpected digest
  attempt.plan_decoded = true;
  attempt.prepared.plan = several;
  plan::apply_lowering(attempt.prepared.plan, lowering);
  run_steps(attempt, inputs, exit);
  attempt.report.backend = lowering.backend;
  return attempt;
}

// A plan of several lowerings: each carried one prepared in the plan's order
// (or only the one --backend names). The first that runs every control as
// planned is taken; where none does, the one the policy lets run weakest in
// the fewest controls (not enforced first, then partial; the plan's order
// breaks a tie). A refusal that is the command's own (not found, not
// executable) ends the walk, since no backend changes it. What each attempt
// not taken opened or created is let go.
Preparation prepare_lowerings(Preparation first, const Inputs& inputs, Exit exit) {
  if (const std::optional<std::string>& asked = inputs.request.backend;
      asked && std::none_of(first.prepared.plan.lowerings.begin(), first.prepared.plan.lowerings.end(),
                            [&](const plan::Lowering& l) { return l.backend == *asked; })) {
    std::string names;
    for (const plan::Lowering& l : first.prepared.plan.lowerings) names += (names.empty() ? "" : ", ") + l.backend;
    first.report.refusal = Refusal{make_error("the plan has no backend " + *asked + " (it lists " + names + ")"),
                                   exit_code::kLauncherError};
    first.plan_decoded = false;
    return first;
  }
  const plan::Plan several = std::move(first.prepared.plan);
  std::vector<uint8_t> bytes = std::move(first.prepared.plan_bytes);
  std::vector<LaunchReport::BackendTried> tried;
  std::optional<Preparation> best, shown;  // the weakest-run candidate; a refused walk's report (the first attempt's)
  std::optional<size_t> best_at;
  Weakness best_weakness;
  for (const plan::Lowering& lowering : several.lowerings) {
    if (best && best_weakness.none()) {  // taken already: the ones after it are named, not prepared
      tried.push_back({lowering.backend, false, "not tried: " + best->report.backend + " runs every control as planned"});
      continue;
    }
    if (inputs.request.backend && *inputs.request.backend != lowering.backend) {
      tried.push_back({lowering.backend, false, "not asked for (--backend " + *inputs.request.backend + ")"});
      continue;
    }
    if (!lowering.carried()) {
      tried.push_back({lowering.backend, false, "not carried by the plan: " + lowering.not_carried});
      continue;
    }
    Preparation attempt = attempt_of(first, several, lowering, inputs, exit);
    const bool refused = bool(attempt.report.refusal);
    if (refused && attempt.report.refusal->exit_code == exit_code::kLauncherError) {
      tried.push_back({lowering.backend, false, attempt.report.refusal->error.message});
      if (!shown) shown = std::move(attempt);
      else release(attempt.prepared);
      continue;
    }
    const Weakness weakness = weakness_of(attempt.report);
    tried.push_back({lowering.backend, false, ""});
    if (!best || weakness < best_weakness) {
      if (best) {
        tried[*best_at].why = "runs weaker here than " + lowering.backend + ": " + best_weakness.names;
        release(best->prepared);
      }
      best = std::move(attempt);
      best_at = tried.size() - 1;
      best_weakness = weakness;
    } else {
      tried.back().why = "runs weaker here than " + best->report.backend + ": " + weakness.names;
      release(attempt.prepared);
    }
    if (refused) break;  // the command's own refusal: no backend changes it
  }
  if (best) {
    tried[*best_at].taken = true;  // every other entry has its reason already
    if (shown) release(shown->prepared);
    best->report.backends = std::move(tried);
    best->prepared.plan_bytes = std::move(bytes);
    return std::move(*best);
  }
  Preparation refused = shown ? std::move(*shown) : std::move(first);
  if (!shown) refused.plan_decoded = false;  // no attempt: the report has no controls
  refused.prepared.plan_bytes = std::move(bytes);
  refused.report.refusal =
      Refusal{make_error((inputs.request.backend ? "the plan's backend " + *inputs.request.backend + " cannot run here: "
                                                 : std::string("none of the plan's backends can run here: ")) +
                         backends_text(tried)),
              exit_code::kLauncherError};
  refused.report.backends = std::move(tried);
  return refused;
}

}  // namespace

void release(Prepared& prepared) {
  for (int* fd : {&prepared.ruleset_fd, &prepared.denied_dir_fd, &prepared.exec_fd})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  if (prepared.cgroup) prepared.cgroup->kill_and_remove({std::chrono::milliseconds(5000), cgroup::Reap::kNone});
  prepared.cgroup.reset();
}

Preparation prepare(const LaunchRequest& request, const Host& host, Exit exit) {
  Preparation p;
  p.report.host = host;
  if (Status loaded = load_plan(p, request); !loaded) {
    p.report.refusal = Refusal{loaded.error(), exit_code::kLauncherError};
    if (exit == Exit::kLaunch || !p.plan_decoded) return p;  // a dry run reports on past a digest it did not expect
  }
  const Inputs inputs{request, host};
  if (!p.prepared.plan.lowerings.empty()) return prepare_lowerings(std::move(p), inputs, exit);
  if (request.backend && *request.backend != plan::backend_of(p.prepared.plan)) {
    p.report.refusal = Refusal{make_error("the plan was compiled for backend " + plan::backend_of(p.prepared.plan) +
                                          " alone, not " + *request.backend +
                                          " (aasmc compile --backend auto, or a list, compiles a plan with several)"),
                               exit_code::kLauncherError};
    return p;
  }
  run_steps(p, inputs, exit);
  return p;
}

}  // namespace aasm
