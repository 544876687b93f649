// libFuzzer target for `aasmc import`: JSON bytes in, through the strict
// reader (frontend/json_tree.h) and both importers (import/import_policy.h),
// as the driver runs them. Nothing may crash, leak or hang; a refusal always
// says why, with a position; what is imported renders as a document.
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "import/import_policy.h"
#include "frontend/json_tree.h"
#include "support/diagnostics.h"
#include "tables/targets.h"

namespace {

void check(bool promise) {
  if (!promise) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > aasmc::kMaxPolicyFileBytes + 1) return 0;  // refused before parsing
  const llvm::StringRef bytes(reinterpret_cast<const char*>(data), size);
  const std::vector<aasmc::Target> targets(aasmc::all_targets().begin(), aasmc::all_targets().end());
  for (auto* import : {aasmc::import_oci_profile, aasmc::import_srt_settings}) {
    llvm::SourceMgr sources;
    aasmc::Diagnostics diags(sources);
    const unsigned id = sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.json"), llvm::SMLoc());
    const std::optional<aasmc::YamlNode> root = aasmc::load_json_document(id, diags);
    const std::optional<aasmc::ImportedPolicy> policy = root ? import(*root, targets, diags) : std::nullopt;
    if (policy) {
      check(diags.error_count() == 0);
      check(!aasmc::imported_policy_document(*policy, "fuzz", "fuzz.json", "fuzz", sources).empty());
    } else {
      check(diags.error_count() > 0);
    }
    for (const aasmc::Diagnostic& d : diags.diagnostics()) check(d.line >= 1 && d.column >= 1 && !d.id.empty());
  }
  return 0;
}
