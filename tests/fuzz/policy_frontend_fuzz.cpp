// libFuzzer target for the policy front-end: YAML bytes in, diagnostics out.
// The bytes take the driver's path (load_policy_buffer: encoding and size
// checks, yaml-cpp, the strict tree, the document parser; then build_ir for
// both targets: merge, name and condition resolution) and every diagnostic is
// rendered in every format to a null stream. Nothing may crash, leak, hang,
// or break the front-end's promises checked below.
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "frontend/parse_policy.h"
#include "frontend/yaml_tree.h"
#include "middle/build_ir.h"
#include "middle/ir.h"
#include "support/diagnostic_formats.h"
#include "support/diagnostics.h"
#include "tables/targets.h"

namespace {

void check(bool promise) {
  if (!promise) std::abort();
}

// Every diagnostic points where the text format can print it.
void check_diagnostic(const aasmc::Diagnostic& d) {
  check(!d.message.empty());
  if (d.severity != aasmc::Severity::kNote) check(!d.id.empty());
  if (!d.file.empty()) check(d.line >= 1 && d.column >= 1);
  for (const aasmc::Diagnostic& note : d.notes) {
    check(note.severity == aasmc::Severity::kNote);
    check_diagnostic(note);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The loader refuses files over its limit before parsing; larger inputs
  // would only test that one comparison.
  if (size > aasmc::kMaxPolicyFileBytes + 1) return 0;
  llvm::SourceMgr sources;
  aasmc::Diagnostics diags(sources);
  std::vector<aasmc::PolicyDocument> documents;
  aasmc::load_policy_buffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(reinterpret_cast<const char*>(data), size), "fuzz.yaml"),
      diags, documents);
  const unsigned front_end_errors = diags.error_count();

  // As the driver does: the later passes run even after front-end errors.
  std::vector<aasmc::Target> targets(aasmc::all_targets().begin(), aasmc::all_targets().end());
  auto ir = aasmc::build_ir(documents, targets, diags);
  if (ir && diags.error_count() == 0) {
    check(front_end_errors == 0);
    const std::string explained = aasmc::explain_ir(*ir, sources);
    const std::string printed = aasmc::print_ir(*ir);
    (void)explained;
    (void)printed;
  } else {
    check(diags.error_count() > 0);  // a refusal always says why
  }

  for (const aasmc::Diagnostic& d : diags.diagnostics()) check_diagnostic(d);
  aasmc::RenderOptions options;
  options.tool_version = "fuzz";
  options.base_directory = "/src";
  aasmc::render_text(diags.diagnostics(), sources, llvm::nulls());
  const std::string json = aasmc::render_json(diags.diagnostics());
  const std::string sarif = aasmc::render_sarif(diags.diagnostics(), options);
  check(!json.empty() && !sarif.empty());
  diags.flush(llvm::nulls(), aasmc::DiagnosticFormat::kText, options);
  check(diags.diagnostics().empty());
  return 0;
}
