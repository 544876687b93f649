// `aasmc compile` and `aasmc explain`: a cascade to a plan file, or to its
// effective policy with provenance.
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include "backend/plan_builder.h"
#include "backend/socket_rules.h"
#include "driver/cli.h"
#include "driver/verbs.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"

namespace aasmc {

using namespace cli;

int compile_verb(const Args& args) {
  CompileRequest request;
  std::string output;
  DiagnosticFormat format = DiagnosticFormat::kText;
  request.targets = all_target_list();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-o") {
      std::optional<std::string> value = take_value(args, i);
      if (!value) return usage_error(arg + " needs a value");
      output = *value;
    } else if (arg == "--print-ir") {
      request.print_ir = true;
    } else if (arg == "--backend" || arg.starts_with("--backend=")) {
      std::string value;
      if (arg != "--backend") value = arg.substr(std::string("--backend=").size());
      else if (std::optional<std::string> given = take_value(args, i)) value = *given;
      else return usage_error("--backend needs a value (native, systemd, oci, bwrap, auto, or a list)");
      std::string why;
      if (!parse_backend_choice(value, request.backend, why)) return usage_error(why);
    } else if (int rc = take_arch_option(args, i, request.targets); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (int rc = take_format_option(args, i, format); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else {
      request.inputs.push_back(arg);
    }
  }
  if (request.inputs.empty()) return usage_error("compile needs at least one policy file");
  if (output.empty()) return usage_error("compile needs -o PLAN");
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, format);
  const std::optional<std::vector<uint8_t>> bytes = compile_in_memory(request, diags);
  if (!bytes) return kExitPolicyError;
  if (llvm::Error error = write_plan_atomically(output, *bytes)) {
    diags.global_error("cannot write '" + output + "': " + llvm::toString(std::move(error)), diag::kOutput);
    return kExitPolicyError;
  }
  return kExitOk;
}

int explain_verb(const Args& args) {
  std::vector<Target> targets = all_target_list();
  std::vector<std::string> inputs;
  DiagnosticFormat format = DiagnosticFormat::kText;
  bool json = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (int rc = take_arch_option(args, i, targets); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (int rc = take_format_option(args, i, format); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (args[i] == "--json") {
      json = true;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return usage_error("unknown option '" + args[i] + "'");
    } else {
      inputs.push_back(args[i]);
    }
  }
  if (inputs.empty()) return usage_error("explain needs at least one policy file");
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, format);
  std::vector<PolicyDocument> documents;
  for (const std::string& input : canonical_input_order(inputs)) load_policy_file(input, diags, documents);
  auto ir = build_ir(documents, targets, diags);
  if (!ir || diags.error_count() > 0) return kExitPolicyError;
  // The IR as the backend lowers it, socket rules included.
  llvm::Expected<PolicyIR> lowered = with_socket_rules(*ir);
  if (!lowered) {
    diags.global_error(llvm::toString(lowered.takeError()), diag::kLowering);
    return kExitPolicyError;
  }
  if (json)
    print_json(explain_ir_json(*lowered, sources));
  else
    llvm::outs() << explain_ir(*lowered, sources);
  return kExitOk;
}

}  // namespace aasmc
