#include "receipt_builder.h"

#include <signal.h>
#include <algorithm>
#include <sys/wait.h>
#include <time.h>

#include "kernel/arch.h"

namespace aasm {

ReceiptDenials receipt_denials(const denials::Log& log, const plan::Plan& plan, const LaunchContext& context,
                               const std::vector<std::string>& unseen) {
  ReceiptDenials out{plan.provenance.has_value(), log.dropped(), unseen, {}};
  for (const denials::Log::Entry& entry : log.entries())
    out.entries.push_back({entry.denial, entry.count, denials::explain(entry.denial, plan, context)});
  return out;
}

std::string run_outcome(const Termination& t) {
  if (!t.started) return outcome::kNotStarted;
  if (t.ending == Ending::kDeadline) return outcome::kDeadline;
  if (t.ending == Ending::kStdoutLimit || t.ending == Ending::kStderrLimit) return outcome::kOutputLimit;
  // The kernel's OOM killer sends SIGKILL; counted in the run's cgroup, it
  // tells that death from any other SIGKILL.
  if (t.oom_kills && WIFSIGNALED(t.status) && WTERMSIG(t.status) == SIGKILL) return outcome::kOutOfMemory;
  // A refused fork ends nothing by itself: a command that then failed
  // failed at the ceiling; one that exited 0 coped, and only the event says so.
  if (t.pids_max_hits && !(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0)) return outcome::kTaskLimit;
  if (WIFSIGNALED(t.status)) return outcome::kSignal;
  return outcome::kExited;
}

uint64_t now_ms() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return uint64_t(now.tv_sec) * 1000 + uint64_t(now.tv_nsec) / 1000000;
}

namespace {

// The controls summed up: none when nothing ran; degraded when a control
// the plan asks for is below enforced; full otherwise.
std::string enforcement_of(const std::vector<ReceiptControl>& controls, bool started) {
  if (!started) return enforcement::kNone;
  for (const ReceiptControl& c : controls) {
    if (c.planned == planned_text(Planned::kNotPlanned)) continue;
    if (c.achieved != control_level_name(ControlLevel::kEnforced) &&
        c.achieved != control_level_name(ControlLevel::kNotMeasured))
      return enforcement::kDegraded;
  }
  return enforcement::kFull;
}

ReceiptRedaction redaction_of(const Withheld& w) {
  ReceiptRedaction out;
  const ReceiptKey& key = *w.key;
  out.key_source = key.source;
  out.key_id = keyed_digest(key, "key id", "");
  for (const std::string& argument : w.command) out.argument_hmacs.push_back(keyed_digest(key, "argument", argument));
  out.environment = w.environment_filtered
                        ? "by the plan: only what environment.pass names and environment.set sets"
                        : "not constrained: the launcher's own, less the dynamic loader's LD_* variables";
  std::vector<std::string> sorted = w.environment;
  std::sort(sorted.begin(), sorted.end());
  std::string joined;
  for (const std::string& variable : sorted) joined += variable + '\0';
  out.environment_variables = sorted.size();
  out.environment_hmac = keyed_digest(key, "environment", joined);
  out.cwd_hmac = keyed_digest(key, "cwd", w.cwd);
  return out;
}

}  // namespace

Receipt build_receipt(const LaunchReport& report, const RunEnd& end, const Withheld& withheld,
                      ReceiptDenials denials) {
  Receipt r;
  r.plan_sha256 = report.plan_sha256;
  r.backend = report.backend;
  for (const LaunchReport::BackendTried& t : report.backends) r.backends.push_back({t.backend, t.taken, t.why});
  r.kernel_release = report.host.kernel_release;
  r.architecture = plan::audit_arch_name(kNativeAuditArch);
  r.landlock_abi = report.host.landlock.abi;
  // Nothing is enforced by a launch that never started its command, whatever
  // steps the child took before it stopped.
  const bool started = end.outcome != outcome::kNotStarted;
  for (const ControlReport& c : report.controls) {
    Achieved achieved = c.achieved.value_or(Achieved{});
    if (!started && achieved.level != ControlLevel::kNotEstablished)
      achieved = {ControlLevel::kNotEstablished, {Basis::kMeasured, "the command was not started"}};
    // Enforced on nothing this launch saw: the kernel was asked, no check
    // confirmed it (file_execute has none before the command's own exec).
    if (achieved.level == ControlLevel::kEnforced && achieved.basis.basis != Basis::kMeasured)
      achieved.level = ControlLevel::kNotMeasured;
    r.controls.push_back({control_name(c.control), c.requested, planned_text(c.planned),
                          control_level_name(achieved.level), achieved.basis.str()});
  }
  // Every control is stated: those the plan does not touch as such, so an
  // absent network control reads "not constrained", not "not mentioned".
  for (uint8_t i = 0; i < kControlCount; ++i) {
    const Control control = Control(i);
    const bool reported = std::any_of(report.controls.begin(), report.controls.end(),
                                      [control](const ControlReport& c) { return c.control == control; });
    if (!reported)
      r.controls.push_back(
          {control_name(control), "nothing", planned_text(Planned::kNotPlanned),
           control_level_name(ControlLevel::kNotConstrained),
           Evidence{Basis::kAsserted, control == Control::kResource
                                          ? "the plan sets no tree limit (memory, swap, pids, cpu); a wall-clock "
                                            "deadline, output limits and rlimits, where it sets them, are not this control"
                                          : "the plan does not constrain it"}
               .str()});
  }
  r.enforcement = enforcement_of(r.controls, started);
  // No resolved path: its keyed digest, which compares equal under the same key.
  for (const BoundPath& path : report.paths)
    r.paths.push_back({path.rule_template, path.resolved.empty() ? "" : keyed_digest(*withheld.key, "path", path.resolved),
                       path.identity ? "bound" : "skipped (optional, missing)"});
  for (const ViewMount& m : report.view) r.view.push_back({m.path, m.what, m.options, m.status});
  for (const PinCheck& pin : report.pins)
    r.pinned.push_back({pin.planned.path, plan::identity_text(pin.planned.sha256), pin.planned.size, pin.status()});
  r.outcome = end.outcome;
  r.signal = end.signal;
  r.exit_code = end.exit_code;
  r.events = end.events;
  r.cleanup = end.cleanup;
  r.denials = std::move(denials);
  r.redaction = redaction_of(withheld);
  r.timeline = end.timeline;
  return r;
}

}  // namespace aasm
