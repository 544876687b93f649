#include "middle/build_ir.h"

#include <algorithm>
#include <set>

#include "middle/syscall_groups.h"

namespace aasmc {
namespace {

using aasm::plan::SyscallOrigin;

std::vector<PathGrant> grants_of(const std::vector<PathEntry>& entries) {
  std::vector<PathGrant> grants;
  for (const PathEntry& entry : entries) grants.push_back({entry.path, false, entry.source});
  return normalize_paths(std::move(grants));
}

// One verb across the cascade: documents without the verb do not constrain it.
std::optional<std::vector<PathGrant>> merge_verb(const std::vector<PolicyDocument>& documents,
                                                 std::optional<PathAllowList> FilesystemNode::*verb) {
  std::optional<std::vector<PathGrant>> merged;
  for (const PolicyDocument& doc : documents) {
    if (!doc.filesystem || !((*doc.filesystem).*verb)) continue;
    std::vector<PathGrant> grants = grants_of(((*doc.filesystem).*verb)->allow);
    merged = merged ? intersect_paths(*merged, grants) : std::move(grants);
  }
  return merged;
}

void mark_optional(const std::vector<PolicyDocument>& documents, FilesystemIR& fs) {
  std::optional<std::vector<PathGrant>> optional;
  for (const PolicyDocument& doc : documents) {
    if (!doc.filesystem || !doc.filesystem->optional) continue;
    std::vector<PathGrant> grants = grants_of(*doc.filesystem->optional);
    optional = optional ? intersect_paths(*optional, grants) : std::move(grants);
  }
  if (!optional) return;
  for (auto* verb : {&fs.read, &fs.write, &fs.execute}) {
    if (!*verb) continue;
    for (PathGrant& grant : **verb)
      grant.optional = std::any_of(optional->begin(), optional->end(),
                                   [&](const PathGrant& o) { return contains(o.path, grant.path); });
  }
}

class SyscallResolver {
 public:
  SyscallResolver(const std::vector<Target>& targets, Diagnostics& diags) : targets_(targets), diags_(diags) {}

  // The names one document allows, groups expanded. Unknown names and names
  // missing on a target are errors.
  std::set<std::string> expand(const std::vector<NameEntry>& entries) {
    std::set<std::string> names;
    for (const NameEntry& entry : entries) {
      if (llvm::StringRef(entry.name).startswith("@")) {
        expand_group(entry, names);
        continue;
      }
      if (check_name(entry)) names.insert(entry.name);
    }
    return names;
  }

 private:
  void expand_group(const NameEntry& entry, std::set<std::string>& names) {
    const llvm::StringRef name = llvm::StringRef(entry.name).drop_front();
    const SyscallGroup* group = find_group(name);
    if (!group) {
      std::vector<llvm::StringRef> candidates;
      for (const SyscallGroup& g : all_groups()) candidates.push_back(g.name);
      std::string message = "unknown syscall group '" + entry.name + "'";
      if (auto guess = closest_match(name, candidates); !guess.empty()) message += "; did you mean '@" + guess + "'?";
      diags_.error(entry.source.loc, message + " (`aasmc groups` lists them)", diag::kUnknownGroup, entry.source.range);
      return;
    }
    // Group members may be architecture-specific; they are kept where they exist.
    for (const GroupMember& member : group->members)
      for (const Target& target : targets_)
        if (syscall_number(target, member.syscall)) names.insert(member.syscall.str());
  }

  bool check_name(const NameEntry& entry) {
    std::vector<const char*> missing_on;
    for (const Target& target : targets_)
      if (!syscall_number(target, entry.name)) missing_on.push_back(target.name);
    if (missing_on.empty()) return true;
    if (missing_on.size() == targets_.size() &&
        std::find(known_syscall_names().begin(), known_syscall_names().end(), entry.name) ==
            known_syscall_names().end()) {
      std::string message = "unknown syscall '" + entry.name + "'";
      if (auto guess = closest_match(entry.name, known_syscall_names()); !guess.empty())
        message += "; did you mean '" + guess + "'?";
      diags_.error(entry.source.loc, message, diag::kUnknownSyscall, entry.source.range);
      return false;
    }
    std::string archs;
    for (const char* arch : missing_on) archs += std::string(archs.empty() ? "" : ", ") + arch;
    diags_.error(entry.source.loc,
                 "syscall '" + entry.name + "' does not exist on " + archs +
                     "; remove it, or choose the targets with --arch",
                 diag::kUnknownSyscall, entry.source.range);
    return false;
  }

  const std::vector<Target>& targets_;
  Diagnostics& diags_;
};

std::optional<SyscallIR> merge_syscalls(const std::vector<PolicyDocument>& documents,
                                        const std::vector<Target>& targets, Diagnostics& diags) {
  SyscallResolver resolver(targets, diags);
  std::optional<std::set<std::string>> allowed;
  std::optional<Action> default_action;
  const SyscallsNode* default_only = nullptr;
  for (const PolicyDocument& doc : documents) {
    if (!doc.syscalls) continue;
    if (doc.syscalls->default_action) {
      // The strictest default wins: kill > errno > log.
      if (!default_action || doc.syscalls->default_action->strictness() > default_action->strictness())
        default_action = doc.syscalls->default_action;
      if (!doc.syscalls->allow) default_only = &*doc.syscalls;
    }
    if (!doc.syscalls->allow) continue;
    std::set<std::string> names = resolver.expand(*doc.syscalls->allow);
    if (!allowed) {
      allowed = std::move(names);
      continue;
    }
    std::set<std::string> both;
    std::set_intersection(allowed->begin(), allowed->end(), names.begin(), names.end(),
                          std::inserter(both, both.begin()));
    allowed = std::move(both);
  }
  if (!allowed) {
    if (default_only)
      diags.error(default_only->default_source.loc,
                  "spec.syscalls.default has no effect without spec.syscalls.allow in some document of the cascade",
                  diag::kBadValue, default_only->default_source.range);
    return std::nullopt;
  }
  SyscallIR ir;
  ir.default_action = default_action.value_or(Action{Action::Kind::kKill, 0});
  for (const std::string& name : *allowed) ir.allowed.emplace(name, SyscallOrigin::kPolicy);
  for (const GroupMember& member : startup_group().members)
    for (const Target& target : targets)
      if (syscall_number(target, member.syscall)) ir.allowed.emplace(member.syscall.str(), SyscallOrigin::kStartup);
  return ir;
}

}  // namespace

std::vector<PathGrant> normalize_paths(std::vector<PathGrant> grants) {
  std::sort(grants.begin(), grants.end());
  std::vector<PathGrant> kept;
  for (PathGrant& grant : grants) {
    const bool covered = std::any_of(kept.begin(), kept.end(), [&](const PathGrant& k) {
      return contains(k.path, grant.path);
    });
    if (!covered) kept.push_back(std::move(grant));
  }
  return kept;
}

std::vector<PathGrant> intersect_paths(const std::vector<PathGrant>& a, const std::vector<PathGrant>& b) {
  std::vector<PathGrant> out;
  for (const PathGrant& x : a)
    for (const PathGrant& y : b) {
      if (contains(x.path, y.path)) out.push_back(y);
      else if (contains(y.path, x.path)) out.push_back(x);
    }
  return normalize_paths(std::move(out));
}

std::optional<PolicyIR> build_ir(const std::vector<PolicyDocument>& documents, const std::vector<Target>& targets,
                                 Diagnostics& diags) {
  if (documents.empty()) {
    diags.global_error("the cascade has no policy documents; nothing is unconfined by default, so this is refused",
                       diag::kEmptyCascade);
    return std::nullopt;
  }
  const unsigned errors_before = diags.error_count();
  PolicyIR ir;
  ir.targets = targets;
  for (const PolicyDocument& doc : documents)
    ir.sources.push_back({doc.name, doc.tier, doc.file_name, doc.file_digest});
  ir.filesystem.read = merge_verb(documents, &FilesystemNode::read);
  ir.filesystem.write = merge_verb(documents, &FilesystemNode::write);
  ir.filesystem.execute = merge_verb(documents, &FilesystemNode::execute);
  mark_optional(documents, ir.filesystem);
  ir.syscalls = merge_syscalls(documents, targets, diags);
  if (diags.error_count() != errors_before) return std::nullopt;
  if (ir.filesystem.empty() && !ir.syscalls) {
    diags.error(documents.front().start,
                "the merged policy requests no control at all (no filesystem or syscalls node); there would be "
                "nothing to enforce",
                diag::kNothingRequested);
    return std::nullopt;
  }
  return ir;
}

}  // namespace aasmc
