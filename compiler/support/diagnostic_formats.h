// The output formats of the collected diagnostics (docs/diagnostics.md):
// `text` (clang style, exactly what aasmc always printed), `json` (one
// document, aasmc's own shape) and `sarif` (SARIF 2.1.0 for GitHub code
// scanning). Also the diagnostic ids of support/diagnostics.def as values,
// with their names and descriptions.
#pragma once

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

#include "support/diagnostics.h"

namespace aasmc {

// One row per stable id of support/diagnostics.def.
struct DiagnosticInfo {
  const char* id;       // AASMxxxx
  const char* name;     // SARIF rule name, PascalCase
  const char* summary;  // SARIF shortDescription
  Severity level;       // SARIF defaultConfiguration.level
};
llvm::ArrayRef<DiagnosticInfo> diagnostic_table();
const DiagnosticInfo* find_diagnostic_info(llvm::StringRef id);

inline constexpr const char* kSarifSchema = "https://json.schemastore.org/sarif-2.1.0.json";
inline constexpr const char* kToolInformationUri = "https://aasm.dev/";

// "text", "json", "sarif".
std::optional<DiagnosticFormat> parse_diagnostic_format(llvm::StringRef name);

void render_diagnostics(llvm::ArrayRef<Diagnostic> diagnostics, const llvm::SourceMgr& sources,
                        DiagnosticFormat format, llvm::raw_ostream& out, const RenderOptions& options);
void render_text(llvm::ArrayRef<Diagnostic> diagnostics, const llvm::SourceMgr& sources, llvm::raw_ostream& out);
std::string render_json(llvm::ArrayRef<Diagnostic> diagnostics);
// A JSON document as aasmc prints every one (diagnostics, show, explain,
// groups --json): keys in the order written, `indent` spaces (-1: one line),
// a stray byte replaced rather than thrown on, one final newline.
std::string dump(const nlohmann::ordered_json& document, int indent);
std::string render_sarif(llvm::ArrayRef<Diagnostic> diagnostics, const RenderOptions& options);

// The SARIF artifactLocation.uri of `file`: relative to `base_directory`
// (forward slashes, no `./`) when the file is under it, else an absolute
// `file://` URI; percent-encoded either way. `relative` tells which.
std::string artifact_uri(llvm::StringRef file, llvm::StringRef base_directory, bool* relative = nullptr);

// A 1-based byte column of `line` as a 1-based UTF-16 code unit column
// (SARIF's default columnKind).
unsigned utf16_column(llvm::StringRef line, unsigned byte_column);

}  // namespace aasmc
