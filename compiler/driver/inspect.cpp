// The verbs that read a plan or the tables: `aasmc show`, `aasmc digest`,
// `aasmc groups`.
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

#include "driver/cli.h"
#include "driver/show.h"
#include "driver/verbs.h"
#include "tables/syscall_groups.h"

namespace aasmc {

using namespace cli;

int show_verb(const Args& given) {
  Args args = given;
  auto take_flag = [&args](const char* name) {
    const auto at = std::find(args.begin(), args.end(), name);
    if (at == args.end()) return false;
    args.erase(at);
    return true;
  };
  const bool bpf = take_flag("--bpf");
  const bool textconv = take_flag("--textconv");
  if (args.size() != 1) return usage_error("show takes one plan file (and --bpf, --textconv)");
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
  llvm::outs() << describe_plan(loaded->plan, aasm::plan::plan_digest(loaded->bytes), bpf && !textconv);
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

int groups_verb(const Args& args) {
  if (!args.empty()) return usage_error("groups takes no arguments");
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
