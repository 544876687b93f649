#include "driver/verbs.h"

#include "driver/cli.h"

#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "plan/controls.h"
#include "base/canonical_json.h"
#include "supervisor/receipt.h"

namespace aasmc {
namespace {

using nlohmann::json;

// 1: the seal or a rule is broken, or the file is no receipt.
constexpr int kExitOk = cli::kExitOk, kExitFailed = 1;

// The parsed document as the one canonical writer's value: the seal is
// recomputed over exactly the bytes the launcher sealed.
aasm::json::Value value_of(const json& j) {
  switch (j.type()) {
    case json::value_t::boolean: return aasm::json::Value(j.get<bool>());
    case json::value_t::number_integer: return aasm::json::Value(j.get<int64_t>());
    case json::value_t::number_unsigned: return aasm::json::Value(int64_t(j.get<uint64_t>()));
    case json::value_t::number_float: return aasm::json::Value(j.dump());  // no receipt has one: the seal fails
    case json::value_t::string: return aasm::json::Value(j.get<std::string>());
    case json::value_t::array: {
      aasm::json::Array out;
      for (const json& item : j) out.push_back(value_of(item));
      return out;
    }
    case json::value_t::object: {
      aasm::json::Object out;
      for (const auto& [name, member] : j.items()) out.emplace(name, value_of(member));
      return out;
    }
    default: return aasm::json::Value();
  }
}

struct Finding {
  std::string rule;
  std::vector<std::string> broken;  // empty: the rule holds
};

std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t number_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : -1;
}

const json& member(const json& j, const char* key) {
  static const json kNull;
  const auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() ? *it : kNull;
}

std::string level(aasm::ControlLevel l) { return aasm::control_level_name(l); }

// Every control of the table is stated, the untouched ones as not constrained.
Finding domains(const json& receipt) {
  Finding f{"every domain present", {}};
  std::set<std::string> present;
  for (const json& c : member(receipt, "controls")) present.insert(text_of(c, "domain"));
  for (uint8_t i = 0; i < aasm::kControlCount; ++i)
    if (!present.count(aasm::control_name(aasm::Control(i))))
      f.broken.push_back(std::string("no control states ") + aasm::control_name(aasm::Control(i)));
  return f;
}

// "enforced" only on a measured basis, and one of the control's own: a basis
// text another control also gives is a check standing in for another's.
Finding measured(const json& receipt) {
  Finding f{"no enforced without a measured basis of its own", {}};
  std::map<std::string, std::set<std::string>> domains_of_basis;
  for (const json& c : member(receipt, "controls")) domains_of_basis[text_of(c, "basis")].insert(text_of(c, "domain"));
  for (const json& c : member(receipt, "controls")) {
    if (text_of(c, "achieved") != level(aasm::ControlLevel::kEnforced)) continue;
    const std::string basis = text_of(c, "basis"), domain = text_of(c, "domain");
    if (basis.rfind(std::string(aasm::basis_name(aasm::Basis::kMeasured)) + ": ", 0) != 0)
      f.broken.push_back(domain + " is enforced on the basis '" + basis + "', which is not measured");
    else if (domains_of_basis[basis].size() > 1)
      f.broken.push_back(domain + " is enforced on a basis another control gives too: '" + basis + "'");
  }
  return f;
}

bool claims_enforcement(const std::string& achieved) {
  return achieved == level(aasm::ControlLevel::kEnforced) || achieved == level(aasm::ControlLevel::kPartial) ||
         achieved == level(aasm::ControlLevel::kNotMeasured);
}

// A launch that never started its command enforced nothing.
Finding not_started(const json& receipt) {
  Finding f{"nothing enforced when the launch did not happen", {}};
  const json& command = member(receipt, "command");
  if (text_of(command, "outcome") != aasm::outcome::kNotStarted) return f;
  for (const json& c : member(receipt, "controls"))
    if (claims_enforcement(text_of(c, "achieved")))
      f.broken.push_back(text_of(c, "domain") + " is " + text_of(c, "achieved") + " but the command was not started");
  if (text_of(receipt, "enforcement") != aasm::enforcement::kNone)
    f.broken.push_back("enforcement is '" + text_of(receipt, "enforcement") + "' but the command was not started");
  if (number_of(command, "exit_code") == 0) f.broken.push_back("exit_code is 0 but the command was not started");
  return f;
}

// "full" only when no control the plan asks for is below enforced.
Finding degraded(const json& receipt) {
  Finding f{"a degraded control cannot also claim full enforcement", {}};
  const std::string enforcement = text_of(receipt, "enforcement");
  bool below = false;
  for (const json& c : member(receipt, "controls")) {
    const std::string achieved = text_of(c, "achieved");
    if (text_of(c, "planned") == aasm::planned_text(aasm::Planned::kNotPlanned)) continue;
    if (achieved == level(aasm::ControlLevel::kEnforced) || achieved == level(aasm::ControlLevel::kNotMeasured)) continue;
    below = true;
    if (enforcement == aasm::enforcement::kFull)
      f.broken.push_back("enforcement is full but " + text_of(c, "domain") + " is " + achieved);
    if (text_of(c, "planned") == aasm::planned_text(aasm::Planned::kRequired) &&
        (achieved == level(aasm::ControlLevel::kPartial) || achieved == level(aasm::ControlLevel::kNotEnforced)))
      f.broken.push_back(text_of(c, "domain") + " is " + achieved + " though the plan requires it (it may not degrade)");
  }
  if (enforcement != aasm::enforcement::kFull && enforcement != aasm::enforcement::kDegraded &&
      enforcement != aasm::enforcement::kNone)
    f.broken.push_back("enforcement is '" + enforcement + "', not full, degraded or none");
  if (enforcement == aasm::enforcement::kDegraded && !below) f.broken.push_back("enforcement is degraded but no control is below enforced");
  return f;
}

// start <= exec <= exit <= cleanup; exec and exit 0 exactly when the command never started.
Finding timeline(const json& receipt) {
  Finding f{"timeline in order", {}};
  const json& t = member(receipt, "timeline");
  const int64_t start = number_of(t, "start"), exec = number_of(t, "exec"), exit = number_of(t, "exit"),
                cleanup = number_of(t, "cleanup");
  if (start <= 0 || exec < 0 || exit < 0 || cleanup <= 0) {
    f.broken.push_back("the timeline needs start, exec, exit and cleanup as milliseconds");
    return f;
  }
  const bool started = text_of(member(receipt, "command"), "outcome") != aasm::outcome::kNotStarted;
  if (started && !(start <= exec && exec <= exit && exit <= cleanup))
    f.broken.push_back("not start <= exec <= exit <= cleanup: " + std::to_string(start) + ", " + std::to_string(exec) +
                       ", " + std::to_string(exit) + ", " + std::to_string(cleanup));
  if (!started && (exec != 0 || exit != 0))
    f.broken.push_back("the command was not started, yet the timeline has an exec or an exit");
  if (!started && start > cleanup) f.broken.push_back("cleanup before start");
  return f;
}

// Each field a receipt withholds is listed, and stands as counts and digests.
Finding withheld(const json& receipt) {
  Finding f{"every withheld field listed", {}};
  std::set<std::string> listed;
  for (const json& item : member(receipt, "withheld"))
    if (item.is_string()) listed.insert(item.get<std::string>());
  for (const char* field : aasm::kWithheldFields)
    if (!listed.count(field)) f.broken.push_back(std::string("withheld does not list ") + field);
  const json& command = member(receipt, "command");
  if (number_of(command, "arguments") != int64_t(member(command, "argument_hmacs").size()))
    f.broken.push_back("command.arguments is not the number of argument digests");
  for (const char* plain : {"argv", "env", "cwd"})
    if (receipt.contains(plain) || command.contains(plain))
      f.broken.push_back(std::string("the receipt holds a withheld value: ") + plain);
  return f;
}

struct SealResult {
  bool ok = false;
  std::string detail;
};

SealResult check_seal(const json& receipt) {
  const json& seal = member(receipt, "seal");
  if (!seal.is_object()) return {false, "no seal"};
  if (text_of(seal, "algorithm") != aasm::kSealAlgorithm)
    return {false, "unknown seal algorithm '" + text_of(seal, "algorithm") + "'"};
  json body = receipt;
  body.erase("seal");
  const std::string digest = aasm::receipt_seal(value_of(body));
  if (digest != text_of(seal, "sha256"))
    return {false, "the body's SHA-256 is " + digest + ", the seal says " + text_of(seal, "sha256")};
  return {true, digest};
}

int verify(const std::string& path, bool as_json) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    cli::error(path + ": cannot be read");
    return kExitFailed;
  }
  std::stringstream text;
  text << in.rdbuf();
  json receipt = json::parse(text.str(), nullptr, false);
  if (receipt.is_discarded() || !receipt.is_object()) {
    cli::error(path + ": not a JSON object");
    return kExitFailed;
  }
  if (text_of(receipt, "schema") != aasm::kReceiptSchema) {
    cli::error(path + ": not a receipt (schema is not " + aasm::kReceiptSchema + ")");
    return kExitFailed;
  }
  const SealResult seal = check_seal(receipt);
  const std::vector<Finding> findings = {domains(receipt),  measured(receipt), not_started(receipt),
                                         degraded(receipt), timeline(receipt), withheld(receipt)};
  bool rules_ok = true;
  for (const Finding& f : findings) rules_ok = rules_ok && f.broken.empty();
  if (as_json) {
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (const Finding& f : findings) rules.push_back({{"rule", f.rule}, {"ok", f.broken.empty()}, {"broken", f.broken}});
    const nlohmann::ordered_json out = {{"file", path},
                      {"seal", {{"ok", seal.ok}, {"detail", seal.detail}}},
                      {"rules", {{"ok", rules_ok}, {"each", rules}}}};
    cli::print_json(out);
  } else {
    llvm::outs() << "seal: " << (seal.ok ? "intact (sha256 " : "BROKEN: ") << seal.detail << (seal.ok ? ")" : "")
                 << "\n";
    llvm::outs() << "rules: " << (rules_ok ? "all hold" : "broken") << "\n";
    for (const Finding& f : findings) {
      llvm::outs() << "  " << (f.broken.empty() ? "ok      " : "BROKEN  ") << f.rule << "\n";
      for (const std::string& why : f.broken) llvm::outs() << "          " << why << "\n";
    }
  }
  return seal.ok && rules_ok ? kExitOk : kExitFailed;
}

}  // namespace

int receipt_verb(const Args& args) {
  if (args.empty() || args[0] != "verify") return cli::usage_error("receipt takes the verb verify");
  std::vector<std::string> files;
  bool as_json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") as_json = true;
    else if (args[i].size() > 1 && args[i][0] == '-') return cli::usage_error("unknown option '" + args[i] + "'");
    else files.push_back(args[i]);
  }
  if (files.size() != 1) return cli::usage_error("receipt verify takes one receipt file");
  return verify(files[0], as_json);
}

}  // namespace aasmc
