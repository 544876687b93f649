// `aasmc verify PLAN POLICY...`: is the plan exactly what these sources and
// this compiler produce? It recompiles in memory and compares the bytes; when
// they differ it names why from the plan's own record (its meta entries:
// every source document's name, file and SHA-256, the compiler and
// libseccomp versions, the targets). docs/cli.md#aasmc-verify.
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "driver/cli.h"
#include "driver/verbs.h"

namespace aasmc {
namespace {

using namespace cli;
using aasm::plan::Plan;

constexpr int kExitStale = 1;
constexpr int kExitUnreadable = 3;

struct Change {
  const char* id;            // diag::kStale*
  std::string kind;          // "source", "toolchain", "targets", "content"
  std::string message;
  std::string file;          // where the diagnostic points: the policy file, or the plan
  nlohmann::ordered_json detail = nlohmann::ordered_json::object();
};

// The plan's source documents from its meta entries (source.NNN.FIELD).
struct SourceRecord {
  std::string name, file, sha256, tier;
};
std::vector<SourceRecord> sources_of(const Plan& plan) {
  std::map<std::string, SourceRecord> by_index;  // "000", "001": sorts in cascade order
  for (const auto& [key, value] : plan.meta) {
    if (!key.starts_with("source.")) continue;
    const size_t dot = key.find('.', 7);
    if (dot == std::string::npos) continue;
    SourceRecord& r = by_index[key.substr(7, dot - 7)];
    const std::string field = key.substr(dot + 1);
    if (field == "name") r.name = value;
    else if (field == "file") r.file = value;
    else if (field == "sha256") r.sha256 = value;
    else if (field == "tier") r.tier = value;
  }
  std::vector<SourceRecord> out;
  for (auto& [index, record] : by_index) out.push_back(std::move(record));
  return out;
}

// The policy file as given whose last component the plan records.
std::string given_path(const std::vector<std::string>& inputs, const std::string& file_name) {
  for (const std::string& input : inputs)
    if (llvm::sys::path::filename(input) == file_name) return input;
  return file_name;
}

std::string digest_text(const std::string& hex) { return std::string(aasm::plan::kDigestPrefix) + hex; }

void source_changes(const Plan& recorded, const Plan& fresh, const std::vector<std::string>& inputs,
                    std::vector<Change>& out) {
  std::vector<SourceRecord> old_sources = sources_of(recorded);
  std::vector<bool> matched(old_sources.size(), false);
  auto find = [&](const SourceRecord& s, bool same_digest) -> int {
    for (size_t i = 0; i < old_sources.size(); ++i)
      if (!matched[i] && old_sources[i].name == s.name && (!same_digest || old_sources[i].sha256 == s.sha256))
        return int(i);
    return -1;
  };
  std::vector<std::pair<SourceRecord, int>> pairs;
  for (const SourceRecord& now : sources_of(fresh)) {
    int at = find(now, true);
    if (at < 0) at = find(now, false);
    if (at >= 0) matched[at] = true;
    pairs.emplace_back(now, at);
  }
  for (const auto& [now, at] : pairs) {
    Change c{diag::kStaleSource, "source", "", given_path(inputs, now.file)};
    c.detail["document"] = now.name;
    c.detail["file"] = c.file;
    c.detail["sources_sha256"] = digest_text(now.sha256);
    if (at < 0) {
      c.detail["plan_sha256"] = nullptr;
      c.message = "document '" + now.name + "' (" + now.file + ", " + digest_text(now.sha256) +
                  ") is not in the plan: the plan was compiled without it";
    } else if (old_sources[at].sha256 != now.sha256) {
      c.detail["plan_sha256"] = digest_text(old_sources[at].sha256);
      c.message = "document '" + now.name + "' (" + now.file + ") changed: the plan was compiled from " +
                  digest_text(old_sources[at].sha256) + ", the file is now " + digest_text(now.sha256);
    } else if (old_sources[at].file != now.file) {
      c.detail["plan_sha256"] = digest_text(old_sources[at].sha256);
      c.message = "document '" + now.name + "' is now read from " + now.file + ", the plan recorded " +
                  old_sources[at].file;
    } else {
      continue;
    }
    out.push_back(std::move(c));
  }
  for (size_t i = 0; i < old_sources.size(); ++i) {
    if (matched[i]) continue;
    const SourceRecord& gone = old_sources[i];
    Change c{diag::kStaleSource, "source",
             "document '" + gone.name + "' (" + gone.file + ", " + digest_text(gone.sha256) +
                 ") is in the plan but not among the sources given",
             ""};
    c.detail["document"] = gone.name;
    c.detail["file"] = gone.file;
    c.detail["plan_sha256"] = digest_text(gone.sha256);
    c.detail["sources_sha256"] = nullptr;
    out.push_back(std::move(c));
  }
}

// The meta entries naming the toolchain, then the target list.
void toolchain_changes(const Plan& recorded, const Plan& fresh, const std::string& plan_path,
                       std::vector<Change>& out) {
  for (const char* key : {"compiler.version", "libseccomp.version", "libseccomp.api_level"}) {
    const std::string was = meta_value(recorded, key), now = meta_value(fresh, key);
    if (was == now) continue;
    Change c{diag::kStaleToolchain, "toolchain",
             std::string(key) + ": the plan was compiled with " + (was.empty() ? "none recorded" : was) +
                 ", this aasmc has " + now,
             plan_path};
    c.detail["key"] = key;
    c.detail["plan"] = was;
    c.detail["now"] = now;
    out.push_back(std::move(c));
  }
  const std::string was = meta_value(recorded, "targets"), now = meta_value(fresh, "targets");
  if (was != now) {
    Change c{diag::kStaleTargets, "targets",
             "targets: the plan was compiled for " + was + ", this verification compiles for " + now +
                 " (give the compile's --arch)",
             plan_path};
    c.detail["plan"] = was;
    c.detail["now"] = now;
    out.push_back(std::move(c));
  }
}

// A pinned file whose content changed since the plan was compiled: the same
// pin in both plans, other digests. A pin added or removed is a change of a
// source document, named above.
void pinned_changes(const Plan& recorded, const Plan& fresh, const std::string& plan_path, std::vector<Change>& out) {
  for (const aasm::plan::PinnedFile& was : recorded.pinned)
    for (const aasm::plan::PinnedFile& now : fresh.pinned) {
      if (was.path != now.path || was == now) continue;
      Change c{diag::kStalePinned, "pinned",
               "pinned file " + was.path + " changed: the plan recorded " + digest_text(aasm::to_hex(was.sha256)) +
                   " (" + std::to_string(was.size) + " bytes), the file is now " +
                   digest_text(aasm::to_hex(now.sha256)) + " (" + std::to_string(now.size) + " bytes)",
               plan_path};
      c.detail["path"] = was.path;
      c.detail["plan_sha256"] = digest_text(aasm::to_hex(was.sha256));
      c.detail["now_sha256"] = digest_text(aasm::to_hex(now.sha256));
      c.detail["plan_size"] = was.size;
      c.detail["now_size"] = now.size;
      out.push_back(std::move(c));
    }
}

// Same sources and toolchain, other bytes: which parts differ.
void content_changes(const Plan& recorded, const Plan& fresh, const std::string& plan_path,
                     std::vector<Change>& out) {
  std::vector<std::string> parts;
  if (recorded.meta != fresh.meta) parts.push_back("meta");
  if (recorded.landlock != fresh.landlock) parts.push_back("landlock");
  if (recorded.process != fresh.process) parts.push_back("process");
  if (recorded.view != fresh.view) parts.push_back("filesystem view");
  if (recorded.seccomp != fresh.seccomp) parts.push_back("seccomp");
  if (recorded.syscalls != fresh.syscalls) parts.push_back("syscall manifest");
  if (recorded.pinned != fresh.pinned) parts.push_back("pinned files");
  if (recorded.provenance != fresh.provenance)
    parts.push_back("provenance (the policy files given by other paths?)");
  std::string list;
  for (const std::string& p : parts) list += (list.empty() ? "" : ", ") + p;
  Change c{diag::kStaleContent, "content",
           "the plan differs from what the same sources and compiler give, in: " +
               (list.empty() ? std::string("its encoding") : list),
           plan_path};
  c.detail["parts"] = parts;
  out.push_back(std::move(c));
}

struct VerifyOptions {
  std::string plan;
  CompileRequest compile;
  bool json = false;
  DiagnosticFormat format = DiagnosticFormat::kText;
};

int parse(const Args& args, VerifyOptions& o) {
  o.compile.targets = all_target_list();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--json") {
      o.json = true;
    } else if (int rc = take_arch_option(args, i, o.compile.targets); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (int rc = take_format_option(args, i, o.format); rc != -1) {
      if (rc != kExitOk) return rc;
    } else if (args[i].size() > 1 && args[i][0] == '-') {
      return usage_error("unknown option '" + args[i] + "'");
    } else if (o.plan.empty()) {
      o.plan = args[i];
    } else {
      o.compile.inputs.push_back(args[i]);
    }
  }
  if (o.plan.empty() || o.compile.inputs.empty()) return usage_error("verify takes a plan and its policy files");
  return kExitOk;
}

}  // namespace

int verify_verb(const Args& args) {
  VerifyOptions o;
  if (int rc = parse(args, o); rc != kExitOk) return rc;
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const FlushAtExit flush(diags, o.format);
  nlohmann::ordered_json report;
  report["plan"] = o.plan;
  auto unreadable = [&] {
    if (o.json) {
      report["verdict"] = "unreadable";
      print_json(report);
    }
    return kExitUnreadable;
  };
  auto loaded = load_plan(o.plan);
  if (!loaded) {
    diags.file_error(o.plan, without_path(o.plan, loaded.error().message), diag::kPlanUnreadable);
    return unreadable();
  }
  // Recompiled for the backend the plan records (meta `backend`), as
  // `compile --backend` wrote it; a native plan records none.
  if (std::optional<Backend> backend = find_backend(meta_value(loaded->plan, "backend")))
    o.compile.backend = BackendChoice{{*backend}, false};
  const std::optional<std::vector<uint8_t>> bytes = compile_in_memory(o.compile, diags);
  if (!bytes) return unreadable();
  const std::string identity = aasm::plan::plan_identity(loaded->bytes);
  const std::string expected = aasm::plan::plan_identity(*bytes);
  report["identity"] = identity;
  report["sources_identity"] = expected;
  if (loaded->bytes == *bytes) {
    report["verdict"] = "fresh";
    report["changes"] = nlohmann::ordered_json::array();
    if (o.json) print_json(report);
    else llvm::outs() << "fresh: " << o.plan << " (" << identity << ") is what these sources compile to\n";
    return kExitOk;
  }
  auto fresh = aasm::plan::decode_plan(*bytes);
  if (!fresh) {  // the compiler's own bytes: never expected
    diags.global_error("the recompiled plan does not read back: " + fresh.error().message, diag::kLowering);
    return unreadable();
  }
  std::vector<Change> changes;
  source_changes(loaded->plan, *fresh, o.compile.inputs, changes);
  toolchain_changes(loaded->plan, *fresh, o.plan, changes);
  pinned_changes(loaded->plan, *fresh, o.plan, changes);
  if (changes.empty()) content_changes(loaded->plan, *fresh, o.plan, changes);
  report["verdict"] = "stale";
  report["changes"] = nlohmann::ordered_json::array();
  for (const Change& c : changes) {
    diags.file_error(c.file.empty() ? o.plan : c.file, c.message, c.id);
    nlohmann::ordered_json j;
    j["id"] = c.id;
    j["kind"] = c.kind;
    j["message"] = c.message;
    j.update(c.detail);
    report["changes"].push_back(std::move(j));
  }
  if (o.json) {
    print_json(report);
  } else {
    // The changes themselves are the diagnostics, on stderr.
    llvm::outs() << "stale: " << o.plan << " (" << identity << ") is not what these sources compile to ("
                 << expected << "): " << changes.size() << " change" << (changes.size() == 1 ? "" : "s") << "\n";
  }
  return kExitStale;
}

}  // namespace aasmc
