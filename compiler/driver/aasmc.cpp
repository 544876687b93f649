// aasmc: compile policy cascades into plans, and read, verify and compare
// plans. Exit codes: 0 ok, 1 policy errors, 2 usage errors (docs/cli.md;
// verify and diff add their own). Each verb lives in driver/<file>.cpp
// (driver/verbs.h); this file only dispatches, one line per verb.
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/raw_ostream.h>

#include <string>
#include <string_view>
#include <utility>

#include "backend/plan_builder.h"
#include "driver/cli.h"
#include "driver/verbs.h"

namespace {

using Verb = int (*)(const aasmc::Args&);

constexpr std::pair<std::string_view, Verb> kVerbs[] = {
    {"compile", aasmc::compile_verb},
    {"explain", aasmc::explain_verb},
    {"show", aasmc::show_verb},
    {"digest", aasmc::digest_verb},
    {"verify", aasmc::verify_verb},
    {"diff", aasmc::diff_verb},
    {"suggest", aasmc::suggest_verb},
    {"groups", aasmc::groups_verb},
    {"receipt", aasmc::receipt_verb},
    {"backends", aasmc::backends_verb},
    {"export", aasmc::export_verb},
    {"import", aasmc::import_verb},
};

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2) return aasmc::cli::usage_error("no command given");
  const std::string command = argv[1];
  const aasmc::Args args(argv + 2, argv + argc);
  for (const auto& [name, verb] : kVerbs)
    if (command == name) return verb(args);
  if (command == "--version") {
    llvm::outs() << "aasmc " << aasmc::kCompilerVersion << "\n";
    return aasmc::cli::kExitOk;
  }
  if (command == "-h" || command == "--help") {
    llvm::outs() << aasmc::cli::usage_text();
    return aasmc::cli::kExitOk;
  }
  return aasmc::cli::usage_error("unknown command '" + command + "'");
}
