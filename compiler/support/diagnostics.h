// Clang-style diagnostics over llvm::SourceMgr: `file:line:col: error: msg
// [AASMxxxx]`, the source line, a caret under the token. Every error of a run
// is collected; the driver decides the exit code from the count.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>

#include <string>

namespace aasmc {

// Stable diagnostic ids, documented in docs/diagnostics.md.
namespace diag {
inline constexpr const char* kCannotRead = "AASM0001";
inline constexpr const char* kYamlSyntax = "AASM0002";
inline constexpr const char* kEncoding = "AASM0003";
inline constexpr const char* kYamlFeature = "AASM0004";  // anchors, aliases, tags, merge keys
inline constexpr const char* kTooLarge = "AASM0005";
inline constexpr const char* kUnknownKey = "AASM0010";
inline constexpr const char* kDuplicateKey = "AASM0011";
inline constexpr const char* kWrongType = "AASM0012";
inline constexpr const char* kMissingKey = "AASM0013";
inline constexpr const char* kBadValue = "AASM0014";
inline constexpr const char* kBadPath = "AASM0020";
inline constexpr const char* kBadQuantity = "AASM0021";
inline constexpr const char* kCredentialValue = "AASM0022";  // warning
inline constexpr const char* kUnknownSyscall = "AASM0030";
inline constexpr const char* kUnknownGroup = "AASM0031";
inline constexpr const char* kBadAction = "AASM0032";
inline constexpr const char* kConditionSyntax = "AASM0040";
inline constexpr const char* kEmptyCascade = "AASM0050";
inline constexpr const char* kConflict = "AASM0053";
inline constexpr const char* kNothingRequested = "AASM0051";
inline constexpr const char* kDisjointTemplates = "AASM0052";
inline constexpr const char* kNotSupported = "AASM0090";
inline constexpr const char* kLowering = "AASM0100";
inline constexpr const char* kOutput = "AASM0101";
}  // namespace diag

class Diagnostics {
 public:
  explicit Diagnostics(llvm::SourceMgr& sources) : sources_(sources) {}

  void error(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range = {});
  void warning(llvm::SMLoc at, const std::string& message, const char* id, llvm::SMRange range = {});
  void note(llvm::SMLoc at, const std::string& message);
  // For a file that could not be read: there is no buffer to point into.
  void file_error(const std::string& path, const std::string& message, const char* id);
  // Not tied to a file (a whole-cascade or lowering fault).
  void global_error(const std::string& message, const char* id);

  unsigned error_count() const { return errors_; }
  llvm::SourceMgr& sources() { return sources_; }

 private:
  void print(llvm::SMLoc at, llvm::SourceMgr::DiagKind kind, const std::string& message, const char* id,
             llvm::SMRange range);
  llvm::SourceMgr& sources_;
  unsigned errors_ = 0;
};

// The closest candidate within a small edit distance, for "did you mean".
std::string closest_match(llvm::StringRef word, llvm::ArrayRef<llvm::StringRef> candidates);

}  // namespace aasmc
