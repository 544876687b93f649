// `aasmc diff OLD NEW [--json] [--fail-on-widening]`: the posture diff of two
// plans (driver/plan_diff.h); either side may be policy files, joined by ',',
// compiled on the fly. docs/cli.md#aasmc-diff.
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include "driver/cli.h"
#include "driver/plan_diff.h"
#include "driver/verbs.h"

namespace aasmc {
namespace {

using namespace cli;

constexpr int kExitWidening = 1;
constexpr int kExitUnreadable = 3;

bool names_policies(const std::string& side) {
  for (const std::string& part : split(side, ','))
    if (part.ends_with(".yaml") || part.ends_with(".yml")) return true;
  return false;
}

// A plan file, or the plan its policy files compile to (every target).
std::optional<aasm::plan::Plan> load_side(const std::string& side, Diagnostics& diags) {
  if (!names_policies(side)) {
    auto loaded = load_plan(side);
    if (!loaded) {
      diags.file_error(side, without_path(side, loaded.error().message), diag::kPlanUnreadable);
      return std::nullopt;
    }
    return std::move(loaded->plan);
  }
  CompileRequest request;
  request.inputs = split(side, ',');
  request.targets = all_target_list();
  const auto bytes = compile_in_memory(request, diags);
  if (!bytes) return std::nullopt;
  auto plan = aasm::plan::decode_plan(*bytes);
  if (!plan) {
    diags.global_error("the compiled plan does not read back: " + plan.error().message, diag::kLowering);
    return std::nullopt;
  }
  return std::move(*plan);
}

}  // namespace

int diff_verb(const Args& args) {
  std::vector<std::string> sides;
  bool json = false, fail_on_widening = false;
  for (const std::string& arg : args) {
    if (arg == "--json") json = true;
    else if (arg == "--fail-on-widening") fail_on_widening = true;
    else if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option '" + arg + "'");
    else sides.push_back(arg);
  }
  if (sides.size() != 2) return usage_error("diff takes two plans (or policy files joined by ',')");
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, DiagnosticFormat::kText);
  const auto before = load_side(sides[0], diags);
  const auto after = before ? load_side(sides[1], diags) : std::nullopt;
  if (!before || !after) return kExitUnreadable;
  const std::vector<PostureChange> changes = diff_posture(*before, *after);
  size_t widenings = 0;
  for (const PostureChange& c : changes) widenings += c.widening;
  if (json) {
    nlohmann::ordered_json report;
    report["old"] = sides[0];
    report["new"] = sides[1];
    report["widenings"] = widenings;
    report["changes"] = nlohmann::ordered_json::array();
    for (const PostureChange& c : changes) {
      nlohmann::ordered_json j;
      j["area"] = c.area;
      j["subject"] = c.subject;
      j["old"] = c.before;
      j["new"] = c.after;
      if (!c.rule.empty()) j["rule"] = c.rule;
      j["widening"] = c.widening;
      report["changes"].push_back(std::move(j));
    }
    print_json(report);
  } else {
    // One change a line, so the output itself diffs and greps well.
    for (const PostureChange& c : changes)
      llvm::outs() << (c.widening ? "WIDENING " : "         ") << c.area << " " << c.subject << ": " << c.before
                   << " -> " << c.after << (c.rule.empty() ? "" : " [rule: " + c.rule + "]") << "\n";
    llvm::outs() << changes.size() << " change" << (changes.size() == 1 ? "" : "s") << ", " << widenings
                 << " widening" << (widenings == 1 ? "" : "s") << "\n";
  }
  return fail_on_widening && widenings ? kExitWidening : kExitOk;
}

}  // namespace aasmc
