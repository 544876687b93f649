#include "backend/egress_lowering.h"

#include <algorithm>

namespace aasmc {
namespace {

std::vector<aasm::plan::HostPattern> patterns(const std::map<std::string, SourceRef>& texts) {
  std::vector<aasm::plan::HostPattern> out;
  // The merge keeps each pattern in its canonical spelling, so each parses.
  for (const auto& [text, from] : texts) out.push_back(*aasm::plan::parse_host_pattern(text));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

const NetworkRuleIR* brokered_outbound(const NetworkIR& network) {
  const std::optional<NetworkRuleIR>& outbound = network.outbound;
  return outbound && !outbound->none && outbound->brokered ? &*outbound : nullptr;
}

std::optional<aasm::plan::Egress> lower_egress(const NetworkIR& network) {
  const NetworkRuleIR* rule = brokered_outbound(network);
  if (!rule) return std::nullopt;
  aasm::plan::Egress egress;
  egress.any_name = !rule->hosts;
  if (rule->hosts) egress.allow = patterns(*rule->hosts);
  egress.deny = patterns(rule->hosts_denied);
  return egress;
}

}  // namespace aasmc
