#include "backend/plan_builder.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/Path.h>

#include <cstdio>

#include "backend/egress_lowering.h"
#include "backend/landlock_lowering.h"
#include "backend/seccomp_lowering.h"
#include "backend/socket_rules.h"
#include "backend/view_lowering.h"
#include "kernel/capabilities.h"

namespace aasmc {
namespace {

using aasm::plan::Plan;

aasm::plan::SyscallOrigin plan_origin(SyscallEntryIR::Origin origin) {
  switch (origin) {
    case SyscallEntryIR::Origin::kPolicy: return aasm::plan::SyscallOrigin::kPolicy;
    case SyscallEntryIR::Origin::kStartup: return aasm::plan::SyscallOrigin::kStartup;
  }
  return aasm::plan::SyscallOrigin::kPolicy;
}

void add_meta(const PolicyIR& ir, Plan& plan) {
  auto& meta = plan.meta;
  meta.emplace_back("compiler.version", kCompilerVersion);
  meta.emplace_back("libseccomp.api_level", std::to_string(pinned_seccomp_api_level()));
  meta.emplace_back("libseccomp.version", libseccomp_version());
  for (size_t i = 0; i < ir.sources.size(); ++i) {
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "source.%03zu.", i);  // zero-padded: sorts in cascade order
    const SourceDocument& source = ir.sources[i];
    meta.emplace_back(prefix + std::string("file"), source.file_name);
    meta.emplace_back(prefix + std::string("name"), source.name);
    meta.emplace_back(prefix + std::string("sha256"), aasm::to_hex(source.file_digest));
    meta.emplace_back(prefix + std::string("tier"), tier_name(source.tier));
  }
  // What enforces network.outbound beyond Landlock's TCP rights (docs/landlock.md).
  if (std::optional<std::string> lowering = network_outbound_lowering(ir.network))
    meta.emplace_back("lowering.network_outbound", std::move(*lowering));
  if (std::optional<std::string> lowering = network_bind_lowering(ir.network))
    meta.emplace_back("lowering.network_bind", std::move(*lowering));
  // The safe defaults the filter carries, for `aasmc show` (docs/seccomp.md).
  if (ir.syscalls)
    for (const SafeDefaultIR& d : ir.syscalls->safe_defaults) {
      std::string value = d.action.text();
      const char* separator = "; allowed by the policy: ";
      for (const auto& [name, from] : d.allowed_by_policy) {
        value += separator + name;
        separator = ", ";
      }
      meta.emplace_back("safe_default." + d.group, value);
    }
  std::string targets;
  for (const Target& target : ir.targets) targets += std::string(targets.empty() ? "" : ",") + target.name;
  meta.emplace_back("targets", targets);
  std::sort(meta.begin(), meta.end());
}

// Resources, supervision limits and the environment; nullopt when the policy
// sets none of them.
std::optional<aasm::plan::ProcessSettings> lower_process(const PolicyIR& ir) {
  const bool keeps_capabilities = ir.isolation.linux_capabilities && !ir.isolation.linux_capabilities->empty();
  const bool brokered = brokered_outbound(ir.network) != nullptr;
  if (ir.resources.empty() && ir.environment.empty() && ir.isolation.namespaces.empty() && !keeps_capabilities &&
      !brokered)
    return std::nullopt;
  aasm::plan::ProcessSettings p;
  auto value = [](const std::optional<Effective<uint64_t>>& v) -> std::optional<uint64_t> {
    if (!v) return std::nullopt;
    return v->value;
  };
  const ResourcesIR& r = ir.resources;
  p.open_files = value(r.open_files);
  p.file_size = value(r.file_size);
  p.memory = value(r.memory);
  p.swap = value(r.swap);
  p.pids = value(r.pids);
  p.cpu_millicores = value(r.cpu_millicores);
  p.wall_clock_seconds = value(r.wall_clock_seconds);
  p.stdout_bytes = value(r.stdout_bytes);
  p.stderr_bytes = value(r.stderr_bytes);
  if (ir.degraded_allowed(Domain::kResource)) p.flags |= aasm::plan::kProcessResourceDegradable;
  for (const auto& [name, from] : ir.isolation.namespaces)
    if (std::optional<uint32_t> bit = aasm::plan::namespace_bit(name)) p.namespaces |= *bit;
  // Host names are brokered: the command's own network, loopback only.
  if (brokered) p.namespaces |= aasm::plan::kNamespaceNet;
  if (ir.isolation.linux_capabilities)
    for (const auto& [name, from] : *ir.isolation.linux_capabilities)
      if (std::optional<int> number = aasm::capabilities::number(name)) p.kept_capabilities |= uint64_t(1) << *number;
  if (!ir.environment.empty()) {
    p.environment_filtered = true;
    if (ir.environment.pass)
      for (const auto& [name, from] : *ir.environment.pass) p.environment_pass.push_back(name);
    for (const auto& [name, value] : ir.environment.set) p.environment_set.emplace_back(name, value.value);
  }
  return p;
}

}  // namespace

llvm::Expected<Plan> build_plan(const PolicyIR& policy) {
  llvm::Expected<PolicyIR> lowered = with_socket_rules(policy);
  if (!lowered) return lowered.takeError();
  const PolicyIR& ir = *lowered;
  Plan plan;
  add_meta(ir, plan);
  plan.landlock = lower_landlock(ir);
  plan.process = lower_process(ir);
  plan.view = lower_view(ir);
  plan.egress = lower_egress(ir.network);
  if (ir.syscalls) {
    for (const Target& target : ir.targets) {
      auto programs = lower_syscalls(*ir.syscalls, target);
      if (!programs) return programs.takeError();
      for (auto& program : *programs) plan.seccomp.push_back(std::move(program));
    }
    // By architecture; each architecture's programs keep their install order.
    std::stable_sort(plan.seccomp.begin(), plan.seccomp.end(),
                     [](const auto& a, const auto& b) { return a.audit_arch < b.audit_arch; });
    // The manifest lists what the filter names: allowed calls with their
    // origin, and in a denylist the denied ones.
    for (const auto& [name, entry] : ir.syscalls->allowed)
      plan.syscalls.push_back({name, plan_origin(entry.origin), seccomp_return_value({Action::Kind::kAllow, 0})});
    if (ir.syscalls->mode == SyscallIR::Mode::kDenylist)
      for (const auto& [name, from] : ir.syscalls->denied)
        plan.syscalls.push_back({name, aasm::plan::SyscallOrigin::kPolicy, seccomp_return_value(ir.syscalls->default_action.value)});
  }
  return plan;
}

namespace {

llvm::Error os_error(std::error_code ec) { return llvm::createStringError(ec, "%s", ec.message().c_str()); }

// Writes `data` to `fd` and closes it.
llvm::Error write_and_close(int fd, llvm::StringRef data) {
  llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << data;
  out.close();
  if (out.has_error()) return os_error(out.error());
  return llvm::Error::success();
}

// A character device (`-o /dev/null` for a check-only compile) takes the
// bytes where it is: rename(2) would replace the node itself with a file.
llvm::Error write_in_place(const std::string& path, llvm::StringRef data) {
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd, llvm::sys::fs::CD_OpenExisting))
    return os_error(ec);
  return write_and_close(fd, data);
}

// The steps of llvm::writeFileAtomically, whose error names the failed step
// (failed_to_create_uniq_file) but not the OS's reason, which a user needs.
llvm::Error write_beside_and_rename(const std::string& path, llvm::StringRef data) {
  llvm::SmallString<256> temp;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp.%%%%%%", fd, temp)) return os_error(ec);
  if (llvm::Error error = write_and_close(fd, data)) {
    llvm::sys::fs::remove(temp);
    return error;
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return os_error(ec);
  }
  return llvm::Error::success();
}

}  // namespace

llvm::Error write_plan_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const llvm::StringRef data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) && status.type() != llvm::sys::fs::file_type::regular_file) {
    if (status.type() == llvm::sys::fs::file_type::character_file)
      return write_in_place(path, data);
    return llvm::createStringError(std::errc::invalid_argument,
                                   "not a regular file (a plan is written beside its path and renamed over it; "
                                   "a character device such as /dev/null is written in place)");
  }
  return write_beside_and_rename(path, data);
}

}  // namespace aasmc
