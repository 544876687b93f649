#include "support/diagnostic_formats.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

namespace aasmc {
namespace {

using Json = nlohmann::ordered_json;

// The rows of support/diagnostics.def; a rule's name is its constant's, less the k.
constexpr DiagnosticInfo kTable[] = {
#define AASM_DIAGNOSTIC(name, id, severity, summary) {id, #name + 1, summary, Severity::severity},
#include "support/diagnostics.def"
};

// Located diagnostics are results; SARIF (and GitHub, which refuses the
// whole file otherwise) needs each result to have a location.
bool has_location(const Diagnostic& d) { return !d.id.empty() && !d.file.empty() && d.line > 0; }

Json or_null(unsigned value) { return value ? Json(value) : Json(nullptr); }

Json json_entry(const Diagnostic& d, bool is_note) {
  Json entry;
  entry["severity"] = severity_name(d.severity);
  if (!is_note) entry["id"] = d.id.empty() ? Json(nullptr) : Json(d.id);
  entry["message"] = d.message;
  entry["file"] = d.file.empty() ? Json(nullptr) : Json(d.file);
  entry["line"] = or_null(d.line);
  entry["column"] = or_null(d.column);
  entry["endColumn"] = d.end_column ? Json(*d.end_column) : Json(nullptr);
  if (!is_note) {
    Json notes = Json::array();
    for (const Diagnostic& note : d.notes) notes.push_back(json_entry(note, true));
    entry["notes"] = std::move(notes);
  }
  return entry;
}

const char* sarif_level(Severity severity) { return severity_name(severity); }  // error, warning, note

class SarifWriter {
 public:
  explicit SarifWriter(const RenderOptions& options) : options_(options) {
    base_ = options.base_directory;
    if (base_.empty()) {
      llvm::SmallString<256> cwd;
      if (!llvm::sys::fs::current_path(cwd)) base_ = std::string(cwd);
    }
  }

  std::string render(llvm::ArrayRef<Diagnostic> diagnostics) {
    Json results = Json::array();
    Json notifications = Json::array();
    bool tool_failed = false;
    for (const Diagnostic& d : diagnostics) {
      if (has_location(d)) {
        results.push_back(result(d));
      } else {
        notifications.push_back(notification(d));
        if (d.severity == Severity::kError) tool_failed = true;
      }
    }

    // Rules sorted by id; results point at theirs by index.
    unsigned next_index = 0;
    for (auto& entry : rule_index_) entry.second = next_index++;
    for (Json& r : results) r["ruleIndex"] = rule_index_.at(r["ruleId"].get<std::string>());
    for (Json& n : notifications)
      if (n.contains("associatedRule"))
        n["associatedRule"]["index"] = rule_index_.at(n["associatedRule"]["id"].get<std::string>());

    Json rules = Json::array();
    for (const auto& entry : rule_index_) {
      const std::string& id = entry.first;
      const DiagnosticInfo* info = find_diagnostic_info(id);
      Json rule;
      rule["id"] = id;
      rule["name"] = info ? info->name : id;
      rule["shortDescription"] = {{"text", info ? info->summary : id}};
      rule["defaultConfiguration"] = {{"level", sarif_level(info ? info->level : Severity::kError)}};
      rules.push_back(std::move(rule));
    }

    Json driver;
    driver["name"] = "aasmc";
    driver["version"] = options_.tool_version.empty() ? "unknown" : options_.tool_version;
    driver["informationUri"] = kToolInformationUri;
    driver["rules"] = std::move(rules);

    Json invocation;
    invocation["executionSuccessful"] = !tool_failed;
    if (!notifications.empty()) invocation["toolExecutionNotifications"] = std::move(notifications);

    Json run;
    run["tool"] = {{"driver", std::move(driver)}};
    run["invocations"] = Json::array({std::move(invocation)});
    run["columnKind"] = "utf16CodeUnits";
    run["results"] = std::move(results);

    Json log;
    log["$schema"] = kSarifSchema;
    log["version"] = "2.1.0";
    log["runs"] = Json::array({std::move(run)});
    return dump(log, 2);
  }

 private:
  void rule_for(const std::string& id) { rule_index_.emplace(id, 0); }

  Json physical_location(const Diagnostic& d) {
    bool relative = false;
    Json artifact;
    artifact["uri"] = artifact_uri(d.file, base_, &relative);
    if (relative) artifact["uriBaseId"] = "%SRCROOT%";
    const unsigned start = utf16_column(d.source_line, std::max(d.column, 1u));
    unsigned end = start + 1;
    if (d.end_column) end = std::max(end, utf16_column(d.source_line, *d.end_column));
    Json region;
    region["startLine"] = d.line;
    region["startColumn"] = start;
    region["endColumn"] = end;
    Json location;
    location["artifactLocation"] = std::move(artifact);
    location["region"] = std::move(region);
    return location;
  }

  Json result(const Diagnostic& d) {
    rule_for(d.id);
    Json r;
    r["ruleId"] = d.id;
    r["ruleIndex"] = 0;  // set in render() once every id is known
    r["level"] = sarif_level(d.severity);
    r["message"] = {{"text", d.message}};
    r["locations"] = Json::array({{{"physicalLocation", physical_location(d)}}});
    if (!d.notes.empty()) {
      Json related = Json::array();
      unsigned next_id = 1;
      for (const Diagnostic& note : d.notes) {
        Json location;
        location["id"] = next_id++;
        if (!note.file.empty() && note.line > 0) location["physicalLocation"] = physical_location(note);
        location["message"] = {{"text", note.message}};
        related.push_back(std::move(location));
      }
      r["relatedLocations"] = std::move(related);
    }
    return r;
  }

  Json notification(const Diagnostic& d) {
    std::string text = d.message;
    // A diagnostic without a place: its notes can only travel as text.
    for (const Diagnostic& note : d.notes) text += "\nnote: " + note.message;
    Json n;
    n["level"] = sarif_level(d.severity);
    n["message"] = {{"text", text}};
    if (!d.id.empty()) {
      rule_for(d.id);
      n["associatedRule"] = {{"id", d.id}};
    }
    return n;
  }

  const RenderOptions& options_;
  std::string base_;
  std::map<std::string, unsigned> rule_index_;
};

bool is_uri_safe(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '/';
}

std::string percent_encode(llvm::StringRef path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (is_uri_safe(c)) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string normalized_absolute(llvm::StringRef path, llvm::StringRef base) {
  llvm::SmallString<256> full(path);
  if (!llvm::sys::path::is_absolute(full, llvm::sys::path::Style::posix)) {
    full = base;
    llvm::sys::path::append(full, llvm::sys::path::Style::posix, path);
  }
  llvm::sys::path::remove_dots(full, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
  return std::string(full);
}

}  // namespace

std::string dump(const Json& document, int indent) {
  // Messages quote the user's text and file names come from the command
  // line: never let a stray byte make the document unwritable.
  return document.dump(indent, ' ', false, Json::error_handler_t::replace) + "\n";
}

llvm::ArrayRef<DiagnosticInfo> diagnostic_table() { return kTable; }

const DiagnosticInfo* find_diagnostic_info(llvm::StringRef id) {
  for (const DiagnosticInfo& info : kTable)
    if (id == info.id) return &info;
  return nullptr;
}

std::optional<DiagnosticFormat> parse_diagnostic_format(llvm::StringRef name) {
  if (name == "text") return DiagnosticFormat::kText;
  if (name == "json") return DiagnosticFormat::kJson;
  if (name == "sarif") return DiagnosticFormat::kSarif;
  return std::nullopt;
}

std::string artifact_uri(llvm::StringRef file, llvm::StringRef base_directory, bool* relative) {
  const std::string base = normalized_absolute(base_directory, "/");
  const std::string full = normalized_absolute(file, base);
  llvm::StringRef rest(full);
  const bool under = base == "/" ? rest.consume_front("/") : rest.consume_front(base) && rest.consume_front("/");
  if (relative) *relative = under && !rest.empty();
  if (under && !rest.empty()) return percent_encode(rest);
  return "file://" + percent_encode(full);
}

unsigned utf16_column(llvm::StringRef line, unsigned byte_column) {
  if (byte_column == 0) return 0;
  const size_t bytes = byte_column - 1;
  unsigned units = 0;
  for (size_t i = 0; i < bytes; ++i) {
    if (i >= line.size()) {
      units += unsigned(bytes - i);  // past the line's end: one unit a byte
      break;
    }
    const unsigned char c = line[i];
    if ((c & 0xC0) == 0x80) continue;  // continuation byte
    units += c >= 0xF0 ? 2 : 1;        // outside the BMP: a surrogate pair
  }
  return units + 1;
}

void render_text(llvm::ArrayRef<Diagnostic> diagnostics, const llvm::SourceMgr& sources, llvm::raw_ostream& out) {
  for (const Diagnostic& d : diagnostics) {
    const std::string suffix = d.id.empty() ? "" : " [" + d.id + "]";
    switch (d.origin) {
      case Diagnostic::Origin::kSource:
        sources.PrintMessage(out, d.rendered);
        break;
      case Diagnostic::Origin::kFile:
        (d.severity == Severity::kWarning ? llvm::WithColor::warning(out, d.file + ":1:1")
                                          : llvm::WithColor::error(out, d.file + ":1:1"))
            << d.message << suffix << "\n";
        break;
      case Diagnostic::Origin::kGlobal:
        (d.severity == Severity::kWarning ? llvm::WithColor::warning(out, "aasmc") : llvm::WithColor::error(out, "aasmc"))
            << d.message << suffix << "\n";
        break;
    }
    render_text(d.notes, sources, out);
  }
}

std::string render_json(llvm::ArrayRef<Diagnostic> diagnostics) {
  Json list = Json::array();
  for (const Diagnostic& d : diagnostics) list.push_back(json_entry(d, d.severity == Severity::kNote));
  Json document;
  document["version"] = 1;
  document["diagnostics"] = std::move(list);
  return dump(document, -1);
}

std::string render_sarif(llvm::ArrayRef<Diagnostic> diagnostics, const RenderOptions& options) {
  return SarifWriter(options).render(diagnostics);
}

void render_diagnostics(llvm::ArrayRef<Diagnostic> diagnostics, const llvm::SourceMgr& sources,
                        DiagnosticFormat format, llvm::raw_ostream& out, const RenderOptions& options) {
  switch (format) {
    case DiagnosticFormat::kText: render_text(diagnostics, sources, out); break;
    case DiagnosticFormat::kJson: out << render_json(diagnostics); break;
    case DiagnosticFormat::kSarif: out << render_sarif(diagnostics, options); break;
  }
}

}  // namespace aasmc
