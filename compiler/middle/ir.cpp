#include "middle/ir.h"

#include <sstream>

namespace aasmc {
namespace {

void print_verb(std::ostringstream& out, const char* verb, const std::optional<std::vector<PathGrant>>& grants) {
  if (!grants) {
    out << "  " << verb << ": unconstrained\n";
    return;
  }
  out << "  " << verb << ": allow" << (grants->empty() ? " nothing\n" : "\n");
  for (const PathGrant& grant : *grants)
    out << "    " << grant.path.text() << (grant.optional ? " (optional)" : "") << "\n";
}

}  // namespace

std::string print_ir(const PolicyIR& ir) {
  std::ostringstream out;
  out << "sources:\n";
  for (const SourceDocument& source : ir.sources)
    out << "  " << source.name << " (" << tier_name(source.tier) << ") " << source.file_name << " sha256:"
        << aasm::to_hex(source.file_digest) << "\n";
  out << "targets:";
  for (const Target& target : ir.targets) out << " " << target.name;
  out << "\nfilesystem:\n";
  print_verb(out, "read", ir.filesystem.read);
  print_verb(out, "write", ir.filesystem.write);
  print_verb(out, "execute", ir.filesystem.execute);
  if (!ir.syscalls) {
    out << "syscalls: unconstrained\n";
    return out.str();
  }
  out << "syscalls: allowlist, default " << ir.syscalls->default_action.text() << "\n";
  for (const auto& [name, origin] : ir.syscalls->allowed)
    out << "  " << name << (origin == aasm::plan::SyscallOrigin::kStartup ? " (start-up set)" : "") << "\n";
  return out.str();
}

}  // namespace aasmc
