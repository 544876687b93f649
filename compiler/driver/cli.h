// What every aasmc verb shares: exit codes, usage errors, the options several
// verbs take (--arch, --diagnostics-format), reading a plan, and compiling a
// cascade in memory (compile writes the bytes, verify and diff compare them).
// Each verb is one `int verb(args)` function in driver/<verb>.cpp, listed in
// driver/verbs.h and dispatched by one line of driver/aasmc.cpp.
#pragma once

#include <llvm/Support/SourceMgr.h>

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/negotiate.h"
#include "base/result.h"
#include "plan/plan.h"
#include "support/diagnostics.h"
#include "tables/targets.h"

namespace aasmc::cli {

constexpr int kExitOk = 0;
constexpr int kExitPolicyError = 1;
constexpr int kExitUsage = 2;

// Prints "aasmc: error: MESSAGE" and the usage text; returns kExitUsage.
int usage_error(const std::string& message);
// Prints "aasmc: error: MESSAGE" alone.
void error(const std::string& message);
const char* usage_text();

std::vector<std::string> split(const std::string& text, char separator);

// Removes the flag `name` from `args` if it is there; says whether it was.
bool take_flag(std::vector<std::string>& args, const char* name);

// The value after the option at args[i] (i moved to it); nullopt when none
// follows. `--` is no value: `-o --` lacks its PLAN rather than naming a file `--`.
std::optional<std::string> take_value(const std::vector<std::string>& args, size_t& i);

// The option at args[i] and its value (i moved to it) into `into`:
// kExitOk, or the usage error "OPTION needs a value".
int take_option_value(const std::vector<std::string>& args, size_t& i, std::string& into);

// A JSON report on stdout, as every --json prints it (support/diagnostic_formats.h's dump).
void print_json(const nlohmann::ordered_json& document);

// `--diagnostics-format=FORMAT` or `--diagnostics-format FORMAT` at args[i]:
// kExitOk (i moved past it), kExitUsage, or -1 when args[i] is another option.
int take_format_option(const std::vector<std::string>& args, size_t& i, DiagnosticFormat& format);
// `--arch a,b` at args[i], the same way; the list replaces `targets`.
int take_arch_option(const std::vector<std::string>& args, size_t& i, std::vector<Target>& targets);
std::vector<Target> all_target_list();

// Writes every diagnostic of the run to stderr once, when the command
// returns, in the chosen format.
class FlushAtExit {
 public:
  FlushAtExit(Diagnostics& diags, DiagnosticFormat format) : diags_(diags), format_(format) {}
  FlushAtExit(const FlushAtExit&) = delete;
  FlushAtExit& operator=(const FlushAtExit&) = delete;
  ~FlushAtExit();

 private:
  Diagnostics& diags_;
  DiagnosticFormat format_;
};

// A plan file read and verified: its bytes (for the identity) and its contents.
struct LoadedPlan {
  std::vector<uint8_t> bytes;
  aasm::plan::Plan plan;
};
aasm::Result<LoadedPlan> load_plan(const std::string& path);
// `message` without a leading "PATH: ", for a diagnostic that already points at PATH.
std::string without_path(const std::string& path, const std::string& message);

struct CompileRequest {
  std::vector<std::string> inputs;  // any order: compiled in canonical_input_order
  std::vector<Target> targets;
  bool print_ir = false;            // print the lowered IR to stdout on the way
  // --backend: the native backend unless given; the plan of a native
  // compile is the same bytes with or without it (docs/backends.md).
  BackendChoice backend{{Backend::kNative}, false};
};
// The cascade compiled in memory, exactly the bytes `aasmc compile` writes;
// nullopt with the reasons in `diags`.
std::optional<std::vector<uint8_t>> compile_in_memory(const CompileRequest& request, Diagnostics& diags);

}  // namespace aasmc::cli
