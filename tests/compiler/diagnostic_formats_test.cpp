// aasmc --diagnostics-format: the real aasmc over broken policies, its json
// and SARIF output parsed back and checked field by field; the text format
// unchanged; docs/diagnostics.md agreeing with the id table (diagnostics.def);
// and the loader's answers to inputs the fuzzer found (no hang, no crash).
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "harness.h"
#include "support/diagnostic_formats.h"

namespace aasm::ktest {
namespace {

using Json = nlohmann::json;

std::string testdata() {
  const char* dir = std::getenv("AASM_TESTDATA");
  REQUIRE_MESSAGE(dir != nullptr, "AASM_TESTDATA is not set (run through meson test)");
  return dir;
}
std::string broken() { return testdata() + "/broken"; }
std::string source_root() { return testdata() + "/.."; }

// aasmc ARGS... in `cwd`; stderr parsed as exactly one JSON document.
struct Parsed {
  Run run;
  Json doc;
};
Parsed run_json(const std::vector<std::string>& args, const std::string& cwd = "") {
  std::vector<std::string> argv{binary("AASMC")};
  argv.insert(argv.end(), args.begin(), args.end());
  Parsed p{run(argv, cwd), {}};
  INFO("stderr:\n", p.run.err);
  REQUIRE_NOTHROW(p.doc = Json::parse(p.run.err));
  return p;
}

std::string compile_plan(const TempDir& out) { return out / "plan.bin"; }

const Json* rule_of(const Json& run, const Json& result) {
  const Json& rules = run["tool"]["driver"]["rules"];
  const size_t index = result["ruleIndex"].get<size_t>();
  if (index >= rules.size()) return nullptr;
  return &rules[index];
}

TEST_CASE("json: one document with ids, positions, ranges and notes") {
  TempDir out;
  const Parsed p = run_json({"compile", "duplicate-key.yaml", "relative-path.yaml", "-o", compile_plan(out),
                             "--diagnostics-format=json"},
                            broken());
  CHECK(p.run.exit_code == 1);
  CHECK(p.doc["version"] == 1);
  const Json& list = p.doc["diagnostics"];
  REQUIRE(list.is_array());
  REQUIRE(list.size() >= 2);

  const Json& dup = list[0];
  CHECK(dup["severity"] == "error");
  CHECK(dup["id"] == "AASM0011");
  CHECK(dup["message"] == "duplicate key 'read'");  // no ` [id]` suffix: the id has its own field
  CHECK(dup["file"] == "duplicate-key.yaml");
  CHECK(dup["line"] == 13);
  CHECK(dup["column"] == 5);
  CHECK(dup["endColumn"] == 9);  // one past `read`
  REQUIRE(dup["notes"].size() == 1);
  const Json& note = dup["notes"][0];
  CHECK(note["severity"] == "note");
  CHECK(note["message"] == "first set here");
  CHECK(note["file"] == "duplicate-key.yaml");
  CHECK(note["line"] == 12);
  CHECK(note["column"] == 5);
  CHECK(note["endColumn"].is_null());  // a caret, no range
  CHECK_FALSE(note.contains("notes"));

  const Json& path = list[1];
  CHECK(path["id"] == "AASM0020");
  CHECK(path["file"] == "relative-path.yaml");
  CHECK(path["line"] == 10);
  CHECK(path["column"] == 21);  // inside the quotes, where the text caret is
  CHECK(path["notes"].empty());

  for (const Json& d : list)
    for (const char* key : {"severity", "id", "message", "file", "line", "column", "endColumn", "notes"})
      CHECK_MESSAGE(d.contains(key), key);
  CHECK_FALSE(exists(compile_plan(out)));
}

TEST_CASE("json: a diagnostic not tied to a file has null position; a clean compile gives an empty list") {
  TempDir out;
  // An output that cannot be written is a whole-run fault.
  const Parsed bad = run_json({"compile", testdata() + "/policies/demo.yaml", "-o", out / "missing-dir/plan.bin",
                               "--diagnostics-format=json"});
  CHECK(bad.run.exit_code == 1);
  REQUIRE(bad.doc["diagnostics"].size() == 1);
  const Json& d = bad.doc["diagnostics"][0];
  CHECK(d["id"] == "AASM0101");
  CHECK(d["file"].is_null());
  CHECK(d["line"].is_null());
  CHECK(d["column"].is_null());

  const Parsed good =
      run_json({"compile", testdata() + "/policies/demo.yaml", "-o", compile_plan(out), "--diagnostics-format", "json"});
  CHECK(good.run.exit_code == 0);
  CHECK(good.doc == Json::parse(R"({"version":1,"diagnostics":[]})"));
  CHECK(exists(compile_plan(out)));
}

TEST_CASE("json: an unreadable file is at line 1, column 1") {
  TempDir out;
  const Parsed p = run_json({"compile", out / "missing.yaml", "-o", compile_plan(out), "--diagnostics-format=json"});
  CHECK(p.run.exit_code == 1);
  const Json& d = p.doc["diagnostics"][0];
  CHECK(d["id"] == "AASM0001");
  CHECK(d["file"] == out / "missing.yaml");
  CHECK(d["line"] == 1);
  CHECK(d["column"] == 1);
}

TEST_CASE("sarif: a 2.1.0 log GitHub code scanning accepts") {
  TempDir out;
  const Parsed p = run_json({"compile", "broken/duplicate-key.yaml", "broken/relative-path.yaml",
                             "warnings/credential-in-env.yaml", "-o", compile_plan(out), "--diagnostics-format=sarif"},
                            testdata());
  CHECK(p.run.exit_code == 1);
  const Json& log = p.doc;
  CHECK(log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json");
  CHECK(log["version"] == "2.1.0");
  REQUIRE(log["runs"].size() == 1);
  const Json& run0 = log["runs"][0];

  const Json& driver = run0["tool"]["driver"];
  CHECK(driver["name"] == "aasmc");
  const Run version = run({binary("AASMC"), "--version"});
  CHECK(version.out == "aasmc " + driver["version"].get<std::string>() + "\n");
  CHECK(driver["informationUri"].get<std::string>().starts_with("https://"));

  // One rule per id used, sorted, each described from the table.
  const Json& rules = driver["rules"];
  std::set<std::string> rule_ids;
  std::string previous;
  for (const Json& rule : rules) {
    const std::string id = rule["id"];
    CHECK(id > previous);
    previous = id;
    rule_ids.insert(id);
    const aasmc::DiagnosticInfo* info = aasmc::find_diagnostic_info(id);
    REQUIRE(info != nullptr);
    CHECK(rule["name"] == info->name);
    CHECK(rule["shortDescription"]["text"] == info->summary);
    CHECK(rule["defaultConfiguration"]["level"] == aasmc::severity_name(info->level));
  }

  std::set<std::string> used;
  const Json& results = run0["results"];
  REQUIRE(results.size() >= 3);  // two errors and the warning (lowering never runs after front-end errors)
  for (const Json& result : results) {
    used.insert(result["ruleId"].get<std::string>());
    const Json* rule = rule_of(run0, result);
    REQUIRE(rule != nullptr);
    CHECK((*rule)["id"] == result["ruleId"]);
    CHECK(result["message"]["text"].is_string());
    // GitHub refuses a whole file when any result lacks a location.
    REQUIRE(result["locations"].size() == 1);
    const Json& physical = result["locations"][0]["physicalLocation"];
    const std::string uri = physical["artifactLocation"]["uri"];
    CHECK(physical["artifactLocation"]["uriBaseId"] == "%SRCROOT%");
    CHECK_FALSE(uri.starts_with("/"));
    CHECK_FALSE(uri.starts_with("./"));
    CHECK_FALSE(uri.starts_with("file:"));
    CHECK(uri.find('\\') == std::string::npos);
    CHECK(physical["region"]["startLine"].get<int>() >= 1);
    CHECK(physical["region"]["startColumn"].get<int>() >= 1);
    CHECK(physical["region"]["endColumn"].get<int>() > physical["region"]["startColumn"].get<int>());
  }
  for (const Json& n : run0["invocations"][0].value("toolExecutionNotifications", Json::array()))
    if (n.contains("associatedRule")) used.insert(n["associatedRule"]["id"].get<std::string>());
  CHECK(used == rule_ids);

  const Json& dup = results[0];
  CHECK(dup["ruleId"] == "AASM0011");
  CHECK(dup["level"] == "error");
  CHECK(dup["message"]["text"] == "duplicate key 'read'");
  const Json& where = dup["locations"][0]["physicalLocation"];
  CHECK(where["artifactLocation"]["uri"] == "broken/duplicate-key.yaml");
  CHECK(where["region"] == Json::parse(R"({"startLine":13,"startColumn":5,"endColumn":9})"));
  REQUIRE(dup["relatedLocations"].size() == 1);
  const Json& related = dup["relatedLocations"][0];
  CHECK(related["id"] == 1);
  CHECK(related["message"]["text"] == "first set here");
  CHECK(related["physicalLocation"]["artifactLocation"]["uri"] == "broken/duplicate-key.yaml");
  CHECK(related["physicalLocation"]["region"]["startLine"] == 12);
  CHECK(related["physicalLocation"]["region"]["startColumn"] == 5);

  bool saw_warning = false;
  for (const Json& result : results) {
    if (result["ruleId"] != "AASM0022") continue;
    saw_warning = true;
    CHECK(result["level"] == "warning");
    CHECK((*rule_of(run0, result))["defaultConfiguration"]["level"] == "warning");
    CHECK(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "warnings/credential-in-env.yaml");
  }
  CHECK(saw_warning);
}

TEST_CASE("sarif: uris are relative to the working directory when the file is under it") {
  TempDir out;
  const std::string plan = compile_plan(out);
  // An absolute path and a path with `..` that lead under the working directory.
  const Parsed abs = run_json(
      {"compile", broken() + "/unknown-key.yaml", "../broken/wrong-type.yaml", "-o", plan,
       "--diagnostics-format=sarif"},
      broken());
  std::set<std::string> uris;
  for (const Json& result : abs.doc["runs"][0]["results"])
    uris.insert(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].get<std::string>());
  CHECK(uris == std::set<std::string>{"unknown-key.yaml", "wrong-type.yaml"});

  // From a subdirectory of the source tree: the path keeps its directories.
  const Parsed nested = run_json(
      {"compile", "testdata/broken/unknown-key.yaml", "-o", plan, "--diagnostics-format=sarif"}, source_root());
  const Json& location = nested.doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
  CHECK(location["artifactLocation"]["uri"] == "testdata/broken/unknown-key.yaml");

  // Outside the working directory: an absolute file:// URI, no base id.
  const Parsed outside = run_json(
      {"compile", broken() + "/unknown-key.yaml", "-o", plan, "--diagnostics-format=sarif"}, out.path());
  const Json& far = outside.doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
  CHECK(far["uri"].get<std::string>().starts_with("file:///"));
  CHECK(far["uri"].get<std::string>().ends_with("/testdata/broken/unknown-key.yaml"));
  CHECK_FALSE(far.contains("uriBaseId"));
}

TEST_CASE("sarif: columns count UTF-16 code units, json columns count bytes as the text does") {
  TempDir out;
  write_file(out / "policy.yaml",
             "apiVersion: aasm.dev/v1\n"
             "kind: Policy\n"
             "metadata: {description: \"\xE6\x97\xA5\xE6\x9C\xAC\xF0\x9F\x98\x80\", name: Bad_Name, tier: agent}\n"
             "spec: {filesystem: {read: {allow: [\"/usr\"]}}}\n");
  const Parsed json =
      run_json({"compile", "policy.yaml", "-o", compile_plan(out), "--diagnostics-format=json"}, out.path());
  const Parsed sarif =
      run_json({"compile", "policy.yaml", "-o", compile_plan(out), "--diagnostics-format=sarif"}, out.path());
  const Run text = run({binary("AASMC"), "compile", "policy.yaml", "-o", compile_plan(out)}, out.path());
  const Json& d = json.doc["diagnostics"][0];
  CHECK(d["id"] == "AASM0014");
  CHECK(d["line"] == 3);
  // `日本😀` is 10 bytes but 4 UTF-16 code units.
  const int bytes = d["column"];
  CHECK(text.err.find("policy.yaml:3:" + std::to_string(bytes) + ": error:") == 0);
  const Json& region = sarif.doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
  CHECK(region["startColumn"] == bytes - 6);
  CHECK(region["endColumn"] == d["endColumn"].get<int>() - 6);
}

TEST_CASE("sarif: faults without a place are tool notifications, never location-less results") {
  TempDir out;
  const Parsed p = run_json({"compile", testdata() + "/policies/demo.yaml", "-o", out / "missing-dir/plan.bin",
                             "--diagnostics-format=sarif"});
  CHECK(p.run.exit_code == 1);
  const Json& run0 = p.doc["runs"][0];
  CHECK(run0["results"].empty());
  const Json& invocation = run0["invocations"][0];
  CHECK(invocation["executionSuccessful"] == false);
  REQUIRE(invocation["toolExecutionNotifications"].size() == 1);
  const Json& n = invocation["toolExecutionNotifications"][0];
  CHECK(n["level"] == "error");
  CHECK(n["associatedRule"]["id"] == "AASM0101");
  CHECK(run0["tool"]["driver"]["rules"][n["associatedRule"]["index"].get<size_t>()]["id"] == "AASM0101");

  const Parsed clean =
      run_json({"compile", testdata() + "/policies/demo.yaml", "-o", compile_plan(out), "--diagnostics-format=sarif"});
  CHECK(clean.run.exit_code == 0);
  CHECK(clean.doc["runs"][0]["results"].empty());
  CHECK(clean.doc["runs"][0]["tool"]["driver"]["rules"].empty());
  CHECK(clean.doc["runs"][0]["invocations"][0]["executionSuccessful"] == true);
}

TEST_CASE("text: unchanged, the default, and the same when asked for") {
  TempDir out;
  const Run plain = run({binary("AASMC"), "compile", "duplicate-key.yaml", "-o", compile_plan(out)}, broken());
  const Run asked = run({binary("AASMC"), "compile", "duplicate-key.yaml", "-o", compile_plan(out),
                         "--diagnostics-format=text"},
                        broken());
  CHECK(plain.exit_code == 1);
  CHECK(asked.exit_code == 1);
  CHECK(plain.err == asked.err);
  // Clang style: location, message with id, source line, caret and range;
  // the note right after its error. No color: stderr is not a terminal.
  CHECK(plain.err.starts_with("duplicate-key.yaml:13:5: error: duplicate key 'read' [AASM0011]\n"
                              "    read: {allow: [\"/etc\"]}\n"
                              "    ^~~~\n"
                              "duplicate-key.yaml:12:5: note: first set here\n"
                              "    read: {allow: [\"/usr\"]}\n"
                              "    ^\n"));
  CHECK(plain.err.find('\x1b') == std::string::npos);
}

TEST_CASE("explain takes the option too; other values are usage errors") {
  TempDir out;
  const Parsed bad = run_json({"explain", "unknown-key.yaml", "--diagnostics-format=json"}, broken());
  CHECK(bad.run.exit_code == 1);
  CHECK(bad.doc["diagnostics"][0]["id"] == "AASM0010");
  const Parsed good = run_json({"explain", testdata() + "/policies/demo.yaml", "--diagnostics-format=sarif"});
  CHECK(good.run.exit_code == 0);
  CHECK_FALSE(good.run.out.empty());
  CHECK(good.doc["runs"][0]["results"].empty());

  for (const char* value : {"--diagnostics-format=xml", "--diagnostics-format=", "--diagnostics-format=JSON"}) {
    CHECK(run({binary("AASMC"), "compile", "x.yaml", "-o", compile_plan(out), value}).exit_code == 2);
    CHECK(run({binary("AASMC"), "explain", "x.yaml", value}).exit_code == 2);
  }
  CHECK(run({binary("AASMC"), "compile", "x.yaml", "-o", compile_plan(out), "--diagnostics-format"}).exit_code == 2);
}

// docs/diagnostics.md lists the ids of support/diagnostics.def, the one
// table, and marks its warnings as warnings.
TEST_CASE("docs/diagnostics.md lists the ids of the table, its warnings as warnings") {
  std::map<std::string, bool> table;  // id -> is a warning
  for (const aasmc::DiagnosticInfo& info : aasmc::diagnostic_table()) {
    CHECK_MESSAGE(table.emplace(info.id, info.level == aasmc::Severity::kWarning).second, "listed twice: ", info.id);
    CHECK(std::string(info.name).size() > 0);
    CHECK(std::string(info.summary).size() > 0);
  }
  std::map<std::string, bool> docs;
  const std::string page = read_file(source_root() + "/docs/diagnostics.md");
  const std::regex row(R"re(\n\| (AASM\d{4}) \| ([^\n]*))re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row); it != std::sregex_iterator(); ++it)
    docs.emplace((*it)[1].str(), (*it)[2].str().starts_with("**warning**"));
  CHECK(table == docs);
}

TEST_CASE("artifact uris and UTF-16 columns") {
  bool relative = false;
  CHECK(aasmc::artifact_uri("a/b.yaml", "/src", &relative) == "a/b.yaml");
  CHECK(relative);
  CHECK(aasmc::artifact_uri("./a/./b.yaml", "/src", &relative) == "a/b.yaml");
  CHECK(aasmc::artifact_uri("/src/a b/c#.yaml", "/src/", &relative) == "a%20b/c%23.yaml");
  CHECK(relative);
  CHECK(aasmc::artifact_uri("../x.yaml", "/src/sub", &relative) == "file:///src/x.yaml");
  CHECK_FALSE(relative);
  CHECK(aasmc::artifact_uri("/srcother/x.yaml", "/src", &relative) == "file:///srcother/x.yaml");
  CHECK_FALSE(relative);
  CHECK(aasmc::artifact_uri("x:y.yaml", "/", &relative) == "x%3Ay.yaml");  // never read as a scheme
  CHECK(aasmc::utf16_column("abc", 3) == 3);
  CHECK(aasmc::utf16_column("\xC3\xA9x", 3) == 2);          // é is 2 bytes, 1 unit
  CHECK(aasmc::utf16_column("\xF0\x9F\x98\x80x", 5) == 3);  // 😀 is 4 bytes, 2 units
  CHECK(aasmc::utf16_column("ab", 6) == 6);                 // past the end: a unit a byte
}

// Inputs the fuzzer found or the loader must survive; each used to hang,
// crawl or could overflow the stack.
TEST_CASE("the loader refuses hostile inputs quickly, with a diagnostic") {
  TempDir out;
  struct Case {
    const char* name;
    std::string content;
    const char* id;
  };
  const std::vector<Case> cases = {
      {"stray-comma", ", x\n", "AASM0002"},                 // yaml-cpp 0.7 returned the same null document forever
      {"comma-after-document", "a: 1\n---\n,\n", "AASM0002"},
      {"deep-flow", std::string(1000000, '['), "AASM0005"},  // a million levels
      {"deep-block", [] {
         std::string s;
         for (int i = 0; i < 300000; ++i) s += "- ";
         return s;
       }(),
       "AASM0005"},
      {"many-keys", [] {  // duplicate detection was quadratic
         std::string s;
         for (int i = 0; i < 90000; ++i) s += "k" + std::to_string(i) + ": 1\n";
         return s;
       }(),
       "AASM0010"},
      {"long-line", [] {  // a location lookup per node scanned the line: quadratic
         std::string s = "apiVersion: aasm.dev/v1\nkind: Policy\nmetadata: {name: a, tier: org}\n"
                         "spec: {syscalls: {allow: [";
         for (int i = 0; i < 100000; ++i) s += "read, ";
         return s + "nosuchcall]}}\n";
       }(),
       "AASM0030"},
      {"lone-cr", "apiVersion: aasm.dev/v1\rkind: Policy\n", "AASM0002"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      write_file(out / "policy.yaml", c.content);
      const Parsed p = run_json({"compile", "policy.yaml", "-o", compile_plan(out), "--diagnostics-format=json",
                                 "--arch", "x86_64"},
                                out.path());
      CHECK(p.run.signal == 0);
      CHECK(p.run.exit_code == 1);
      std::set<std::string> ids;
      for (const Json& d : p.doc["diagnostics"]) {
        ids.insert(d["id"].get<std::string>());
        if (!d["file"].is_null()) {
          CHECK(d["file"] == "policy.yaml");
          CHECK(d["line"].get<int>() >= 1);
        }
      }
      CHECK_MESSAGE(ids.count(c.id) == 1, p.run.err.substr(0, 2000));
    }
  }
}

}  // namespace
}  // namespace aasm::ktest
