// The receipt: what one launch requested, planned and achieved, per control,
// each achieved level with its basis, sealed (schemas/receipt.schema.json,
// docs/receipts.md). Paths appear as their templates with a keyed digest of
// what they resolved to; arguments, environment and working directory as
// counts and keyed digests only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/canonical_json.h"
#include "supervisor/denial_report.h"

namespace aasm {

// Each word from plan/controls.def: the domain a control name, planned its
// planned_text(), achieved a level, basis "measured: ..." or "asserted: ...".
struct ReceiptControl {
  std::string domain;
  std::string requested;  // what the plan carries for it
  std::string planned;
  std::string achieved;
  std::string basis;
};

struct ReceiptPath {
  std::string rule_template;  // "${CWD}/build"
  std::string resolved_hmac;  // the keyed digest of the path it resolved to; empty when skipped
  std::string status;         // bound / skipped (optional, missing)
};

// One mount of the filesystem view, its tree as the plan's template.
struct ReceiptViewMount {
  std::string path;
  std::string what;
  std::string options;
  std::string status;
};

// A pinned file as the launch checked it (filesystem.pinned): the plan's path,
// digest and size, and what the launcher found ("unchanged", "CHANGED: ...").
struct ReceiptPin {
  std::string path;
  std::string sha256;  // "sha256:HEX", as the plan records it
  uint64_t size = 0;
  std::string checked;
};

// What the run's confinement refused (docs/receipts.md, "denials"): each
// distinct denial once with its count, the policy lines that refused it and
// the edits that would allow it. `aasmc suggest` reads exactly this.
struct ReceiptDenial {
  denials::Denial denial;
  uint64_t count = 0;
  denials::Explanation explanation;
};

struct ReceiptDenials {
  bool provenance = false;  // the plan has a provenance section
  uint64_t dropped = 0;     // records beyond the log's cap of distinct denials
  std::vector<std::string> unseen;  // classes of denial this run could not see, and how to see them
  std::vector<ReceiptDenial> entries;
};

// The fields a receipt never holds, each named in its `withheld` list
// (docs/receipts.md#redaction): only counts and keyed digests of them.
inline constexpr const char* kWithheldFields[] = {"command.arguments", "command.environment", "cwd",
                                                   "paths.resolved"};

// How a run ended (docs/receipts.md#outcomes), as the receipt's
// command.outcome writes it; the schema's enum lists the same.
namespace outcome {
inline constexpr char kNotStarted[] = "not started";
inline constexpr char kDeadline[] = "deadline";
inline constexpr char kOutputLimit[] = "output limit";
inline constexpr char kOutOfMemory[] = "out of memory";
inline constexpr char kTaskLimit[] = "task limit";
inline constexpr char kSignal[] = "signal";
inline constexpr char kExited[] = "exited";
}  // namespace outcome

// The controls summed up (the receipt's `enforcement`).
namespace enforcement {
inline constexpr char kFull[] = "full";
inline constexpr char kDegraded[] = "degraded";
inline constexpr char kNone[] = "none";
}  // namespace enforcement

// The seal's algorithm and the receipt schema's name.
inline constexpr char kReceiptSchema[] = "aasm.dev/receipt/v1";
inline constexpr char kSealAlgorithm[] = "sha256-jcs";

// How the run's times went (milliseconds since the Unix epoch, UTC): the
// launcher starting, the command's exec, its exit, the end of the cleanup;
// exec and exit are 0 when the command never started.
struct ReceiptTimeline {
  uint64_t start = 0, exec = 0, exit = 0, cleanup = 0;
};

// What stands for the values a receipt withholds: counts and keyed digests
// (HMAC-SHA-256 under the key `key_source` names, identified by `key_id`).
struct ReceiptRedaction {
  std::string key_source;  // "host" (the per-host key) or "caller" (--receipt-key-file)
  std::string key_id;      // hex HMAC of a fixed label: which key, not the key
  std::vector<std::string> argument_hmacs;  // one per argument, in order
  std::string environment;                  // how the plan constrained it, in words
  uint64_t environment_variables = 0;
  std::string environment_hmac;  // of the command's environment, sorted, as one list
  std::string cwd_hmac;
};

// A backend of a plan compiled with several: taken, or why not.
struct ReceiptBackend {
  std::string backend;
  bool taken = false;
  std::string why;
};

struct Receipt {
  std::string plan_sha256;
  // "bwrap" where the plan ran under bwrap; for a plan of several lowerings
  // the one taken ("native" too); written only then.
  std::string backend;
  std::vector<ReceiptBackend> backends;  // a plan of several lowerings: each, in its order; written only then
  std::string kernel_release;
  std::string architecture;
  int landlock_abi = 0;
  std::vector<ReceiptControl> controls;
  std::string enforcement;  // full / degraded / none: the controls summed up
  std::vector<ReceiptPath> paths;
  std::vector<ReceiptViewMount> view;  // written only when the plan builds a view
  std::vector<ReceiptPin> pinned;      // written only when the plan pins files
  std::string outcome;  // not started / deadline / output limit / out of memory / task limit / signal / exited
  int signal = 0;       // the signal that ended the command, 0 for none
  int exit_code = 0;    // the launcher's own exit code
  std::vector<std::string> events;  // from the kernel's counters: OOM kills, task-limit hits
  std::string cleanup;              // complete: ... / incomplete: every residual
  ReceiptDenials denials;
  ReceiptRedaction redaction;
  ReceiptTimeline timeline;
};

// The receipt's text: its body in canonical JSON (canonical_json.h) with the
// seal over that body added as the member "seal", and a newline.
std::string render_receipt(const Receipt& receipt);

// The seal of a receipt body (the receipt less its "seal" member): the hex
// SHA-256 of its canonical text.
std::string receipt_seal(const json::Value& body);

// Where the receipt goes, opened before the command starts so that a
// receipt that cannot be written refuses the launch instead of being lost
// after the run (docs/receipts.md).
class ReceiptOutput {
 public:
  // A new file, mode 0600, in `path`'s directory, without a name while the
  // command runs (O_TMPFILE: a command that may write there finds nothing
  // to replace), named and renamed over `path` by commit(), so a reader
  // never sees half a receipt. Where the filesystem has no O_TMPFILE, a
  // named temporary file (O_EXCL), which commit() renames only if it is
  // still the file opened. A character device (/dev/null) is written in
  // place, since a rename would replace the host's node.
  static Result<ReceiptOutput> open_path(const std::string& path);
  // A descriptor the caller opened (--receipt-fd N), which must be open for
  // writing; kept from the command (close-on-exec).
  static Result<ReceiptOutput> open_descriptor(int fd);

  ReceiptOutput(ReceiptOutput&& other) noexcept;
  ReceiptOutput& operator=(ReceiptOutput&&) = delete;
  ~ReceiptOutput();  // an uncommitted temporary file is removed

  int fd() const { return fd_; }
  // Writes `text` whole; then fsync and rename for a path.
  Status commit(const std::string& text);

 private:
  ReceiptOutput() = default;
  std::string name_;  // for messages: the path, or "descriptor N"
  std::string path_, temp_;  // temp_: the named temporary file, if any
  int fd_ = -1;
  bool unnamed_ = false;  // O_TMPFILE: linked into place by commit()
  bool close_ = true;  // false for a caller's descriptor
};

}  // namespace aasm
