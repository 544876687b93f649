#include "driver/cli.h"
#include "driver/verbs.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "frontend/parse_policy.h"
#include "frontend/yaml_edit.h"
#include "frontend/yaml_tree.h"
#include "support/diagnostics.h"
#include "supervisor/denial_report.h"

namespace aasmc {
namespace {

constexpr int kNothing = 0, kSuggested = 1, kUnusable = 3;  // and cli::kExitUsage

// One edit of the report, with the document and file it is for.
struct ReportEdit {
  std::string document, file;
  PolicyEdit edit;
};

// A policy document as given, with its parse tree.
struct Loaded {
  std::string path;
  unsigned buffer;
  YamlDocument yaml;
  std::string name;  // metadata.name
};

// The text of aasm-launch's --denials report (denial_report.h
// render_report), as a denial log's entries: one per denial block ("  WHAT
// xN", then its indented lines), with the edits its "edit:" sentences name
// (parse_edit_text), each for the document its file's "refused by" line
// names. The report is read from its first line on: what the command
// printed to the same stream before it (2> FILE) is not the report's, and
// a line that is neither indented nor the launcher's ends it. nullopt when
// the text names no edit, or a sentence that is not one (a report of
// another version): the receipt is needed then.
std::optional<nlohmann::json> report_text_entries(llvm::StringRef text) {
  constexpr llvm::StringLiteral kReportStart = "\naasm-launch: denials:";
  if (!text.startswith(kReportStart.drop_front())) text = text.drop_front(std::min(text.find(kReportStart), text.size()));
  nlohmann::json entries = nlohmann::json::array();
  bool any_edit = false;
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (line.startswith("aasm-launch: ") || line.trim().empty()) continue;
    if (!line.startswith("    ")) {  // a denial: "  WHAT  xN", "(by design)" after it
      if (!line.startswith("  ")) break;
      const llvm::StringRef what = line.trim();
      nlohmann::json entry = nlohmann::json::object();
      entry["denial"] = what.substr(0, what.rfind("  x")).str();
      entry["by_design"] = what.endswith("(by design)");
      entry["edits"] = nlohmann::json::array();
      entry["note"] = "";
      entries.push_back(std::move(entry));
      continue;
    }
    if (entries.empty()) return std::nullopt;
    nlohmann::json& entry = entries.back();
    llvm::StringRef body = line.trim();
    if (body.consume_front("edit: ")) {
      const std::optional<aasm::denials::Edit> e = aasm::denials::parse_edit_text(body);
      if (!e || e->file.empty()) return std::nullopt;
      nlohmann::json edit = nlohmann::json::object();
      edit["document"] = "";
      edit["file"] = e->file;
      edit["list"] = e->list;
      edit["op"] = e->op;
      edit["item"] = e->item;
      edit["line"] = e->line;
      edit["col"] = e->column;
      edit["widens"] = e->widens;
      entry["edits"].push_back(std::move(edit));
      any_edit = true;
    } else if (body.consume_front("refused by ")) {
      entry["policy_lines"].push_back(body.str());  // "FILE:L:C (DOCUMENT): ...", for the edits' documents
    } else if (!body.startswith("seen by: ") && !body.startswith("arguments: ")) {
      entry["note"] = body.str();
    }
  }
  if (!any_edit) return std::nullopt;
  // Each edit's document: the one its file's "refused by" line names, in any
  // block (a safe default's edit goes to a document no line of its own names).
  std::map<std::string, std::string> documents;
  for (const nlohmann::json& entry : entries)
    for (const nlohmann::json& policy_line : entry.value("policy_lines", nlohmann::json::array())) {
      const llvm::StringRef r = policy_line.get_ref<const std::string&>();
      const size_t open = r.find(" ("), close = r.find("): ", open);
      const llvm::StringRef place = r.substr(0, open);
      if (open == llvm::StringRef::npos || close == llvm::StringRef::npos) continue;
      const llvm::StringRef file = place.rsplit(':').first.rsplit(':').first;
      documents.emplace(file.str(), r.slice(open + 2, close).str());
    }
  for (nlohmann::json& entry : entries) {
    entry.erase("policy_lines");
    for (nlohmann::json& edit : entry["edits"])
      if (const auto it = documents.find(edit["file"].get<std::string>()); it != documents.end()) edit["document"] = it->second;
  }
  return entries;
}

// The denials section of a receipt, or a denial log: that section alone
// ({"entries": [...]}), or its entries as a list; or the text of the
// --denials report where it names the edits.
std::optional<nlohmann::json> denial_entries(const std::string& path, Diagnostics& diags) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    diags.file_error(path, "cannot read: " + buffer.getError().message(), diag::kSuggestInput);
    return std::nullopt;
  }
  const nlohmann::json json = nlohmann::json::parse((*buffer)->getBuffer().str(), nullptr, false);
  const nlohmann::json* section = &json;
  if (json.is_object() && json.contains("denials")) section = &json["denials"];
  const nlohmann::json* entries = section->is_object() && section->contains("entries") ? &(*section)["entries"] : section;
  if (json.is_discarded() && (*buffer)->getBuffer().contains("aasm-launch: denials:")) {
    if (std::optional<nlohmann::json> entries = report_text_entries((*buffer)->getBuffer())) {
      diags.file_warning(path,
                         "these edits come from the text of a --denials report, which shares the command's stderr: "
                         "the command could have printed it, its widening warnings left off; give the run's receipt "
                         "(aasm-launch --receipt FILE), which only the launcher writes",
                         diag::kSuggestUnsealed);
      return entries;
    }
    diags.file_error(path,
                     "this text of aasm-launch's --denials report names no edit aasmc suggest can read (a plan "
                     "without provenance, or no denial): run the command again with --receipt FILE and give that "
                     "file (it holds the same denials as JSON)",
                     diag::kSuggestInput);
    return std::nullopt;
  }
  if (json.is_discarded() || !entries->is_array()) {
    diags.file_error(path,
                     json.is_discarded() ? "not JSON: expected a receipt (aasm-launch --receipt) or a denial log"
                                         : "neither a receipt with a denials section nor a denial log (a list of entries)",
                     diag::kSuggestInput);
    return std::nullopt;
  }
  if (section != &json && section->value("provenance", true) == false)
    diags.file_warning(path, "the run's plan has no provenance section, so no denial names an edit: recompile the plan "
                             "with this aasmc and run again", diag::kSuggestNoEdit);
  return *entries;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

unsigned number_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<unsigned>() : 0;
}

// What an entry was refused, for a warning: "read_file ${HOME}/.x", "sethostname".
std::string denial_text(const nlohmann::json& entry) {
  if (!text_of(entry, "denial").empty()) return text_of(entry, "denial");  // as a text report wrote it
  std::string what = text_of(entry, "syscall");
  if (const auto rights = entry.find("rights"); rights != entry.end() && rights->is_array())
    for (const auto& r : *rights)
      if (r.is_string()) what += (what.empty() ? "" : ",") + r.get<std::string>();
  const std::string path = text_of(entry, "path");
  if (!path.empty()) what += " " + path;
  if (number_of(entry, "port")) what += " port " + std::to_string(number_of(entry, "port"));
  return what.empty() ? "a denial" : what;
}

// Every edit of the entries, each once, in the order first named.
std::optional<std::vector<ReportEdit>> collect_edits(const nlohmann::json& entries, const std::string& path,
                                                     Diagnostics& diags) {
  std::vector<ReportEdit> edits;
  for (const nlohmann::json& entry : entries) {
    const auto list = entry.is_object() ? entry.find("edits") : nlohmann::json::const_iterator{};
    if (!entry.is_object() || (list != entry.end() && !list->is_array())) {
      diags.file_error(path, "a denial entry is not an object with an edits list", diag::kSuggestInput);
      return std::nullopt;
    }
    if (entry.value("by_design", false)) continue;  // an answer by design (clone3's ENOSYS): nothing to allow
    if (list == entry.end() || list->empty()) {
      const std::string note = text_of(entry, "note");
      diags.file_warning(path, denial_text(entry) + ": no edit" + (note.empty() ? "" : ": " + note), diag::kSuggestNoEdit);
      continue;
    }
    for (const nlohmann::json& e : *list) {
      ReportEdit r{text_of(e, "document"), text_of(e, "file"),
                   {text_of(e, "list"), text_of(e, "op"), text_of(e, "item"), number_of(e, "line"), number_of(e, "col"),
                    text_of(e, "widens")}};
      static const char* const kOps[] = {"add", "remove", "set", "change"};
      if ((r.document.empty() && r.file.empty()) || r.edit.list.empty() || r.edit.item.empty() ||
          std::find(std::begin(kOps), std::end(kOps), r.edit.op) == std::end(kOps)) {
        diags.file_error(path, "an edit lacks its document, list or item, or has an unknown op '" + r.edit.op + "'",
                         diag::kSuggestInput);
        return std::nullopt;
      }
      const auto same = [&](const ReportEdit& x) {
        return x.document == r.document && x.edit.list == r.edit.list && x.edit.op == r.edit.op &&
               x.edit.item == r.edit.item && x.edit.line == r.edit.line && x.edit.column == r.edit.column;
      };
      if (std::none_of(edits.begin(), edits.end(), same)) edits.push_back(std::move(r));
    }
  }
  return edits;
}

std::optional<std::vector<Loaded>> load_policies(const std::vector<std::string>& paths, Diagnostics& diags) {
  std::vector<Loaded> loaded;
  for (const std::string& path : paths) {
    std::vector<PolicyDocument> documents;
    if (!load_policy_file(path, diags, documents) || diags.error_count() > 0) continue;
    // The same buffer's trees again, for their positions (already checked).
    const unsigned id = diags.sources().getNumBuffers();
    Diagnostics again(diags.sources());
    std::vector<YamlDocument> trees = load_yaml_documents(id, again);
    for (const PolicyDocument& doc : documents)
      if (doc.index_in_file < trees.size()) loaded.push_back({path, id, std::move(trees[doc.index_in_file]), doc.name});
  }
  if (diags.error_count() > 0) return std::nullopt;
  return loaded;
}

// The document an edit is for: by name, and where two files hold that name,
// the one the plan was compiled from (the edit's file, as given to aasmc).
const Loaded* document_for(const ReportEdit& r, const std::vector<Loaded>& loaded) {
  if (r.document.empty())  // from a text report whose lines did not name it: by its file, where one holds it
    for (const Loaded& l : loaded)
      if (l.path == r.file || llvm::sys::path::filename(l.path) == llvm::sys::path::filename(r.file)) return &l;
  std::vector<const Loaded*> named;
  for (const Loaded& l : loaded)
    if (l.name == r.document) named.push_back(&l);
  if (named.size() > 1) {
    const auto same_file = [&](const Loaded* l) {
      return l->path == r.file || llvm::sys::path::filename(l->path) == llvm::sys::path::filename(r.file);
    };
    const auto it = std::find_if(named.begin(), named.end(), same_file);
    if (it != named.end()) return *it;
  }
  return named.empty() ? nullptr : named.front();
}

const char* id_of(EditPlan::Note::Kind kind) {
  switch (kind) {
    case EditPlan::Note::Kind::kNoPlace: return diag::kSuggestNoPlace;
    case EditPlan::Note::Kind::kWidens: return diag::kSuggestWidens;
    case EditPlan::Note::Kind::kByHand: return diag::kSuggestByHand;
  }
  return diag::kSuggestNoPlace;
}

// The edited text must still be a policy: a failure here is aasmc's bug,
// and nothing is printed rather than a diff that breaks the file.
bool still_a_policy(const std::string& path, const std::string& text, Diagnostics& diags) {
  llvm::SourceMgr sources;
  Diagnostics check(sources);
  std::vector<PolicyDocument> documents;
  load_policy_buffer(llvm::MemoryBuffer::getMemBufferCopy(text, path), check, documents);
  if (check.error_count() == 0) return true;
  diags.file_error(path, "the suggested edits would not leave a valid policy (a bug of aasmc suggest: please report "
                         "it with the receipt); nothing is suggested",
                   diag::kSuggestNoPlace);
  return false;
}

}  // namespace

// `aasmc suggest RECEIPT POLICY.yaml...` (docs/cli.md#aasmc-suggest): the
// edits a run's denial report proposes, as a unified diff of the policy
// files on stdout; nothing is written. Exit 0 nothing to suggest, 1 a diff
// printed, 2 usage, 3 an input that cannot be used (no diff printed then).
int suggest_verb(const Args& args) {
  for (const std::string& arg : args)
    if (arg.size() > 1 && arg[0] == '-') return cli::usage_error("unknown option '" + arg + "'");
  if (args.size() < 2) return cli::usage_error("suggest needs a receipt (or denial log) and the policy files");
  llvm::SourceMgr sources;
  Diagnostics diags(sources);
  const cli::FlushAtExit flush(diags, DiagnosticFormat::kText);

  const std::optional<nlohmann::json> entries = denial_entries(args[0], diags);
  if (!entries) return kUnusable;
  const std::optional<std::vector<ReportEdit>> edits = collect_edits(*entries, args[0], diags);
  const std::optional<std::vector<Loaded>> loaded = load_policies({args.begin() + 1, args.end()}, diags);
  if (!edits || !loaded) return kUnusable;

  // The edits of each document, in the order the report names them.
  std::map<const Loaded*, std::vector<PolicyEdit>> per_document;
  for (const ReportEdit& r : *edits) {
    const Loaded* doc = document_for(r, *loaded);
    if (!doc) {
      diags.file_error(args[0], "an edit is for document '" + r.document + "' (" + r.file +
                                    "), which no policy file given holds: name that file too",
                       diag::kSuggestNoDocument);
      continue;
    }
    per_document[doc].push_back(r.edit);
  }
  std::string diff;
  for (const std::string& path : std::vector<std::string>(args.begin() + 1, args.end())) {
    std::vector<TextEdit> changes;
    llvm::StringRef text;
    for (const Loaded& doc : *loaded) {
      if (doc.path != path || !per_document.count(&doc)) continue;
      text = sources.getMemoryBuffer(doc.buffer)->getBuffer();
      const EditPlan plan = plan_policy_edits(text, doc.yaml, per_document[&doc]);
      for (const EditPlan::Note& n : plan.notes) {
        const llvm::SMLoc at = llvm::SMLoc::getFromPointer(text.data() + std::min(n.offset, text.size()));
        if (n.kind == EditPlan::Note::Kind::kNoPlace) diags.error(at, n.message, id_of(n.kind));
        else diags.warning(at, n.message, id_of(n.kind));
      }
      changes.insert(changes.end(), plan.changes.begin(), plan.changes.end());
    }
    if (changes.empty()) continue;
    std::stable_sort(changes.begin(), changes.end(), [](const TextEdit& a, const TextEdit& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < changes.size(); ++i)
      if (changes[i - 1].offset + changes[i - 1].length > changes[i].offset)
        diags.error(llvm::SMLoc::getFromPointer(text.data() + changes[i].offset),
                    "two edits of this place overlap: make them by hand", diag::kSuggestNoPlace);
    if (!still_a_policy(path, apply_text_edits(text, changes), diags)) continue;
    diff += unified_diff(path, text, changes);
  }
  if (diags.error_count() > 0) return kUnusable;
  llvm::outs() << diff;
  return diff.empty() ? kNothing : kSuggested;
}

}  // namespace aasmc
