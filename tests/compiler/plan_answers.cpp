#include "plan_answers.h"

#include "kernel/bpf_interpreter.h"

namespace aasm::ktest {

uint32_t PlanAnswers::answer(long nr, const std::vector<uint64_t>& args) const {
  bpf::SeccompData data;
  data.nr = int32_t(nr);
  data.arch = audit_arch;
  for (size_t i = 0; i < args.size() && i < 6; ++i) data.args[i] = args[i];
  auto outcome = bpf::run_stack(programs, data);
  REQUIRE(outcome);
  return outcome->action;
}

PlanAnswers plan_answers(const std::string& plan_path, uint32_t audit_arch) {
  auto bytes = plan::read_plan_file(plan_path);
  REQUIRE(bytes);
  auto decoded = plan::decode_plan(*bytes);
  REQUIRE_MESSAGE(decoded, (decoded ? "" : decoded.error().message));
  PlanAnswers answers;
  answers.audit_arch = audit_arch;
  for (const plan::SeccompProgram* p : plan::programs_for(*decoded, audit_arch)) answers.programs.push_back(*p);
  REQUIRE(!answers.programs.empty());
  return answers;
}

PlanAnswers compile_answers(const TempDir& dir, const std::vector<std::string>& policies, uint32_t audit_arch,
                            const std::vector<std::string>& extra, const std::string& name) {
  const std::string out = dir / (name + ".plan");
  std::vector<std::string> argv = {binary("AASMC"), "compile"};
  argv.insert(argv.end(), policies.begin(), policies.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-o", out});
  const Run compiled = run(argv);
  INFO("aasmc stderr: ", compiled.err);
  REQUIRE(compiled.exit_code == 0);
  return plan_answers(out, audit_arch);
}

}  // namespace aasm::ktest
