#include "supervisor/environment.h"

#include <algorithm>
#include <string_view>

namespace aasm {
namespace {

bool passes(std::string_view name, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
    if (!pattern.empty() && pattern.back() == '*') return name.starts_with(std::string_view(pattern).substr(0, pattern.size() - 1));
    return name == pattern;
  });
}

}  // namespace

std::vector<std::string> build_environment(const plan::ProcessSettings* settings, char** launcher_environment) {
  const bool filtered = settings && settings->environment_filtered;
  std::vector<std::string> out;
  for (char** entry = launcher_environment; entry && *entry; ++entry) {
    const std::string_view variable(*entry);
    const std::string_view name = variable.substr(0, variable.find('='));
    if (filtered) {
      const bool overridden = std::any_of(settings->environment_set.begin(), settings->environment_set.end(),
                                          [&](const auto& set) { return set.first == name; });
      if (passes(name, settings->environment_pass) && !overridden) out.emplace_back(variable);
    } else if (!name.starts_with("LD_")) {
      out.emplace_back(variable);
    }
  }
  if (filtered)
    for (const auto& [name, value] : settings->environment_set) out.push_back(name + "=" + value);
  return out;
}

void point_at_broker(std::vector<std::string>& environment,
                     const std::vector<std::pair<std::string, std::string>>& variables) {
  for (const auto& variable : variables) {
    const std::string prefix = variable.first + "=";
    std::erase_if(environment, [&prefix](const std::string& v) { return v.starts_with(prefix); });
    environment.push_back(prefix + variable.second);
  }
}

}  // namespace aasm
