#include <algorithm>

#include "plan/plan.h"

namespace aasm::plan {

void apply_lowering(Plan& plan, const Lowering& lowering) {
  plan.meta.insert(plan.meta.end(), lowering.meta.begin(), lowering.meta.end());
  std::sort(plan.meta.begin(), plan.meta.end());
  if (lowering.bwrap) {
    plan.bwrap = lowering.bwrap;
    plan.landlock.reset();
    plan.view.reset();
    if (plan.process) {
      plan.process->namespaces = 0;
      plan.process->kept_capabilities = 0;
    }
  }
  plan.lowerings.clear();
}

}  // namespace aasm::plan
