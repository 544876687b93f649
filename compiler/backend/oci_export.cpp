#include "backend/oci_export.h"

#include <linux/seccomp.h>

#include <map>
#include <set>
#include <tuple>

#include "backend/syscall_regions.h"
#include "tables/oci_names.h"

namespace aasmc {
namespace {

using Json = nlohmann::ordered_json;

// The profile's action for a SECCOMP_RET_* value (tables/oci_names.h);
// errnoRet set for an errno.
void set_action(Json& out, const char* action_key, const char* errno_key, uint32_t answer) {
  out[action_key] = oci_action_name(answer);
  if ((answer & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO) out[errno_key] = answer & SECCOMP_RET_DATA;
}

const char* op_name(ArgTest::Op op) {
  switch (op) {
    case ArgTest::Op::kEq: return oci_comparison_name(OciComparison::kEq);
    case ArgTest::Op::kNe: return oci_comparison_name(OciComparison::kNe);
    case ArgTest::Op::kLt: return oci_comparison_name(OciComparison::kLt);
    case ArgTest::Op::kLe: return oci_comparison_name(OciComparison::kLe);
    case ArgTest::Op::kGt: return oci_comparison_name(OciComparison::kGt);
    case ArgTest::Op::kGe: return oci_comparison_name(OciComparison::kGe);
    case ArgTest::Op::kMaskedEq: return oci_comparison_name(OciComparison::kMaskedEq);
    case ArgTest::Op::kAny: break;
  }
  return "";
}

// One rule as the profile's args, ANDed: at most one comparison per
// argument, so runc keeps them in one rule (it splits a rule that compares
// an argument twice into rules that are ORed).
Json args_of(const ArgRule& rule) {
  Json args = Json::array();
  for (unsigned i = 0; i < 6; ++i) {
    const ArgTest& t = rule.args[i];
    if (t.op == ArgTest::Op::kAny) continue;
    if (t.op == ArgTest::Op::kMaskedEq)  // libseccomp's masked equality: (arg & value) == valueTwo
      args.push_back({{"index", i}, {"value", t.mask}, {"valueTwo", t.value}, {"op", op_name(t.op)}});
    else
      args.push_back({{"index", i}, {"value", t.value}, {"valueTwo", 0}, {"op", op_name(t.op)}});
  }
  return args;
}

llvm::Error export_error(const std::string& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", message.c_str());
}

}  // namespace

llvm::Expected<Json> oci_seccomp_profile(const PolicyIR& ir) {
  Json profile;
  Json architectures = Json::array();
  for (const Target& target : ir.targets) architectures.push_back(target.oci_arch);
  if (!ir.syscalls) {
    profile["defaultAction"] = "SCMP_ACT_ALLOW";
    profile["architectures"] = architectures;
    profile["syscalls"] = Json::array();
    return profile;
  }
  // Per call, its answers on the first target that knows it; another target
  // that knows it must give the same (one profile serves every architecture).
  std::map<std::string, std::pair<std::string, std::vector<AnsweredRegion>>> calls;
  uint32_t default_answer = 0;
  for (const Target& target : ir.targets) {
    llvm::Expected<TargetAnswers> answers = syscall_answers(*ir.syscalls, target);
    if (!answers) return answers.takeError();
    default_answer = answers->default_answer;
    for (auto& [name, regions] : answers->by_call) {
      auto [it, inserted] = calls.try_emplace(name, target.name, regions);
      if (inserted) continue;
      bool same = it->second.second.size() == regions.size();
      for (size_t i = 0; same && i < regions.size(); ++i)
        same = it->second.second[i].answer == regions[i].answer && it->second.second[i].rules == regions[i].rules;
      if (!same)
        return export_error(name + ": its argument rules differ between " + it->second.first + " and " +
                            target.name + " (constants differ): export one architecture with --arch");
    }
  }
  // A call the filter answers but another target lacks gives the same
  // answer as the default there; runc ignores names its libseccomp does not
  // know for an architecture.
  std::map<std::tuple<uint32_t, ArgRule>, std::set<std::string>> entries;
  for (const auto& [name, from] : calls)
    for (const AnsweredRegion& region : from.second)
      for (const ArgRule& rule : region.rules) entries[{region.answer, rule}].insert(name);
  set_action(profile, "defaultAction", "defaultErrnoRet", default_answer);
  profile["architectures"] = architectures;
  Json& syscalls = profile["syscalls"] = Json::array();
  for (const auto& [key, names] : entries) {
    Json entry;
    entry["names"] = Json(std::vector<std::string>(names.begin(), names.end()));
    set_action(entry, "action", "errnoRet", std::get<0>(key));
    Json args = args_of(std::get<1>(key));
    if (!args.empty()) entry["args"] = std::move(args);
    syscalls.push_back(std::move(entry));
  }
  return profile;
}

Json kubernetes_security_context(const PolicyIR& ir, const std::string& localhost_profile) {
  Json capabilities = {{"drop", Json::array({"ALL"})}};
  if (ir.isolation.linux_capabilities && !ir.isolation.linux_capabilities->empty()) {
    Json add = Json::array();
    // Kubernetes names capabilities without the CAP_ prefix.
    for (const auto& [name, from] : *ir.isolation.linux_capabilities)
      add.push_back(llvm::StringRef(name).startswith("CAP_") ? name.substr(4) : name);
    capabilities["add"] = add;
  }
  return {{"securityContext",
           {{"allowPrivilegeEscalation", false},
            {"capabilities", capabilities},
            {"seccompProfile", {{"type", "Localhost"}, {"localhostProfile", localhost_profile}}}}}};
}

}  // namespace aasmc
