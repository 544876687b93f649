// Edits of a policy's YAML text, made where yaml-cpp's marks put each node,
// so every comment, blank line and layout choice the author made survives:
// the text is patched, never re-emitted. `aasmc suggest` turns the edits a
// run's denial report proposes (docs/receipts.md#denials) into these, and
// prints the result as a unified diff for the user to review and apply.
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstddef>
#include <string>
#include <vector>

#include "frontend/yaml_tree.h"

namespace aasmc {

// One edit of the denial report, for one document: `op` add, remove, set or
// change; `list` the node under `spec:` ("filesystem.read.allow"); `line`
// and `column` (1-based) the node it names, 0 for add.
struct PolicyEdit {
  std::string list, op, item;
  unsigned line = 0, column = 0;
  std::string widens;  // the sensitive domain it opens, "" for none
};

// Replaces `length` bytes at `offset` with `text`; several insertions at one
// offset keep their order.
struct TextEdit {
  size_t offset = 0, length = 0;
  std::string text;
};

// The text edits that carry out `edits` in one document of `text` (the
// buffer `document` was parsed from). Edits already true of the text (the
// path is already listed) are left out; adds to one list become one
// insertion; lists and keys that do not exist yet are created beneath the
// deepest existing one, in the style of their parent (block or flow). An
// edit that widens a sensitive domain gets a comment line above it. What
// cannot be expressed as an edit of this text (a group's rule, a rule-less
// node) is kept as a comment at its place, listed in `by_hand`.
struct EditPlan {
  std::vector<TextEdit> changes;
  struct Note {
    enum class Kind {
      kNoPlace,  // the edit has no place in this text: nothing of it is made
      kWidens,   // the edit widens a sensitive domain (a comment says so too)
      kByHand,   // only a comment at its place says what to do
    };
    size_t offset;  // in `text`, for the diagnostic
    std::string message;
    Kind kind;
  };
  std::vector<Note> notes;
};
EditPlan plan_policy_edits(llvm::StringRef text, const YamlDocument& document, const std::vector<PolicyEdit>& edits);

// `text` with the edits applied (they must not overlap; offsets of `text`).
std::string apply_text_edits(llvm::StringRef text, std::vector<TextEdit> edits);

// A unified diff (three lines of context, `patch -p0` applies it) from
// `old_text` to the same file with `edits` applied; "" when they change
// nothing. `name` is the file's path in both header lines.
std::string unified_diff(llvm::StringRef name, llvm::StringRef old_text, const std::vector<TextEdit>& edits);

}  // namespace aasmc
