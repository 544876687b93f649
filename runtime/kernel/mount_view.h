// The filesystem view: a fresh root for the command in its own mount
// namespace, holding nothing but what the policy grants (docs/filesystem-view.md).
//
// An empty tmpfs becomes the root (pivot_root); the allowed trees are bound
// into it (MS_BIND|MS_REC), each then given its flags for the whole subtree
// with mount_setattr(AT_RECURSIVE): read-only unless writable, nosuid and
// nodev always, noexec without an execute right. mount_setattr only *adds*
// flags, so it never trips over the flags a user namespace locks on mounts
// it copied from the host (a MS_REMOUNT|MS_BIND must restate every locked
// flag, which means reading mountinfo per bind, as bwrap does). Protected
// subtrees are bound read-only over their writable tree; a mount point
// cannot be renamed, unlinked or replaced (EBUSY), so every directory between
// the writable tree and a protected path is made a mount point too (bound
// onto itself), or renaming `.git` would carry `.git/hooks` away and let a
// new `.git` take its place. Then a fresh /proc (the command's PID
// namespace), a /dev of a few host device nodes bound onto files of a small
// tmpfs (plus a new devpts instance when asked), private size-capped
// tmpfs mounts (/tmp, /dev/shm), the host's old root detached, and the
// view's own root made read-only.
//
// Two halves, because the building runs in the child, which shares the
// supervisor's memory until it execs (kernel/spawn.h): prepare() runs in
// the supervisor before the clone and turns the Spec into a flat list of
// steps whose strings all live in one buffer; build() runs in the child and
// makes only raw system calls over that list, no allocation, no errno, no
// libc (kernel/raw_syscall.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace aasm::mount_view {

// A tree's rights, as mount flags.
enum TreeFlag : uint32_t {
  kWritable = 1u << 0,   // read-write; read-only without it
  kNoExec = 1u << 1,     // noexec: execve fails (EACCES), and so does mmap(PROT_EXEC) (EPERM)
  kProtected = 1u << 2,  // read-only over the tree around it, its ancestors up to that tree pinned
};

// A host file or directory shown in the view. The host path is resolved
// (symlinks followed) by prepare(), on the host, so an absolute link in it
// does not resolve against the view's root later.
struct Tree {
  std::string host_path;
  std::string view_path;  // where it appears; empty: at host_path
  uint32_t flags = 0;     // TreeFlag bits
  bool is_directory = true;
};

// A private tmpfs (the view's /tmp, /dev/shm): starts empty, writes beyond
// `max_bytes` fail with ENOSPC, gone with the namespace.
struct Tmpfs {
  std::string view_path;
  uint64_t max_bytes = 0;  // rounded up to pages by the kernel; 0 is refused (tmpfs reads it as "no limit")
  bool executable = false;
};

struct Symlink {
  std::string view_path;
  std::string target;
};

// The device nodes the view may bind from the host's /dev: the ones programs
// open without asking (bwrap's --dev set). Others (disks, /dev/mem, /dev/kmsg)
// are not offered at all.
inline constexpr std::string_view kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

struct Spec {
  std::vector<Tree> trees;
  std::vector<std::string> dev_nodes;  // names from kDevNodes, bound at /dev/NAME
  bool dev_pts = false;                // a new devpts instance at /dev/pts, /dev/ptmx linked to it
  std::vector<Tmpfs> tmpfs;
  bool proc = false;                   // a fresh /proc: needs the command in a new PID namespace
  std::vector<Symlink> symlinks;
  std::string working_directory;       // changed into last; empty: "/"
};

// Adds to `spec` the host root's symbolic links that lead into a bound tree
// (on a merged-/usr system /bin, /lib, /lib64, /sbin -> usr/...), as they are
// on the host: the ELF interpreter is /lib64/ld-linux-x86-64.so.2, so without
// them no dynamically linked program in /usr runs. Reads the host's "/".
void add_root_symlinks(Spec& spec);

// One system call of the build.
enum class Op : uint8_t { kMount, kSetAttr, kMkdir, kMakeFile, kSymlink, kPivotRoot, kChdir, kDetach, kRemoveDir };

struct Step {
  Op op;
  bool skip_if_missing = false;  // ENOENT ends the step quietly (/proc/irq on a kernel without it)
  uint32_t target = 0;           // offsets into Prepared::text; kNone where unused
  uint32_t source = 0;
  uint32_t fstype = 0;
  uint32_t data = 0;
  uint64_t flags = 0;            // MS_* for kMount; MOUNT_ATTR_* for kSetAttr; mode for kMkdir
  bool recursive = false;        // kSetAttr: AT_RECURSIVE
};

// One mount of the view, for --dry-run and the receipt.
struct MountSummary {
  std::string view_path;
  std::string what;     // "bind /home/u/ws", "tmpfs, 64 MiB", "proc", "devpts", "bind (pin)"
  std::string options;  // "ro,nosuid,nodev,noexec"
};

struct Prepared {
  static constexpr uint32_t kNone = UINT32_MAX;
  std::string text;  // every string of the steps, NUL-terminated
  std::vector<Step> steps;
  std::vector<MountSummary> mounts;
  std::vector<uint32_t> protected_paths;  // offsets into text, for check_protected()
  const char* at(uint32_t offset) const { return offset == kNone ? nullptr : text.data() + offset; }
};

// Checks the spec and lays out the steps. Refuses: relative or unnormalized
// paths, two mounts at one view path, a tree at "/" (the view would hide
// nothing: Landlock alone does that), a protected path that is not inside
// another tree, is missing, is a symlink (a mount pins the link's target,
// not its name) or is a file with other hard links (writable through them),
// a dev node outside kDevNodes, a tmpfs of 0 bytes, a symlink inside a bound
// host tree (creating it would write to the host). Resolves host paths.
Result<Prepared> prepare(const Spec& spec);

// Where build() stopped: `error` is the errno of step `step`; 0 when it
// completed.
struct Failure {
  int error = 0;
  uint32_t step = 0;
};

// In the child, in a fresh mount namespace where it holds CAP_SYS_ADMIN
// (as root, or through the user namespace made with it), before Landlock
// (a Landlock-restricted process may not mount) and before capabilities are
// dropped. Raw system calls only; async-signal-safe; safe in a process
// sharing the caller's memory.
Failure build(const Prepared& prepared);

// Evidence, in the child after build(), that the protection holds: each
// protected path is asked for write access (faccessat W_OK, which writes
// nothing) and must answer EROFS, the read-only mount's answer. `refused`
// is false at the first that does not; `answer` is what it said (0:
// writable). Raw system calls only; async-signal-safe.
struct ProtectionCheck {
  bool refused = true;
  uint32_t path = 0;  // offset into Prepared::text
  int answer = 0;
};
ProtectionCheck check_protected(const Prepared& prepared);

// "mount_setattr /usr ro,nosuid,nodev (recursive)": the step, for messages.
std::string describe(const Prepared& prepared, uint32_t step);

}  // namespace aasm::mount_view
