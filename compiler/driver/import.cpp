// `aasmc import --from srt|oci FILE.json [-o POLICY.yaml]`: a policy users
// already have as an aasm policy document (import/import_policy.h,
// docs/import.md). Every element of the input is reported: tightened and
// not expressible ones as warnings (AASM0151, AASM0152) at their
// file:line:col, every one in the document's comments and in --json. A
// fault of the input is one error and no output file. Exit codes as compile's.
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "backend/check_lowerable.h"
#include "backend/plan_builder.h"
#include "driver/cli.h"
#include "driver/verbs.h"
#include "import/import_policy.h"
#include "frontend/json_tree.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"

namespace aasmc {

using namespace cli;

namespace {

using Json = nlohmann::ordered_json;

struct ImportOptions {
  std::string from, input, output, name;
  std::vector<Target> targets = all_target_list();
  bool json = false;
  DiagnosticFormat diagnostics = DiagnosticFormat::kText;
};

struct Format {
  const char* name;
  std::optional<ImportedPolicy> (*read)(const YamlNode&, const std::vector<Target>&, Diagnostics&);
};

constexpr Format kFormats[] = {
    {"srt", import_srt_settings},
    {"oci", import_oci_profile},
};

const Format* find_format(const std::string& name) {
  for (const Format& format : kFormats)
    if (name == format.name) return &format;
  return nullptr;
}

int parse(const Args& args, ImportOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string& into) { return take_option_value(args, i, into); };
    int rc = -1;
    if (arg == "--from") rc = value(options.from);
    else if (arg == "-o") rc = value(options.output);
    else if (arg == "--name") rc = value(options.name);
    else if (arg == "--json") options.json = true, rc = kExitOk;
    else if ((rc = take_arch_option(args, i, options.targets)) != -1) {}
    else if ((rc = take_format_option(args, i, options.diagnostics)) != -1) {}
    else if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option '" + arg + "'");
    else if (!options.input.empty()) return usage_error("import reads one file; '" + arg + "' is a second");
    else options.input = arg, rc = kExitOk;
    if (rc != kExitOk) return rc;
  }
  if (options.from.empty()) return usage_error("import needs --from (srt, oci)");
  if (!find_format(options.from)) return usage_error("unknown import format '" + options.from + "' (srt, oci)");
  if (options.input.empty()) return usage_error("import needs the file to read");
  if (!options.name.empty() && !is_policy_name(options.name))
    return usage_error("--name '" + options.name + "' is no policy name ([a-z0-9][a-z0-9._-]*)");
  return kExitOk;
}

// The imported document must be one `aasmc compile` accepts for its
// targets; when it is not (a call's argument regions that, with a safe
// default, pass libseccomp's limits), the compiler's reasons are the error
// and nothing is written.
bool check_compiles(const std::string& text, const ImportedPolicy& policy, Diagnostics& diags) {
  llvm::SourceMgr sources;
  Diagnostics check(sources);
  std::vector<PolicyDocument> documents;
  load_policy_buffer(llvm::MemoryBuffer::getMemBufferCopy(text, "the imported policy"), check, documents);
  auto ir = build_ir(documents, policy.targets, check);
  if (ir && check.error_count() == 0) check_lowerable(*ir, check);
  for (const Diagnostic& d : check.diagnostics())
    if (d.severity == Severity::kError)
      diags.global_error("the policy the import makes does not compile, so it is not written: its line " + std::to_string(d.line) + ": " +
                             d.message,
                         d.id.c_str());
  return check.error_count() == 0;
}

void report(const ImportedPolicy& policy, Diagnostics& diags) {
  for (const ImportNote& note : policy.notes) {
    if (note.outcome == ImportOutcome::kCarried) continue;
    const char* id = note.outcome == ImportOutcome::kTightened ? diag::kImportTightened : diag::kImportNotExpressible;
    diags.warning(note.at, note.element + ": " + import_outcome_name(note.outcome) + ": " + note.detail, id);
  }
}

Json report_json(const ImportOptions& options, const ImportedPolicy& policy, const std::string& text,
                 const llvm::SourceMgr& sources) {
  Json targets = Json::array();
  for (const Target& target : policy.targets) targets.push_back(target.name);
  Json notes = Json::array();
  for (const ImportNote& note : policy.notes) {
    const auto [line, column] = sources.getLineAndColumn(note.at);
    notes.push_back({{"element", note.element},
                     {"line", line},
                     {"column", column},
                     {"outcome", import_outcome_name(note.outcome)},
                     {"detail", note.detail}});
  }
  return {{"schema", "aasm.dev/import/v1"},
          {"from", options.from},
          {"input", options.input},
          {"output", options.output.empty() ? Json(nullptr) : Json(options.output)},
          {"targets", targets},
          {"policy", text},
          {"report", notes}};
}

}  // namespace

int import_verb(const Args& args) {
  ImportOptions options;
  if (int rc = parse(args, options); rc != kExitOk) return rc;
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, options.diagnostics);
  auto buffer = llvm::MemoryBuffer::getFile(options.input, /*IsText=*/false, /*RequiresNullTerminator=*/true);
  if (!buffer) {
    diags.file_error(options.input, "cannot read the file to import: " + buffer.getError().message(), diag::kCannotRead);
    return kExitPolicyError;
  }
  const unsigned id = sources.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  const std::optional<YamlNode> root = load_json_document(id, diags);
  if (!root) return kExitPolicyError;
  std::optional<ImportedPolicy> policy = find_format(options.from)->read(*root, options.targets, diags);
  if (!policy) return kExitPolicyError;
  // In the input's order, as a reader goes through it.
  std::stable_sort(policy->notes.begin(), policy->notes.end(), [](const ImportNote& a, const ImportNote& b) {
    return a.at.getPointer() < b.at.getPointer();
  });
  const std::string name = options.name.empty() ? policy_name_for(options.input) : options.name;
  const std::string text = imported_policy_document(*policy, name, options.input, options.from, sources);
  if (!check_compiles(text, *policy, diags)) return kExitPolicyError;
  report(*policy, diags);
  if (!options.output.empty()) {
    if (llvm::Error error = write_plan_atomically(options.output, {text.begin(), text.end()})) {
      diags.global_error("cannot write '" + options.output + "': " + llvm::toString(std::move(error)), diag::kOutput);
      return kExitPolicyError;
    }
  }
  if (options.json) print_json(report_json(options, *policy, text, sources));
  else if (options.output.empty()) llvm::outs() << text;
  return kExitOk;
}

}  // namespace aasmc
