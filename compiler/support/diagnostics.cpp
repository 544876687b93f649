#include "support/diagnostics.h"

#include <algorithm>

#include "support/diagnostic_formats.h"

namespace aasmc {
namespace {

llvm::SourceMgr::DiagKind kind_of(Severity severity) {
  switch (severity) {
    case Severity::kError: return llvm::SourceMgr::DK_Error;
    case Severity::kWarning: return llvm::SourceMgr::DK_Warning;
    case Severity::kNote: return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}

}  // namespace

const char* severity_name(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

Diagnostic Diagnostics::make(llvm::SMLoc at, Severity severity, const std::string& message, const char* id,
                             llvm::SMRange range) const {
  Diagnostic d;
  d.severity = severity;
  d.id = id ? id : "";
  d.message = message;
  d.origin = Diagnostic::Origin::kSource;
  // The text the clang-style output prints, rendered now while the buffers
  // are certainly alive; the fields below are read back from it.
  const std::string text = id ? message + " [" + id + "]" : message;
  llvm::ArrayRef<llvm::SMRange> ranges;
  if (range.isValid()) ranges = range;
  d.rendered = sources_.GetMessage(at, kind_of(severity), text, ranges);
  if (at.isValid()) {
    d.file = d.rendered.getFilename().str();
    d.line = unsigned(std::max(d.rendered.getLineNo(), 0));
    d.column = unsigned(std::max(d.rendered.getColumnNo(), 0)) + 1;
    d.source_line = d.rendered.getLineContents().str();
    if (!d.rendered.getRanges().empty()) d.end_column = d.rendered.getRanges().front().second + 1;
  }
  return d;
}

void Diagnostics::add(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::kError) ++errors_;
  // A note belongs to the error or warning just before it; one with nothing
  // before it stands alone.
  if (diagnostic.severity == Severity::kNote && !diagnostics_.empty()) {
    diagnostics_.back().notes.push_back(std::move(diagnostic));
    return;
  }
  diagnostics_.push_back(std::move(diagnostic));
}

void Diagnostics::error(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range) {
  add(make(at, Severity::kError, message, id, range));
}

void Diagnostics::warning(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range) {
  add(make(at, Severity::kWarning, message, id, range));
}

void Diagnostics::note(llvm::SMLoc at, const std::string& message) {
  add(make(at, Severity::kNote, message, nullptr, {}));
}

void Diagnostics::file_error(const std::string& path, const std::string& message, const char* id) {
  Diagnostic d;
  d.origin = Diagnostic::Origin::kFile;
  d.id = id ? id : "";
  d.message = message;
  d.file = path;
  // Line 1, column 1: tools that jump to `file:line:col` still land in the file.
  d.line = 1;
  d.column = 1;
  add(std::move(d));
}

void Diagnostics::file_warning(const std::string& path, const std::string& message, const char* id) {
  file_error(path, message, id);
  diagnostics_.back().severity = Severity::kWarning;
  --errors_;
}

void Diagnostics::global_error(const std::string& message, const char* id) {
  Diagnostic d;
  d.origin = Diagnostic::Origin::kGlobal;
  d.id = id ? id : "";
  d.message = message;
  add(std::move(d));
}

void Diagnostics::global_warning(const std::string& message, const char* id) {
  global_error(message, id);
  diagnostics_.back().severity = Severity::kWarning;
  --errors_;
}

void Diagnostics::flush(llvm::raw_ostream& out, DiagnosticFormat format, const RenderOptions& options) {
  render_diagnostics(diagnostics_, sources_, format, out, options);
  out.flush();
  diagnostics_.clear();
}

std::string closest_match(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates) {
  std::string best;
  unsigned best_distance = ~0u;
  const unsigned limit = std::max<unsigned>(2, unsigned(word.size() / 3));
  for (llvm::StringRef candidate : candidates) {
    const unsigned d = word.edit_distance(candidate, true, limit + 1);
    if (d <= limit && d < best_distance) {
      best_distance = d;
      best = candidate.str();
    }
  }
  return best;
}

}  // namespace aasmc
