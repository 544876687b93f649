#include "kernel/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "kernel/landlock_uapi.h"
#include "kernel/raw_syscall.h"

namespace aasm::landlock {

AbiProbe probe_abi() {
  AbiProbe probe;
  const long abi = ::syscall(kSysCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) {
    probe.error = errno;
    return probe;
  }
  probe.abi = int(abi);
  if (abi >= kErrataAbi) {
    const long errata = ::syscall(kSysCreateRuleset, nullptr, 0, kCreateRulesetErrata);
    if (errata > 0) probe.errata = uint32_t(errata);
  }
  return probe;
}

std::vector<std::string> errata_names(uint32_t errata) {
  std::vector<std::string> names;
  for (int number = 1; number <= 32; ++number) {
    if (!(errata & (1u << (number - 1)))) continue;
    std::string name = "erratum " + std::to_string(number);
    for (const Erratum& e : kErrata)
      if (e.number == number) name += " (ABI " + std::to_string(e.abi) + "): " + e.name;
    names.push_back(std::move(name));
  }
  return names;
}

Result<int> create_ruleset(const plan::LandlockRuleset& ruleset) {
  RulesetAttr attr{ruleset.handled_fs, ruleset.handled_net, ruleset.scoped};
  // Older kernels reject a larger struct with non-zero unknown fields, so pass
  // only the prefix the plan uses.
  size_t size = sizeof attr;
  if (attr.scoped == 0) size = offsetof(RulesetAttr, scoped);
  if (attr.scoped == 0 && attr.handled_access_net == 0) size = offsetof(RulesetAttr, handled_access_net);
  const long fd = ::syscall(kSysCreateRuleset, &attr, size, 0);
  if (fd < 0) return make_error(std::string("landlock_create_ruleset: ") + std::strerror(errno));
  return int(fd);
}

Status add_path_rule(int ruleset_fd, int path_fd, const struct stat& path_stat, uint64_t access) {
  if (!S_ISDIR(path_stat.st_mode)) access &= fs::kFileRights;
  if (access == 0) return Ok{};  // e.g. read_dir only, on a file: nothing to grant
  PathBeneathAttr attr{access, path_fd};
  if (::syscall(kSysAddRule, ruleset_fd, kRulePathBeneath, &attr, 0) != 0)
    return make_error(std::string("landlock_add_rule: ") + std::strerror(errno));
  return Ok{};
}

int add_directory_rule(int ruleset_fd, const char* path, uint64_t access) {
  const long fd = raw::syscall4(SYS_openat, AT_FDCWD, long(path), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return int(-fd);
  PathBeneathAttr attr{access, int(fd)};
  const long added = raw::syscall4(kSysAddRule, ruleset_fd, kRulePathBeneath, long(&attr), 0);
  raw::syscall4(SYS_close, fd);
  return added < 0 ? int(-added) : 0;
}

Status add_net_rule(int ruleset_fd, uint16_t port, uint64_t access) {
  NetPortAttr attr{access, port};
  if (::syscall(kSysAddRule, ruleset_fd, kRuleNetPort, &attr, 0) != 0)
    return make_error(std::string("landlock_add_rule (tcp port ") + std::to_string(port) + "): " + std::strerror(errno));
  return Ok{};
}

int restrict_self(int ruleset_fd, uint32_t flags) {
  return ::syscall(kSysRestrictSelf, ruleset_fd, flags) == 0 ? 0 : errno;
}

}  // namespace aasm::landlock
