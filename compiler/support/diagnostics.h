// Clang-style diagnostics over llvm::SourceMgr: `file:line:col: error: msg
// [AASMxxxx]`, the source line, a caret under the token. Every diagnostic of
// a run is collected as a value (a Diagnostic record); the driver decides the
// exit code from the error count and flushes them once, at the end, in the
// chosen format (support/diagnostic_formats.h).
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string>
#include <vector>

namespace aasmc {

// Stable diagnostic ids (diag::kBadValue is "AASM0014"), from the one table
// of ids, support/diagnostics.def, with their names, severities and
// meanings (diagnostic_table(), support/diagnostic_formats.h).
namespace diag {
#define AASM_DIAGNOSTIC(name, id, severity, summary) inline constexpr const char* name = id;
#include "support/diagnostics.def"
}  // namespace diag

enum class Severity { kError, kWarning, kNote };
enum class DiagnosticFormat { kText, kJson, kSarif };

// What the machine-readable formats need beyond the diagnostics themselves.
struct RenderOptions {
  std::string tool_version;    // SARIF tool.driver.version
  std::string base_directory;  // SARIF uris are relative to it when a file is under it; empty: the current directory
};
const char* severity_name(Severity severity);  // "error", "warning", "note"

// One diagnostic as a value. Positions are 1-based and count bytes, as the
// text output does; 0 means unknown (a diagnostic not tied to a file has no
// file, one about an unreadable file is at line 1, column 1).
struct Diagnostic {
  enum class Origin {
    kSource,  // points into a SourceMgr buffer
    kFile,    // a file that could not be read: `file:1:1`
    kGlobal,  // not tied to a file: a whole-cascade or lowering fault
  };

  Severity severity = Severity::kError;
  std::string id;       // AASMxxxx; empty for notes
  std::string message;  // without the ` [id]` suffix
  std::string file;     // the buffer's name (the path as given); empty for kGlobal
  unsigned line = 0;
  unsigned column = 0;
  std::optional<unsigned> end_column;  // one past the range's last byte, when a range was given
  std::string source_line;             // the text of `line`, without its newline
  std::vector<Diagnostic> notes;       // the notes reported right after this one

  // What the text format needs to print it exactly as clang does.
  Origin origin = Origin::kSource;
  llvm::SMDiagnostic rendered;
};

class Diagnostics {
 public:
  explicit Diagnostics(llvm::SourceMgr& sources) : sources_(sources) {}

  void error(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range = {});
  void warning(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range = {});
  // Attached to the error or warning reported just before it.
  void note(llvm::SMLoc at, const std::string& message);
  // For a file that could not be read: there is no buffer to point into.
  void file_error(const std::string& path, const std::string& message, const char* id);
  // A warning about such a file as a whole (a record of `aasmc suggest`'s input).
  void file_warning(const std::string& path, const std::string& message, const char* id);
  // Not tied to a file (a whole-cascade or lowering fault).
  void global_error(const std::string& message, const char* id);
  void global_warning(const std::string& message, const char* id);

  unsigned error_count() const { return errors_; }
  llvm::SourceMgr& sources() const { return sources_; }

  // Every error and warning so far, in report order, each with its notes.
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

  // Writes every collected diagnostic to `out` in `format` and forgets them
  // (error_count() is kept). The text format colors only a terminal; json
  // and sarif always write one document, empty or not.
  void flush(llvm::raw_ostream& out, DiagnosticFormat format = DiagnosticFormat::kText,
             const RenderOptions& options = {});

 private:
  Diagnostic make(llvm::SMLoc at, Severity severity, const std::string& message, const char* id,
                  llvm::SMRange range) const;
  void add(Diagnostic diagnostic);

  llvm::SourceMgr& sources_;
  std::vector<Diagnostic> diagnostics_;
  unsigned errors_ = 0;
};

// The closest candidate within a small edit distance, for "did you mean".
std::string closest_match(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates);

}  // namespace aasmc
