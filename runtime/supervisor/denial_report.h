// The join from a recorded denial to the policy: which line(s) refused it
// (the plan's provenance section) and the smallest edit that would allow
// it, with a warning where that edit widens a sensitive domain; and the
// end-of-run report of a run's denials (--denials, docs/cli.md). The
// receipt's `denials` section (docs/receipts.md) is the same data.
//
// In a cascade every document constrains (the meet): a denial is explained
// by each document that refuses it, and allowing it takes an edit in each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.h"
#include "supervisor/denials.h"
#include "supervisor/path_binding.h"

namespace aasm::denials {

const char* layer_name(Layer layer);        // "seccomp", "landlock_fs", "landlock_net", "landlock_scope"
const char* witness_name(Witness witness);  // "listener", "kernel_record", "exit_status", "tracer", "launcher"

// A provenance entry with its document resolved.
struct PolicyLine {
  std::string document, file;  // empty for a built-in decision (a safe default)
  uint32_t line = 0, column = 0;
  std::string key, item, value;  // as the provenance entry
  std::string where() const;     // "file:line:col", or "built in"
};

// One change to one document. `op`:
//   add     `item` to the list `list` (a path template, a syscall, "tcp:443", an allow rule);
//   remove  `item` from the list `list`, at line:column (an entry naming it or a group holding it);
//   set     the node `list` to `item` ("allow", "{allow: [tcp:443]}");
//   change  the rule of `list` at line:column, whose action refuses `item`.
struct Edit {
  std::string document, file;
  std::string list, op, item;
  uint32_t line = 0, column = 0;
  std::string widens;  // the sensitive domain the edit opens ("${HOME}/.ssh", "the network", "@privileged"); "" for none
};

struct Explanation {
  std::string call;                 // the syscall's name, "" when not a seccomp denial or unknown
  std::vector<std::string> rights;  // Landlock right names
  std::string path;                 // as a template: ${CWD}/..., ${HOME}/..., or absolute
  std::vector<PolicyLine> policy;   // the lines that refuse it
  std::vector<Edit> edits;          // one per refusing document
  std::string note;                 // what the join could not establish, and why; or why it is by design
  // The plan answers it so by design (its provenance's syscalls.fallback:
  // clone3's ENOSYS, so the C library falls back to clone): not a denial,
  // nothing to edit.
  bool by_design = false;
};

// Native call `number` as the plan's call table of the host's architecture
// (its provenance) names it;
// "call number N" where the table does not have it, or the plan has none.
std::string call_name(const plan::Plan& plan, int number);

// The sentence the report writes for `edit` ("add ITEM to LIST in FILE",
// "remove ITEM from LIST at FILE:L:C (or the group there that holds it)",
// "set LIST to ITEM at FILE:L:C", "change the LIST entry at FILE:L:C that
// refuses ITEM", each with "  [warning: widens W]" where it widens), and
// back: what `aasmc suggest` reads of a text report. The parse gives every
// field but the document, which the sentence does not name; nullopt for a
// sentence edit_text does not write.
std::string edit_text(const Edit& edit);
std::optional<Edit> parse_edit_text(std::string_view sentence);

// `context`: the run's ${CWD} and ${HOME}, for matching paths to rule
// templates and writing the edit's path as a template.
Explanation explain(const Denial& denial, const plan::Plan& plan, const LaunchContext& context);

enum class Detail { kOff, kSummary, kFull };

// The report printed on stderr at the end of a run: whether the plan has
// provenance, then one block per distinct denial. What this run cannot see
// (`unseen`) is said only when the command failed: under kFull one line per
// kind; under kSummary, only when nothing was recorded, one line pointing
// to --explain and --denials=full (a failing command under a typical plan
// would otherwise get three lines of caveats every time). Empty when there
// is nothing to say or `detail` is kOff.
std::string render_report(const Log& log, const plan::Plan& plan, const LaunchContext& context,
                          const std::vector<std::string>& unseen, bool command_failed, Detail detail);

inline constexpr const char* kNoProvenance = "no provenance in this plan (compiled by an older aasmc): recompile it to "
                                             "see the policy line behind each denial";

}  // namespace aasm::denials
