// What the run's confinement refused, as the run's observers saw it, for the
// end-of-run report (--denials) and the receipt. Observers add records;
// nothing here decides anything: a denial is recorded after the kernel or
// the supervisor refused the call, never instead of refusing it.
//
// A command may flood denials (a loop of refused opens): the log keeps each
// distinct denial once with its count, at most kMaxDistinct of them, and
// counts the records it dropped beyond that, so the supervisor's memory is
// bounded whatever the command does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace aasm::denials {

// The mechanism that refused.
enum class Layer : uint8_t {
  kSeccomp,        // the plan's filter: an errno answer or a kill
  kLandlockFs,     // a Landlock filesystem right
  kLandlockNet,    // a Landlock network right (TCP bind/connect port)
  kLandlockScope,  // a Landlock scope (abstract unix socket, signal)
  kBroker,         // the egress broker refused a host (network.outbound.hosts): `path` the host, `port` its port
};

// How the denial became known: the report says which, since some are
// inferred (an exit status) and some seen (a listener, a record).
enum class Witness : uint8_t {
  kListener,       // the supervisor answered it through a seccomp listener
  kKernelRecord,   // the kernel's own record: audit/kmsg of a seccomp kill, Landlock's audit record
  kExitStatus,     // inferred from the command's SIGSYS exit status, nothing more known
  kTracer,         // the opt-in --explain tracer saw the failing call return
  kLauncher,       // the launcher's own execve of the command failed (supervisor/exec_refusal.h)
  kBroker,         // the egress broker answered the request 403 itself (supervisor/egress_broker.h)
};

struct Denial {
  Layer layer = Layer::kSeccomp;
  Witness witness = Witness::kListener;
  int syscall = -1;        // the call's number on `arch`; -1 when unknown (an exit status)
  uint32_t arch = 0;       // AUDIT_ARCH_* of that number; 0: the host's (kNativeAuditArch)
  int error = 0;           // the errno the call got; 0 for a kill (SIGSYS)
  uint64_t rights = 0;     // Landlock: the right(s) refused, as landlock_rights.def bits of the layer
  std::string path;        // Landlock fs: the path as the witness resolved it
  uint16_t port = 0;       // Landlock net
  std::string arguments;   // the call's decisive arguments, as text ("arg0=0x80000"), when they matter

  // Two records of the same refusal (whoever saw them) are one denial.
  auto key() const { return std::tie(layer, syscall, error, rights, path, port, arguments); }
};

// A seccomp denial's `arguments`: those of `args` its program read (bit i
// of `read`: args[i]), as "arg0=0x1 arg2=0x80000".
std::string argument_text(std::span<const uint64_t, 6> args, uint8_t read);

// Argument `i` of a seccomp denial, where its `arguments` name it.
std::optional<uint64_t> argument_of(const Denial& denial, int i);

class Log {
 public:
  static constexpr size_t kMaxDistinct = 256;
  static constexpr size_t kMaxText = 4096;  // a longer path or argument text is cut there

  struct Entry {
    Denial denial;
    uint64_t count = 0;
  };

  void add(Denial denial);

  const std::vector<Entry>& entries() const { return entries_; }  // in the order first seen
  uint64_t dropped() const { return dropped_; }                    // records of denials beyond kMaxDistinct
  bool empty() const { return entries_.empty() && dropped_ == 0; }

 private:
  using Key = std::tuple<Layer, int, int, uint64_t, std::string, uint16_t, std::string>;
  std::map<Key, size_t> index_;
  std::vector<Entry> entries_;
  uint64_t dropped_ = 0;
};

}  // namespace aasm::denials
