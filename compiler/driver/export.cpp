// `aasmc export --format oci|systemd POLICY.yaml...`: the policy in another
// backend's own format (docs/backends.md), with every control that format
// cannot carry stated on stderr (AASM0144, from backend/backends.def) and in
// --json. What it cannot hold exactly is refused (AASM0145), never written
// weaker. Exit codes as compile's.
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include "backend/negotiate.h"
#include "backend/oci_export.h"
#include "backend/plan_builder.h"
#include "backend/socket_rules.h"
#include "backend/systemd_export.h"
#include "driver/cli.h"
#include "driver/verbs.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"
#include "support/diagnostic_formats.h"

namespace aasmc {

using namespace cli;

namespace {

using Json = nlohmann::ordered_json;

struct ExportOptions {
  std::vector<std::string> inputs;
  std::vector<Target> targets = all_target_list();
  std::string format, output, localhost_profile;
  bool json = false, kubernetes = false;
  DiagnosticFormat diagnostics = DiagnosticFormat::kText;
};

// The artifact of one format: its text, and what --json holds of it.
struct Artifact {
  std::string text;
  Json document;
  Json extra;  // format-specific members of --json (oci: kubernetes)
  std::vector<std::string> details;  // what was left out, call by call or path by path
};

std::string default_localhost_profile(const ExportOptions& options, const PolicyIR& ir) {
  if (!options.localhost_profile.empty()) return options.localhost_profile;
  if (!options.output.empty()) return "aasm/" + llvm::sys::path::filename(options.output).str();
  return "aasm/" + (ir.sources.empty() ? std::string("policy") : ir.sources.back().name) + ".json";
}

llvm::Expected<Artifact> oci_artifact(const PolicyIR& ir, const ExportOptions& options) {
  llvm::Expected<Json> profile = oci_seccomp_profile(ir);
  if (!profile) return profile.takeError();
  Artifact out;
  out.text = dump(*profile, 2);
  out.document = *profile;
  out.extra["kubernetes"] = kubernetes_security_context(ir, default_localhost_profile(options, ir));
  return out;
}

llvm::Expected<Artifact> systemd_artifact(const PolicyIR& ir, const ExportOptions&) {
  llvm::Expected<SystemdUnit> unit = systemd_unit(ir);
  if (!unit) return unit.takeError();
  Artifact out;
  out.text = unit->text();
  out.document = Json::array();
  for (const auto& [key, value] : unit->properties) out.document.push_back({{"key", key}, {"value", value}});
  out.details = unit->gaps;
  return out;
}

struct Format {
  const char* name;
  Backend backend;
  llvm::Expected<Artifact> (*make)(const PolicyIR&, const ExportOptions&);
};

constexpr Format kFormats[] = {
    {"oci", Backend::kOci, oci_artifact},
    {"systemd", Backend::kSystemd, systemd_artifact},
};

const Format* find_format(const std::string& name) {
  for (const Format& format : kFormats)
    if (name == format.name) return &format;
  return nullptr;
}

int parse(const Args& args, ExportOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string& into) { return take_option_value(args, i, into); };
    int rc = -1;
    if (arg == "--format") rc = value(options.format);
    else if (arg == "-o") rc = value(options.output);
    else if (arg == "--localhost-profile") rc = value(options.localhost_profile);
    else if (arg == "--json") options.json = true, rc = kExitOk;
    else if (arg == "--kubernetes") options.kubernetes = true, rc = kExitOk;
    else if ((rc = take_arch_option(args, i, options.targets)) != -1) {}
    else if ((rc = take_format_option(args, i, options.diagnostics)) != -1) {}
    else if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option '" + arg + "'");
    else options.inputs.push_back(arg), rc = kExitOk;
    if (rc != kExitOk) return rc;
  }
  if (options.format.empty()) return usage_error("export needs --format (oci, systemd)");
  if (!find_format(options.format)) return usage_error("unknown export format '" + options.format + "' (oci, systemd)");
  if (options.inputs.empty()) return usage_error("export needs at least one policy file");
  if (options.json && options.kubernetes) return usage_error("export takes one of --json, --kubernetes");
  return kExitOk;
}

// What the format cannot carry, each a warning at the setting that asks for it.
Json not_carried(const PolicyIR& ir, const Format& format, Diagnostics& diags) {
  Json out = Json::array();
  for (const ControlOutcome& o : negotiate(ir, format.backend)) {
    if (o.outcome == Negotiated::kEnforced) continue;
    const std::string control = aasm::control_name(o.request.control);
    report_at(diags, o.request.where,
              control + " is not carried by the " + format.name + " export (" + support_name(o.row.support) +
                  "): " + o.row.gap.str(),
              diag::kExportCannotCarry, false);
    out.push_back({{"control", control},
                   {"how", enforcement_name(o.row.how)},
                   {"support", support_name(o.row.support)},
                   {"gap", o.row.gap.str()}});
  }
  return out;
}

}  // namespace

int export_verb(const Args& args) {
  ExportOptions options;
  if (int rc = parse(args, options); rc != kExitOk) return rc;
  const Format& format = *find_format(options.format);
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, options.diagnostics);
  std::vector<PolicyDocument> documents;
  for (const std::string& input : canonical_input_order(options.inputs)) {
    // A plan holds compiled filters, not the rules: say so rather than fail as YAML.
    if (load_plan(input)) {
      diags.file_error(input,
                       "a plan holds compiled BPF, not the policy's rules: export from the policies it was compiled "
                       "from (aasmc verify PLAN POLICY... checks they are the same)",
                       diag::kExportCondition);
      continue;
    }
    load_policy_file(input, diags, documents);
  }
  auto ir = build_ir(documents, options.targets, diags);
  if (!ir || diags.error_count() > 0) return kExitPolicyError;
  llvm::Expected<PolicyIR> lowered = with_socket_rules(*ir);
  if (!lowered) {
    diags.global_error(llvm::toString(lowered.takeError()), diag::kLowering);
    return kExitPolicyError;
  }
  llvm::Expected<Artifact> artifact = format.make(*lowered, options);
  if (!artifact) {
    diags.global_error("cannot export to " + std::string(format.name) + ": " + llvm::toString(artifact.takeError()),
                       diag::kExportCondition);
    return kExitPolicyError;
  }
  const Json carried_not = not_carried(*lowered, format, diags);
  for (const std::string& detail : artifact->details)
    diags.global_warning(std::string(format.name) + " export: " + detail, diag::kExportCannotCarry);
  if (!options.output.empty()) {
    const std::vector<uint8_t> bytes(artifact->text.begin(), artifact->text.end());
    if (llvm::Error error = write_plan_atomically(options.output, bytes)) {
      diags.global_error("cannot write '" + options.output + "': " + llvm::toString(std::move(error)), diag::kOutput);
      return kExitPolicyError;
    }
  }
  if (options.json) {
    Json out = {{"schema", "aasm.dev/export/v1"}, {"format", format.name}};
    Json targets = Json::array();
    for (const Target& target : options.targets) targets.push_back(target.name);
    out["targets"] = targets;
    out["artifact"] = artifact->document;
    for (const auto& [key, value] : artifact->extra.items()) out[key] = value;
    out["not_carried"] = carried_not;
    out["details"] = artifact->details;
    print_json(out);
  } else if (options.kubernetes) {
    if (artifact->extra.contains("kubernetes")) print_json(artifact->extra["kubernetes"]);
  } else if (options.output.empty()) {
    llvm::outs() << artifact->text;
  }
  return kExitOk;
}

}  // namespace aasmc
