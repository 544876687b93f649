// `aasmc backends [--json]`: the capability table of every backend
// (backend/backends.def), control by control, as docs/backends.md explains it.
#include <llvm/Support/Format.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include "driver/cli.h"
#include "driver/verbs.h"
#include "backend/backends.h"

namespace aasmc {

using namespace cli;

namespace {

using Json = nlohmann::ordered_json;

Json backends_json() {
  Json out = {{"schema", "aasm.dev/backends/v1"}};
  Json order = Json::array();
  for (const BackendInfo& info : all_backends())
    if (info.built && info.launched) order.push_back(info.name.str());
  out["auto_order"] = order;
  auto& backends = out["backends"] = Json::array();
  for (const BackendInfo& info : all_backends()) {
    Json controls = Json::array();
    for (uint8_t c = 0; c < aasm::kControlCount; ++c) {
      const BackendControl row = backend_control(info.backend, aasm::Control(c));
      controls.push_back({{"control", aasm::control_name(aasm::Control(c))},
                          {"how", enforcement_name(row.how)},
                          {"support", support_name(row.support)},
                          {"gap", row.gap.str()},
                          {"host_feature", row.host_feature.str()}});
    }
    backends.push_back({{"name", info.name.str()}, {"built", info.built}, {"launched", info.launched}, {"what", info.what.str()},
                        {"controls", controls}});
  }
  return out;
}

void print_text(llvm::raw_ostream& out) {
  for (const BackendInfo& info : all_backends()) {
    out << info.name << (info.built ? "" : " (not built)") << (info.launched ? "" : " (an export)") << ": " << info.what
        << "\n";
    for (uint8_t c = 0; c < aasm::kControlCount; ++c) {
      const BackendControl row = backend_control(info.backend, aasm::Control(c));
      out << "  " << llvm::left_justify(aasm::control_name(aasm::Control(c)), 17)
          << llvm::left_justify(enforcement_name(row.how), 15) << llvm::left_justify(support_name(row.support), 8);
      if (!row.gap.empty()) out << row.gap;
      if (!row.gap.empty() && !row.host_feature.empty()) out << "; ";
      if (!row.host_feature.empty()) out << "needs " << row.host_feature;
      out << "\n";
    }
  }
}

}  // namespace

int backends_verb(const Args& given) {
  Args args = given;
  const bool json = take_flag(args, "--json");
  if (!args.empty()) return usage_error("backends takes no arguments but --json");
  if (json)
    print_json(backends_json());
  else
    print_text(llvm::outs());
  return kExitOk;
}

}  // namespace aasmc
