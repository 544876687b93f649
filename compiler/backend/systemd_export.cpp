#include "backend/systemd_export.h"

#include <linux/seccomp.h>

#include <map>
#include <set>

#include "backend/syscall_regions.h"
#include "tables/errno_names.h"

namespace aasmc {
namespace {

using Properties = std::vector<std::pair<std::string, std::string>>;

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

bool uniform(const AnsweredRegion& region) { return region.rules.size() == 1 && region.rules.front().everything(); }

// A path as a unit writes it: ${HOME} is %h; ${CWD} has no specifier
// (nullopt). An optional path gets systemd's "-" (ignored when missing).
std::optional<std::string> unit_path(const PathGrant& grant) {
  std::string path;
  switch (grant.path.base) {
    case PathBase::kAbsolute: path = grant.path.rest; break;
    case PathBase::kHome: path = "%h" + grant.path.rest; break;
    case PathBase::kCwd: return std::nullopt;
  }
  return (grant.optional ? "-" : "") + path;
}

void add_syscalls(const PolicyIR& ir, Properties& out, std::vector<std::string>& gaps) {
  const SyscallIR& calls = *ir.syscalls;
  const bool allowlist = calls.mode == SyscallIR::Mode::kAllowlist;
  // By call, the answer of every target; a call whose answer depends on its
  // arguments, or differs between targets, has no by-name form.
  std::map<std::string, std::set<uint32_t>> answers;
  std::set<std::string> by_arguments;
  uint32_t default_answer = SECCOMP_RET_ALLOW;
  for (const Target& target : ir.targets) {
    llvm::Expected<TargetAnswers> t = syscall_answers(calls, target);
    if (!t) {
      // Too many argument patterns for the OCI form matters not here: by name only.
      llvm::consumeError(t.takeError());
      for (const SyscallRuleIR& rule : calls.rules) by_arguments.insert(rule.syscall);
      continue;
    }
    default_answer = t->default_answer;
    for (const auto& [name, regions] : t->by_call) {
      if (regions.size() == 1 && uniform(regions.front())) answers[name].insert(regions.front().answer);
      else by_arguments.insert(name);
    }
  }
  std::set<std::string> allowed, killed;
  std::map<std::string, std::string> with_errno;
  for (const auto& [name, set] : answers) {
    if (by_arguments.count(name)) continue;
    if (set.size() != 1) {
      by_arguments.insert(name);
      continue;
    }
    const uint32_t answer = *set.begin();
    const uint32_t action = answer & SECCOMP_RET_ACTION_FULL;
    if (action == SECCOMP_RET_ALLOW) allowed.insert(name);
    else if (action == SECCOMP_RET_ERRNO) with_errno[name] = errno_name(int(answer & SECCOMP_RET_DATA));
    else if (action == SECCOMP_RET_KILL_PROCESS) killed.insert(name);
    else gaps.push_back(name + ": answered log by the policy; systemd's filter has no log action: left unfiltered");
  }
  for (const std::string& name : by_arguments)
    gaps.push_back(name + (allowlist ? ": allowed for some arguments only; listed, so allowed for every argument"
                                     : ": refused for some arguments only; not listed, so allowed for every argument"));
  std::set<std::string> architectures;
  for (const Target& target : ir.targets) architectures.insert(target.systemd_arch);
  out.emplace_back("SystemCallArchitectures", joined(architectures));
  if (allowlist) {
    // An allow-list line; every other call gets SystemCallErrorNumber= (or
    // SIGSYS when the default kills). Calls with their own errno in an allow
    // list get the default instead.
    std::set<std::string> listed = allowed;
    for (const std::string& name : by_arguments) listed.insert(name);
    out.emplace_back("SystemCallFilter", joined(listed));
    const uint32_t action = default_answer & SECCOMP_RET_ACTION_FULL;
    if (action == SECCOMP_RET_ERRNO)
      out.emplace_back("SystemCallErrorNumber", errno_name(int(default_answer & SECCOMP_RET_DATA)));
    else if (action != SECCOMP_RET_KILL_PROCESS)
      gaps.push_back("the default answer (log) has no systemd form: other calls are killed");
    for (const auto& [name, errno_text] : with_errno)
      gaps.push_back(name + ": answered " + errno_text + " by the policy; the allow-list's default answers it here");
    for (const std::string& name : killed)
      if (action != SECCOMP_RET_KILL_PROCESS)
        gaps.push_back(name + ": killed by the policy; the allow-list's default answers it here");
  } else {
    // A deny-list line: "~" and, per call, its errno ("name:ENAME"); a call
    // without one is killed (SIGSYS), so SystemCallErrorNumber= stays unset.
    std::set<std::string> listed = killed;
    for (const auto& [name, errno_text] : with_errno) listed.insert(name + ":" + errno_text);
    if (!listed.empty()) out.emplace_back("SystemCallFilter", "~" + joined(listed));
  }
}

void add_filesystem(const PolicyIR& ir, Properties& out, std::vector<std::string>& gaps) {
  if (!ir.filesystem.write) return;
  out.emplace_back("ReadOnlyPaths", "/");
  std::set<std::string> writable;
  for (const PathGrant& grant : *ir.filesystem.write) {
    if (std::optional<std::string> path = unit_path(grant)) writable.insert(*path);
    else gaps.push_back(grant.path.text() + ": ${CWD} has no unit specifier: not writable (set it by hand)");
  }
  if (!writable.empty()) out.emplace_back("ReadWritePaths", joined(writable));
}

void add_network(const PolicyIR& ir, Properties& out, std::vector<std::string>& gaps) {
  const auto& outbound = ir.network.outbound;
  const auto& bind = ir.network.bind;
  if (outbound && outbound->none) {
    out.emplace_back("PrivateNetwork", "yes");
    out.emplace_back("RestrictAddressFamilies", bind && bind->none ? "AF_UNIX" : "AF_UNIX AF_INET AF_INET6");
  } else if (outbound) {
    gaps.push_back("network.outbound: ports and hosts have no systemd form: not restricted");
  }
  if (bind && !bind->none) gaps.push_back("network.bind: ports have no systemd form: not restricted");
}

std::string decimal(uint64_t v) { return std::to_string(v); }

void add_resources(const PolicyIR& ir, Properties& out, std::vector<std::string>& gaps) {
  const ResourcesIR& r = ir.resources;
  if (r.memory) out.emplace_back("MemoryMax", decimal(r.memory->value));
  if (r.swap) out.emplace_back("MemorySwapMax", decimal(r.swap->value));
  if (r.pids) out.emplace_back("TasksMax", decimal(r.pids->value));
  // CPUQuota= is a percentage of one CPU: a millicore is a tenth of a percent.
  if (r.cpu_millicores) {
    const uint64_t m = r.cpu_millicores->value;
    out.emplace_back("CPUQuota", decimal(m / 10) + (m % 10 ? "." + decimal(m % 10) : "") + "%");
  }
  if (r.wall_clock_seconds) out.emplace_back("RuntimeMaxSec", decimal(r.wall_clock_seconds->value));
  if (r.open_files) out.emplace_back("LimitNOFILE", decimal(r.open_files->value));
  if (r.file_size) out.emplace_back("LimitFSIZE", decimal(r.file_size->value));
  if (r.stdout_bytes || r.stderr_bytes) gaps.push_back("resources: output byte limits have no systemd form");
  if (r.tmp_size) gaps.push_back("resources.tmp_size: no private /tmp size in systemd's properties");
}

void add_capabilities(const PolicyIR& ir, Properties& out) {
  std::set<std::string> kept;
  if (ir.isolation.linux_capabilities)
    for (const auto& [name, from] : *ir.isolation.linux_capabilities) kept.insert(name);
  out.emplace_back("CapabilityBoundingSet", joined(kept));
  out.emplace_back("NoNewPrivileges", "yes");
}

}  // namespace

std::string SystemdUnit::text() const {
  std::string out = "[Service]\n";
  for (const auto& [key, value] : properties) out += key + "=" + value + "\n";
  return out;
}

llvm::Expected<SystemdUnit> systemd_unit(const PolicyIR& ir) {
  SystemdUnit unit;
  add_capabilities(ir, unit.properties);
  if (ir.syscalls) add_syscalls(ir, unit.properties, unit.gaps);
  add_filesystem(ir, unit.properties, unit.gaps);
  add_network(ir, unit.properties, unit.gaps);
  add_resources(ir, unit.properties, unit.gaps);
  return unit;
}

}  // namespace aasmc
