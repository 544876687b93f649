// The namespaces of isolation.namespaces, from their one table
// (plan/namespaces.def): the plan's bits and the names the policy writes,
// for the compiler (parse, lowering, aasmc show) and the launcher
// (kernel/namespaces.h, receipts) alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aasm::plan {

#define AASM_NAMESPACE(id, name, bit, clone_flag) inline constexpr uint32_t kNamespace##id = 1u << (bit);
#include "plan/namespaces.def"

inline constexpr uint32_t kKnownNamespaces = 0
#define AASM_NAMESPACE(id, name, bit, clone_flag) | kNamespace##id
#include "plan/namespaces.def"
    ;

struct NamespaceName {
  const char* name;  // "pid"
  uint32_t bit;      // kNamespacePid
};
inline constexpr NamespaceName kNamespaceNames[] = {
#define AASM_NAMESPACE(id, name, bit, clone_flag) {name, kNamespace##id},
#include "plan/namespaces.def"
};

// The bit of a namespace as the policy names it, if it is one.
inline std::optional<uint32_t> namespace_bit(std::string_view name) {
  for (const NamespaceName& n : kNamespaceNames)
    if (name == n.name) return n.bit;
  return std::nullopt;
}

// "user, pid, net": the names of `bits`, in the table's order.
inline std::string namespace_names(uint32_t bits, std::string_view separator = ", ") {
  std::string out;
  for (const NamespaceName& n : kNamespaceNames)
    if (bits & n.bit) out.append(out.empty() ? "" : separator).append(n.name);
  return out;
}

}  // namespace aasm::plan
