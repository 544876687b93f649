#include "kernel/landlock_rights_text.h"

namespace aasm::landlock {

std::vector<std::string> rights_names(uint64_t rights, RightKind kind) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(rights & (1ull << bit))) continue;
    const char* name = right_name(kind, 1ull << bit);
    names.push_back(name ? name : "bit" + std::to_string(bit));
  }
  return names;
}

std::string rights_list_text(uint64_t rights, RightKind kind) {
  std::string out;
  for (const std::string& name : rights_names(rights, kind)) out += (out.empty() ? "" : ",") + name;
  return out.empty() ? "none" : out;
}

std::string landlock_rights_text(uint64_t fs, uint64_t net, uint64_t scopes) {
  return "fs " + rights_list_text(fs, RightKind::kFs) + "; net " + rights_list_text(net, RightKind::kNet) +
         "; scopes " + rights_list_text(scopes, RightKind::kScope);
}

}  // namespace aasm::landlock
