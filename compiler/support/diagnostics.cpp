#include "support/diagnostics.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

namespace aasmc {

void Diagnostics::print(llvm::SMLoc at, llvm::SourceMgr::DiagKind kind, const std::string& message,
                        const char* id, llvm::SMRange range) {
  const std::string text = id ? message + " [" + id + "]" : message;
  llvm::ArrayRef<llvm::SMRange> ranges;
  if (range.isValid()) ranges = range;
  sources_.PrintMessage(llvm::errs(), at, kind, text, ranges);
}

void Diagnostics::error(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range) {
  ++errors_;
  print(at, llvm::SourceMgr::DK_Error, message, id, range);
}

void Diagnostics::warning(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range) {
  print(at, llvm::SourceMgr::DK_Warning, message, id, range);
}

void Diagnostics::note(llvm::SMLoc at, const std::string& message) {
  print(at, llvm::SourceMgr::DK_Note, message, nullptr, {});
}

void Diagnostics::file_error(const std::string& path, const std::string& message, const char* id) {
  ++errors_;
  // Line 1, column 1: tools that jump to `file:line:col` still land in the file.
  llvm::WithColor::error(llvm::errs(), path + ":1:1") << message << " [" << id << "]\n";
}

void Diagnostics::global_error(const std::string& message, const char* id) {
  ++errors_;
  llvm::WithColor::error(llvm::errs(), "aasmc") << message << " [" << id << "]\n";
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
