#include "backend/lowerings.h"

#include "backend/bwrap_lowering.h"

namespace aasmc {
namespace {

aasm::plan::Lowering lowering_of(const PolicyIR& ir, const Candidate& candidate, const aasm::plan::Plan& plan) {
  aasm::plan::Lowering lowering;
  lowering.backend = backend_info(candidate.backend).name.str();
  lowering.not_carried = candidate.not_carried;
  if (!lowering.carried()) return lowering;
  lowering.meta = backend_meta(candidate);
  if (candidate.backend == Backend::kBwrap) lowering.bwrap = bwrap_arguments(ir, plan);
  return lowering;
}

}  // namespace

void add_lowerings(const PolicyIR& ir, const std::vector<Candidate>& candidates, bool several, aasm::plan::Plan& plan) {
  std::vector<aasm::plan::Lowering> lowerings;
  for (const Candidate& candidate : candidates) lowerings.push_back(lowering_of(ir, candidate, plan));
  if (several)
    plan.lowerings = std::move(lowerings);
  else
    aasm::plan::apply_lowering(plan, lowerings.front());
}

}  // namespace aasmc
