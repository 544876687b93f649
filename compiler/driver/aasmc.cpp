// aasmc: compile policy cascades into plans, and show plans.
// Exit codes: 0 ok, 1 policy errors, 2 usage errors (docs/cli.md).
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/check_lowerable.h"
#include "backend/plan_builder.h"
#include "backend/provenance.h"
#include "backend/socket_rules.h"
#include "driver/show.h"
#include "driver/suggest.h"
#include "frontend/parse_policy.h"
#include "middle/build_ir.h"
#include "plan/plan.h"
#include "support/diagnostic_formats.h"
#include "support/diagnostics.h"
#include "tables/syscall_groups.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitPolicyError = 1;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: aasmc compile POLICY.yaml... -o PLAN [--arch x86_64,aarch64] [--print-ir]\n"
    "                     [--diagnostics-format=text|json|sarif]\n"
    "       aasmc explain POLICY.yaml... [--arch x86_64,aarch64] [--diagnostics-format=text|json|sarif]\n"
    "       aasmc show PLAN [--bpf]\n"
    "       aasmc suggest RECEIPT POLICY.yaml...\n"
    "       aasmc groups\n"
    "       aasmc --version\n";

int usage_error(const std::string& message) {
  llvm::WithColor::error(llvm::errs(), "aasmc") << message << "\n" << kUsage;
  return kExitUsage;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

// `--diagnostics-format=FORMAT` or `--diagnostics-format FORMAT` at args[i]:
// kExitOk (i moved past it), kExitUsage, or -1 when args[i] is another option.
int take_format_option(const std::vector<std::string>& args, size_t& i, aasmc::DiagnosticFormat& format) {
  static const std::string kName = "--diagnostics-format";
  std::string value;
  if (args[i] == kName) {
    if (i + 1 >= args.size()) return usage_error(kName + " needs a value (text, json, sarif)");
    value = args[++i];
  } else if (args[i].rfind(kName + "=", 0) == 0) {
    value = args[i].substr(kName.size() + 1);
  } else {
    return -1;
  }
  auto parsed = aasmc::parse_diagnostic_format(value);
  if (!parsed) return usage_error("unknown diagnostics format '" + value + "' (text, json, sarif)");
  format = *parsed;
  return kExitOk;
}

// The IR as the backend lowers it, socket rules included: what explain and
// --print-ir print.
std::optional<aasmc::PolicyIR> as_lowered(const aasmc::PolicyIR& ir, aasmc::Diagnostics& diags) {
  llvm::Expected<aasmc::PolicyIR> lowered = aasmc::with_socket_rules(ir);
  if (!lowered) {
    diags.global_error(llvm::toString(lowered.takeError()), aasmc::diag::kLowering);
    return std::nullopt;
  }
  return std::move(*lowered);
}

// Writes every diagnostic of the run to stderr once, when the command
// returns, in the chosen format.
class FlushAtExit {
 public:
  FlushAtExit(aasmc::Diagnostics& diags, aasmc::DiagnosticFormat format) : diags_(diags), format_(format) {}
  FlushAtExit(const FlushAtExit&) = delete;
  FlushAtExit& operator=(const FlushAtExit&) = delete;
  ~FlushAtExit() {
    aasmc::RenderOptions options;
    options.tool_version = aasmc::kCompilerVersion;
    llvm::errs().SetBuffered();  // stderr is unbuffered: one write per piece of every diagnostic otherwise
    diags_.flush(llvm::errs(), format_, options);
  }

 private:
  aasmc::Diagnostics& diags_;
  aasmc::DiagnosticFormat format_;
};

struct CompileOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::vector<aasmc::Target> targets;
  bool print_ir = false;
  aasmc::DiagnosticFormat diagnostics_format = aasmc::DiagnosticFormat::kText;
};

int parse_compile_options(const std::vector<std::string>& args, CompileOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-o" || arg == "--arch") {
      if (i + 1 >= args.size()) return usage_error(arg + " needs a value");
      const std::string& value = args[++i];
      if (arg == "-o") {
        options.output = value;
        continue;
      }
      for (const std::string& name : split(value, ',')) {
        auto target = aasmc::find_target(name);
        if (!target) return usage_error("unknown architecture '" + name + "' (x86_64, aarch64)");
        options.targets.push_back(*target);
      }
    } else if (arg == "--print-ir") {
      options.print_ir = true;
    } else if (int rc = take_format_option(args, i, options.diagnostics_format); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else {
      options.inputs.push_back(arg);
    }
  }
  if (options.inputs.empty()) return usage_error("compile needs at least one policy file");
  if (options.output.empty()) return usage_error("compile needs -o PLAN");
  if (options.targets.empty()) options.targets.assign(aasmc::all_targets().begin(), aasmc::all_targets().end());
  return kExitOk;
}

int compile(const std::vector<std::string>& args) {
  CompileOptions options;
  if (int rc = parse_compile_options(args, options); rc != kExitOk) return rc;
  llvm::SourceMgr sources;
  aasmc::Diagnostics diags(sources);
  const FlushAtExit flush(diags, options.diagnostics_format);
  std::vector<aasmc::PolicyDocument> documents;
  for (const std::string& input : options.inputs) aasmc::load_policy_file(input, diags, documents);
  // The later passes run even after front-end errors, to report every error.
  auto ir = aasmc::build_ir(documents, options.targets, diags);
  if (!ir || diags.error_count() > 0) return kExitPolicyError;
  if (options.print_ir) {
    const std::optional<aasmc::PolicyIR> lowered = as_lowered(*ir, diags);
    if (!lowered) return kExitPolicyError;
    llvm::outs() << aasmc::print_ir(*lowered);
  }
  if (!aasmc::check_lowerable(*ir, diags)) return kExitPolicyError;
  auto plan = aasmc::build_plan(*ir);
  if (!plan) {
    diags.global_error(llvm::toString(plan.takeError()), aasmc::diag::kLowering);
    return kExitPolicyError;
  }
  plan->provenance = aasmc::build_provenance(documents, *ir, sources);
  if (aasm::Status encodable = aasm::plan::check_encodable(*plan); !encodable) {
    diags.global_error(encodable.error().message, aasmc::diag::kLowering);
    return kExitPolicyError;
  }
  if (llvm::Error error = aasmc::write_plan_atomically(options.output, aasm::plan::encode_plan(*plan))) {
    diags.global_error("cannot write '" + options.output + "': " + llvm::toString(std::move(error)),
                       aasmc::diag::kOutput);
    return kExitPolicyError;
  }
  return kExitOk;
}

// The effective policy of a cascade, each value with where it came from.
int explain(const std::vector<std::string>& args) {
  std::vector<aasmc::Target> targets(aasmc::all_targets().begin(), aasmc::all_targets().end());
  std::vector<std::string> inputs;
  aasmc::DiagnosticFormat format = aasmc::DiagnosticFormat::kText;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--arch") {
      if (++i >= args.size()) return usage_error("--arch needs a value");
      targets.clear();
      for (const std::string& name : split(args[i], ',')) {
        auto target = aasmc::find_target(name);
        if (!target) return usage_error("unknown architecture '" + name + "' (x86_64, aarch64)");
        targets.push_back(*target);
      }
    } else if (int rc = take_format_option(args, i, format); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return usage_error("unknown option '" + args[i] + "'");
    } else {
      inputs.push_back(args[i]);
    }
  }
  if (inputs.empty()) return usage_error("explain needs at least one policy file");
  llvm::SourceMgr sources;
  aasmc::Diagnostics diags(sources);
  const FlushAtExit flush(diags, format);
  std::vector<aasmc::PolicyDocument> documents;
  for (const std::string& input : inputs) aasmc::load_policy_file(input, diags, documents);
  auto ir = aasmc::build_ir(documents, targets, diags);
  if (!ir || diags.error_count() > 0) return kExitPolicyError;
  const std::optional<aasmc::PolicyIR> lowered = as_lowered(*ir, diags);
  if (!lowered) return kExitPolicyError;
  llvm::outs() << aasmc::explain_ir(*lowered, sources);
  return kExitOk;
}

int show(std::vector<std::string> args) {
  const auto bpf_flag = std::find(args.begin(), args.end(), "--bpf");
  const bool bpf = bpf_flag != args.end();
  if (bpf) args.erase(bpf_flag);
  if (args.size() != 1) return usage_error("show takes one plan file (and --bpf)");
  auto bytes = aasm::plan::read_plan_file(args[0]);
  if (!bytes) {
    llvm::WithColor::error(llvm::errs(), "aasmc") << bytes.error().message << "\n";
    return kExitPolicyError;
  }
  auto plan = aasm::plan::decode_plan(*bytes);
  if (!plan) {
    llvm::WithColor::error(llvm::errs(), "aasmc") << args[0] << ": " << plan.error().message << "\n";
    return kExitPolicyError;
  }
  llvm::outs() << aasmc::describe_plan(*plan, aasm::plan::plan_digest(*bytes), bpf);
  return kExitOk;
}

int groups(const std::vector<std::string>& args) {
  if (!args.empty()) return usage_error("groups takes no arguments");
  for (const aasmc::SyscallGroup& group : aasmc::all_groups()) {
    llvm::outs() << "@" << group.name << ": " << group.summary << "\n";
    for (const aasmc::GroupMember& member : group.members)
      llvm::outs() << "  " << member.syscall << ": " << member.reason
                   << (member.capability.empty()
                           ? ""
                           : "; a group allows it while linux_capabilities does not keep " +
                                 member.capability.str() + ", denies it while it does")
                   << "\n";
    for (const aasmc::GroupRule& rule : group.rules)
      llvm::outs() << "  " << rule.syscall << " when " << rule.when << ": " << rule.reason << "\n";
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) return usage_error("no command given");
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "compile") return compile(args);
  if (command == "show") return show(args);
  if (command == "explain") return explain(args);
  if (command == "groups") return groups(args);
  if (command == "suggest") return aasmc::suggest_command(args);
  if (command == "--version") {
    llvm::outs() << "aasmc " << aasmc::kCompilerVersion << "\n";
    return kExitOk;
  }
  if (command == "-h" || command == "--help") {
    llvm::outs() << kUsage;
    return kExitOk;
  }
  return usage_error("unknown command '" + command + "'");
}
