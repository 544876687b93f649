// What a launch of a plan establishes on this host, control by control:
// requested and planned (what the plan carries), achievable here (found by
// prepare() before anything runs: what --dry-run prints and the launch's
// notes say), achieved with its basis (completed after the run from the
// steps the child reported: what the receipt records). One report, so the
// dry run and the launch cannot tell two stories.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "self_checks.h"
#include "kernel/landlock.h"
#include "plan/controls.h"
#include "plan/plan.h"
#include "supervisor/path_binding.h"
#include "base/result.h"
#include "crypto/file_digest.h"

namespace aasm {

// The host a plan is prepared for.
struct Host {
  std::string kernel_release;  // uname
  std::string machine;
  landlock::AbiProbe landlock;
};
Host probe_host();

struct Achieved {
  ControlLevel level = ControlLevel::kNotEstablished;
  Evidence basis;
};

struct ControlReport {
  Control control = Control::kFileRead;
  std::string requested;  // what the plan carries for it: "fs read_file,read_dir; net none; scopes none", "none kept"
  Planned planned = Planned::kRequired;
  ControlLevel achievable = ControlLevel::kEnforced;  // on this host, before anything runs
  std::string why;  // why it is less than planned, or how else it is enforced; "" when as planned
  // What completes it from the child's report:
  uint32_t established_by = 0;  // the ChildDone bit (self_checks.h) of the step that enforces it; 0: none does, `evidence` stands
  const char* stopped_before = "";  // that step: "the child stopped before <it>"
  Evidence evidence;                // its basis once established
  std::optional<plan::LandlockControl> landlock;  // a Landlock control's basis comes from its self-checks
  std::string also_by;  // what enforces it beside Landlock (the plan's `lowering.CONTROL`), for its basis
  std::optional<Achieved> achieved;  // set by complete()
};

// One mount of the filesystem view, as the plan writes it (templates, not
// the host's paths), for --dry-run and the receipt.
struct ViewMount {
  std::string path;     // "${CWD}/.git/hooks", "/proc"
  std::string what;     // "bind", "bind, protected", "proc", "tmpfs, 67108864 bytes"
  std::string options;  // "ro,nosuid,nodev,noexec"
  std::string status;   // "bound", "skipped (optional, missing)", kViewNotBuilt, kViewNotProtected, kViewLinkNotFollowed
};
// A mount's status where the view degraded, and a protected path's.
inline constexpr char kViewNotBuilt[] = "not built (the view degraded)";
inline constexpr char kViewNotProtected[] = "NOT protected (the view degraded)";
// A symbolic link where a nested git directory could be (.git/modules/evil):
// not followed, nothing it leads to bound.
inline constexpr char kViewLinkNotFollowed[] = "not followed (a symbolic link)";

// A pinned file as this launch found it: re-hashed through the descriptor
// the launcher opened (preparation.cpp, check_pinned_files).
struct PinCheck {
  plan::PinnedFile planned;
  std::optional<FileDigest> now;  // unset: it could not be read (`problem` says why)
  std::string problem;            // "" when `now` is set
  bool executed = false;          // the command itself, exec'd from this descriptor
  bool unchanged() const { return now && now->size == planned.size && now->sha256 == planned.sha256; }
  // "unchanged", "CHANGED: now sha256:…, N bytes", "CANNOT BE READ: why": --dry-run and the receipt.
  std::string status() const;
};

// The first refusal, with the exit status it gives the launch.
struct Refusal {
  Error error;
  int exit_code = 125;
};

struct LaunchReport {
  std::string plan_sha256;  // "" when the plan could not be read
  // The backend the command runs under: "bwrap" for a bwrap plan (its meta's
  // `backend`), the lowering taken for a plan of several; "" for a native plan.
  std::string backend;
  // A plan of several lowerings: each, in the plan's order, taken or not and
  // why (not carried by the compiler, refused on this host, not asked for).
  struct BackendTried {
    std::string backend;
    bool taken = false;
    std::string why;  // "" for the one taken
  };
  std::vector<BackendTried> backends;
  Host host;
  std::vector<ControlReport> controls;  // in the order the preparation's steps found them
  std::vector<BoundPath> paths;         // the ruleset's paths as bound, for the receipt
  std::vector<std::string> skipped_optional;  // optional paths missing here
  struct MissingProtected {
    std::string path_template;  // as the plan writes it: ${CWD}/.git/commondir
    std::string host_path;      // where it would be here
  };
  std::vector<MissingProtected> skipped_protected;  // optional protected paths missing here: not protected
  // A git directory whose hooks or config the plan protects, with the ones
  // nested in it that the launch found and protected too
  // (supervisor/git_dirs.h), for the run's end to tell what the command added.
  struct GitDir {
    std::string path_template;         // ${CWD}/.git
    std::string host_path;
    std::vector<std::string> nested;   // relative to it: modules/sub, worktrees/w
    std::vector<std::string> links;    // relative to it, not followed: modules/evil
  };
  std::vector<GitDir> git_dirs;
  std::vector<ViewMount> view;                // the filesystem view's mounts; empty without one
  std::vector<PinCheck> pins;                 // the plan's pinned files as found here, in the plan's order
  std::optional<Refusal> refusal;       // a launch stops at it; a dry run reports on
  // One sentence per class of denial this run cannot see, and how to see it
  // ("Landlock denials: this host does not deliver Landlock audit records
  // (audit disabled); run with --explain to trace them"): the denial report
  // and the receipt print them.
  std::vector<std::string> denials_unseen;
};

// "backend: NAME (...)" and a line per backend of the plan not taken, with
// why: --dry-run and doctor --plan print them. None for a native plan.
std::vector<std::string> backend_lines(const LaunchReport& report);
// The same as JSON members: "backend" (native where the plan names none) and
// "backends" (the plan's, in its order; empty for a plan of one).
void write_backends(json::Writer& w, const LaunchReport& report);

// Each control's achieved level and basis, from the word the child reported
// its completed steps in (ChildDone and SelfCheck bits, self_checks.h).
void complete(LaunchReport& report, uint32_t done);

}  // namespace aasm
