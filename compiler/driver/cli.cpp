#include "driver/cli.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "backend/lowerings.h"
#include "backend/check_lowerable.h"
#include "backend/pinned_files.h"
#include "backend/plan_builder.h"
#include "backend/provenance.h"
#include "backend/socket_rules.h"
#include "base/option_value.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"
#include "support/diagnostic_formats.h"

namespace aasmc::cli {

namespace {

constexpr const char* kUsage =
    "usage: aasmc compile POLICY.yaml... -o PLAN [--arch x86_64,aarch64] [--print-ir]\n"
    "                     [--backend native|bwrap|systemd|oci|auto|NAME,NAME...] [--diagnostics-format=text|json|sarif]\n"
    "       aasmc explain POLICY.yaml... [--json] [--arch x86_64,aarch64] [--diagnostics-format=text|json|sarif]\n"
    "       aasmc show PLAN [--bpf | --json | --textconv]\n"
    "       aasmc digest PLAN\n"
    "       aasmc verify PLAN POLICY.yaml... [--arch x86_64,aarch64] [--json]\n"
    "                    [--diagnostics-format=text|json|sarif]\n"
    "       aasmc diff OLD NEW [--json] [--fail-on-widening]   (each a plan, or policies joined by ',')\n"
    "       aasmc suggest RECEIPT POLICY.yaml...\n"
    "       aasmc groups [--json]\n"
    "       aasmc backends [--json]\n"
    "       aasmc export --format oci|systemd POLICY.yaml... [-o FILE] [--json | --kubernetes]\n"
    "                    [--localhost-profile PATH] [--arch x86_64,aarch64] [--diagnostics-format=text|json|sarif]\n"
    "       aasmc import --from srt|oci FILE.json [-o POLICY.yaml] [--name NAME] [--json]\n"
    "                    [--arch x86_64,aarch64] [--diagnostics-format=text|json|sarif]\n"
    "       aasmc receipt verify RECEIPT [--json]\n"
    "       aasmc --version\n";

}  // namespace

const char* usage_text() { return kUsage; }

void error(const std::string& message) { llvm::WithColor::error(llvm::errs(), "aasmc") << message << "\n"; }

int usage_error(const std::string& message) {
  llvm::WithColor::error(llvm::errs(), "aasmc") << message << "\n" << kUsage;
  return kExitUsage;
}

bool take_flag(std::vector<std::string>& args, const char* name) {
  const auto at = std::find(args.begin(), args.end(), name);
  if (at == args.end()) return false;
  args.erase(at);
  return true;
}

std::optional<std::string> take_value(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size() || !aasm::is_option_value(args[i + 1])) return std::nullopt;
  return args[++i];
}

int take_option_value(const std::vector<std::string>& args, size_t& i, std::string& into) {
  const std::string& option = args[i];
  std::optional<std::string> given = take_value(args, i);
  if (!given) return usage_error(option + " needs a value");
  into = *given;
  return kExitOk;
}

void print_json(const nlohmann::ordered_json& document) { llvm::outs() << dump(document, 2); }

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

int take_format_option(const std::vector<std::string>& args, size_t& i, DiagnosticFormat& format) {
  static const std::string kName = "--diagnostics-format";
  std::string value;
  if (args[i] == kName) {
    std::optional<std::string> given = take_value(args, i);
    if (!given) return usage_error(kName + " needs a value (text, json, sarif)");
    value = *given;
  } else if (args[i].rfind(kName + "=", 0) == 0) {
    value = args[i].substr(kName.size() + 1);
  } else {
    return -1;
  }
  auto parsed = parse_diagnostic_format(value);
  if (!parsed) return usage_error("unknown diagnostics format '" + value + "' (text, json, sarif)");
  format = *parsed;
  return kExitOk;
}

int take_arch_option(const std::vector<std::string>& args, size_t& i, std::vector<Target>& targets) {
  if (args[i] != "--arch") return -1;
  const std::optional<std::string> value = take_value(args, i);
  if (!value) return usage_error("--arch needs a value");
  targets.clear();
  for (const std::string& name : split(*value, ',')) {
    auto target = find_target(name);
    if (!target) return usage_error("unknown architecture '" + name + "' (x86_64, aarch64)");
    targets.push_back(*target);
  }
  return kExitOk;
}

std::vector<Target> all_target_list() { return {all_targets().begin(), all_targets().end()}; }

FlushAtExit::~FlushAtExit() {
  RenderOptions options;
  options.tool_version = kCompilerVersion;
  llvm::errs().SetBuffered();  // stderr is unbuffered: one write per piece of every diagnostic otherwise
  diags_.flush(llvm::errs(), format_, options);
}

aasm::Result<LoadedPlan> load_plan(const std::string& path) {
  auto bytes = aasm::plan::read_plan_file(path);
  if (!bytes) return bytes.error();
  auto plan = aasm::plan::decode_plan(*bytes);
  if (!plan) return aasm::make_error(path + ": " + plan.error().message);
  return LoadedPlan{std::move(*bytes), std::move(*plan)};
}

std::string without_path(const std::string& path, const std::string& message) {
  return message.starts_with(path + ": ") ? message.substr(path.size() + 2) : message;
}

std::optional<std::vector<uint8_t>> compile_in_memory(const CompileRequest& request, Diagnostics& diags) {
  std::vector<PolicyDocument> documents;
  for (const std::string& input : canonical_input_order(request.inputs)) load_policy_file(input, diags, documents);
  // The later passes run even after front-end errors, to report every error.
  auto ir = build_ir(documents, request.targets, diags);
  if (!ir || diags.error_count() > 0) return std::nullopt;
  if (request.print_ir) {
    llvm::Expected<PolicyIR> lowered = with_socket_rules(*ir);
    if (!lowered) {
      diags.global_error(llvm::toString(lowered.takeError()), diag::kLowering);
      return std::nullopt;
    }
    llvm::outs() << print_ir(*lowered);
  }
  if (!check_lowerable(*ir, diags)) return std::nullopt;
  auto pinned = hash_pinned_files(ir->filesystem, diags);
  if (!pinned) return std::nullopt;
  const std::optional<std::vector<Candidate>> candidates = choose_backends(*ir, request.backend, diags);
  if (!candidates) return std::nullopt;
  auto plan = build_plan(*ir);
  if (!plan) {
    diags.global_error(llvm::toString(plan.takeError()), diag::kLowering);
    return std::nullopt;
  }
  add_lowerings(*ir, *candidates, request.backend.several, *plan);
  plan->provenance = build_provenance(documents, *ir, diags.sources());
  plan->pinned = std::move(*pinned);
  if (aasm::Status encodable = aasm::plan::check_encodable(*plan); !encodable) {
    diags.global_error(encodable.error().message, diag::kLowering);
    return std::nullopt;
  }
  return aasm::plan::encode_plan(*plan);
}

}  // namespace aasmc::cli
