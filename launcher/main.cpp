// aasm-launch: run a command under a precompiled plan.
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "aasm_version.h"
#include "base/option_value.h"
#include "doctor.h"
#include "exit_codes.h"
#include "dry_run.h"
#include "launch.h"
#include "plan/plan.h"
#include "profile_plan.h"

namespace {

constexpr const char* kUsage =
    "usage: aasm-launch [--expect-digest [sha256:]HEX] [--receipt FILE | --receipt-fd N]\n"
    "                   [--receipt-key-file KEY] [--explain] [--denials=summary|full|off]\n"
    "                   [--backend NAME] [--bwrap PATH] (PLAN | --profile NAME) -- COMMAND [ARG...]\n"
    "       aasm-launch --dry-run [--json] [--expect-digest [sha256:]HEX] [--backend NAME]\n"
    "                   (PLAN | --profile NAME)\n"
    "       aasm-launch doctor [--json] [--plan PLAN]\n"
    "       aasm-launch --version\n"
    "\n"
    "Runs COMMAND confined by the precompiled PLAN (from `aasmc compile`).\n"
    "--dry-run prints what this host would enforce, control by control, and\n"
    "exits 125 when the launch would be refused, without running anything.\n"
    "doctor prints what this host can enforce, without a plan: each feature\n"
    "available, partial or missing, with the remedy; exit 0 when nothing is\n"
    "missing, 1 when something is (a plan name `doctor` is given as ./doctor);\n"
    "with --plan, also which of the plan's backends this host would run it\n"
    "under, and why each other one would not be taken.\n"
    "--json: the dry run's or doctor's report as one JSON document\n"
    "(schemas/dry-run.schema.json, schemas/doctor.schema.json).\n"
    "--explain traces the command's failing filesystem and network calls\n"
    "(ptrace; slower) and reports the Landlock denials among them.\n"
    "--denials: what the run's confinement refused, printed on stderr at the\n"
    "end with the policy line behind each refusal and the edit that would\n"
    "allow it (default summary; full adds arguments and who saw it).\n"
    "--backend: run the plan under the backend NAME only (native, bwrap), or\n"
    "refuse; without it, a plan compiled with several backends (aasmc compile\n"
    "--backend auto) runs under the first this host can run, in the plan's order.\n"
    "--profile: a shipped profile by name (coding-agent, ...) instead of PLAN,\n"
    "compiled by the aasmc beside aasm-launch into ~/.cache/aasm/plans (once per\n"
    "profile and compiler version); the plan's digest is printed on stderr.\n"
    "--bwrap: the bubblewrap a plan compiled with --backend bwrap runs under\n"
    "(default /usr/bin/bwrap; probed before the command runs).\n"
    "Exit status: the command's own; 124 the wall-clock deadline passed;\n"
    "125 launcher or plan error; 126 cannot execute; 127 not found; 128+N\n"
    "killed by signal N.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "aasm-launch: error: %s\n%s", message.c_str(), kUsage);
  return aasm::exit_code::kLauncherError;
}

// The value after the option at argv[i] (i moved to it); null when none
// follows. `--` is no value: `--receipt -- cmd` lacks its FILE rather than
// naming a receipt `--` and running `cmd` as the plan.
const char* take_value(int argc, char** argv, int& i) {
  if (i + 1 >= argc || !aasm::is_option_value(argv[i + 1])) return nullptr;
  return argv[++i];
}

std::optional<aasm::denials::Detail> denials_detail(const std::string& value) {
  if (value == "summary") return aasm::denials::Detail::kSummary;
  if (value == "full") return aasm::denials::Detail::kFull;
  if (value == "off") return aasm::denials::Detail::kOff;
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "doctor") == 0) {
    bool json = false;
    std::optional<std::string> plan;
    for (int a = 2; a < argc; ++a) {
      if (std::strcmp(argv[a], "--json") == 0) {
        json = true;
      } else if (std::strcmp(argv[a], "--plan") == 0) {
        const char* value = take_value(argc, argv, a);
        if (!value) return usage_error("doctor --plan needs PLAN");
        plan = value;
      } else {
        return usage_error(std::string("doctor takes only --json and --plan PLAN, not '") + argv[a] + "'");
      }
    }
    return aasm::doctor(json, plan);
  }
  aasm::LaunchRequest request;
  bool dry = false;
  bool json = false;
  std::optional<std::string> profile;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("aasm-launch %s\n", aasm::kVersion);
      return 0;
    }
    if (arg == "--dry-run") {
      dry = true;
      continue;
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (arg == "--explain") {
      request.explain = true;
      continue;
    }
    if (arg == "--receipt") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--receipt needs FILE");
      request.receipt_path = value;
      continue;
    }
    if (arg == "--backend") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--backend needs NAME (native, bwrap)");
      request.backend = value;
      continue;
    }
    if (arg == "--profile") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--profile needs NAME (a shipped profile: coding-agent, ...)");
      profile = value;
      continue;
    }
    if (arg == "--bwrap") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--bwrap needs PATH");
      request.bwrap = value;
      continue;
    }
    if (arg == "--receipt-key-file") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--receipt-key-file needs KEY");
      request.receipt_key_file = value;
      continue;
    }
    if (arg == "--receipt-fd") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--receipt-fd needs a descriptor number N");
      const std::string number = value;
      if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos)
        return usage_error("--receipt-fd takes a descriptor number");
      request.receipt_fd = std::stoi(number);
      continue;
    }
    if (arg.rfind("--denials=", 0) == 0) {
      const auto detail = denials_detail(arg.substr(std::strlen("--denials=")));
      if (!detail) return usage_error("--denials takes summary, full or off");
      request.denials = *detail;
      continue;
    }
    if (arg == "--expect-digest") {
      const char* value = take_value(argc, argv, i);
      if (!value) return usage_error("--expect-digest needs [sha256:]HEX");
      // `aasmc digest`'s "sha256:HEX", or bare hex in either case.
      const auto digest = aasm::plan::parse_digest_text(value);
      if (!digest) return usage_error("--expect-digest: " + digest.error().message);
      request.expect_digest = *digest;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (request.plan_path.empty()) {
      request.plan_path = arg;
    } else {
      return usage_error("unexpected argument '" + arg + "' (put the command after --)");
    }
  }
  if (profile && !request.plan_path.empty()) return usage_error("give PLAN or --profile NAME, not both");
  if (!profile && request.plan_path.empty()) return usage_error("no plan given (PLAN or --profile NAME)");
  if (request.receipt_path && request.receipt_fd) return usage_error("give --receipt or --receipt-fd, not both");
  if (request.receipt_key_file && !request.receipt_path && !request.receipt_fd)
    return usage_error("--receipt-key-file keys a receipt: give --receipt or --receipt-fd too");
  if (dry && i < argc) return usage_error("--dry-run runs nothing: give no command");
  if (!dry && json) return usage_error("--json is for --dry-run and doctor (a launch's JSON is its --receipt)");
  if (!dry && i >= argc) return usage_error("no command given: use `aasm-launch PLAN -- COMMAND [ARG...]`");
  if (!dry) {
    for (++i; i < argc; ++i) request.command.emplace_back(argv[i]);
    if (request.command.empty()) return usage_error("no command after --");
  }
  if (profile) {
    // Before the launch path, which then loads the cached plan as any PLAN,
    // pinned to the identity just verified (a swap in between is refused).
    const auto cached = aasm::profile_plan(*profile);
    if (!cached) {
      std::fprintf(stderr, "aasm-launch: error: %s\n", cached.error().message.c_str());
      return aasm::exit_code::kLauncherError;
    }
    request.plan_path = cached->path;
    if (!request.expect_digest) request.expect_digest = cached->identity;
  }
  if (dry) return aasm::dry_run(request, json);
  return aasm::launch(request);
}
