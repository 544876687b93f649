// The verbs that read a plan or the tables: `aasmc show`, `aasmc digest`,
// `aasmc groups`.
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include "driver/cli.h"
#include "driver/show.h"
#include "driver/verbs.h"
#include "tables/syscall_groups.h"

namespace aasmc {

using namespace cli;

int show_verb(const Args& given) {
  Args args = given;
  const bool bpf = take_flag(args, "--bpf");
  const bool json = take_flag(args, "--json");
  const bool textconv = take_flag(args, "--textconv");
  if (int(bpf) + int(json) + int(textconv) > 1) return usage_error("show takes one of --bpf, --json, --textconv");
  if (args.size() != 1) return usage_error("show takes one plan file (and --bpf, --json or --textconv)");
  auto loaded = load_plan(args[0]);
  if (!loaded) {
    // As a git textconv driver, a file that is not a valid plan still diffs:
    // the reason becomes its text, and git goes on.
    if (textconv) {
      llvm::outs() << "not a valid plan: " << loaded.error().message << "\n";
      return kExitOk;
    }
    error(loaded.error().message);
    return kExitPolicyError;
  }
  if (json)
    print_json(plan_json(loaded->plan, aasm::plan::plan_digest(loaded->bytes)));
  else
    llvm::outs() << describe_plan(loaded->plan, aasm::plan::plan_digest(loaded->bytes), bpf);
  return kExitOk;
}

int digest_verb(const Args& args) {
  if (args.size() != 1 || (args[0].size() > 1 && args[0][0] == '-'))
    return usage_error("digest takes one plan file");
  // Verified like the launcher verifies it: a damaged plan has no identity to pin.
  auto loaded = load_plan(args[0]);
  if (!loaded) {
    error(loaded.error().message);
    return kExitPolicyError;
  }
  llvm::outs() << aasm::plan::plan_identity(loaded->bytes) << "\n";
  return kExitOk;
}

namespace {

nlohmann::ordered_json groups_json() {
  using Json = nlohmann::ordered_json;
  Json out = {{"schema", "aasm.dev/groups/v1"}};
  auto& groups = out["groups"] = Json::array();
  for (const SyscallGroup& group : all_groups()) {
    Json members = Json::array(), rules = Json::array();
    for (const GroupMember& member : group.members)
      members.push_back({{"syscall", member.syscall.str()}, {"reason", member.reason.str()},
                         {"capability", member.capability.str()}});
    for (const GroupRule& rule : group.rules)
      rules.push_back({{"syscall", rule.syscall.str()}, {"when", rule.when.str()}, {"reason", rule.reason.str()}});
    groups.push_back({{"name", group.name.str()}, {"summary", group.summary.str()}, {"members", members},
                      {"rules", rules}});
  }
  return out;
}

}  // namespace

int groups_verb(const Args& args) {
  if (args == Args{"--json"}) {
    print_json(groups_json());
    return kExitOk;
  }
  if (!args.empty()) return usage_error("groups takes no arguments but --json");
  for (const SyscallGroup& group : all_groups()) {
    llvm::outs() << "@" << group.name << ": " << group.summary << "\n";
    for (const GroupMember& member : group.members)
      llvm::outs() << "  " << member.syscall << ": " << member.reason
                   << (member.capability.empty()
                           ? ""
                           : "; a group allows it while linux_capabilities does not keep " +
                                 member.capability.str() + ", denies it while it does")
                   << "\n";
    for (const GroupRule& rule : group.rules)
      llvm::outs() << "  " << rule.syscall << " when " << rule.when << ": " << rule.reason << "\n";
  }
  return kExitOk;
}

}  // namespace aasmc
