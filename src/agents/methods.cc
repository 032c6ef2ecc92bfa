// Method names, dispatch, and the two simple methods: independent samples, and one refinement
// chain fed back the harness's verdict each round.
#include "agents/methods.h"

#include <stdexcept>
#include <utility>

namespace kbench::agents {

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names = {"best-of-n", "iterative", "iterative-context",
                                                 "beam"};
  return names;
}

bool method_uses_context(const std::string& method) {
  return method == "iterative-context" || method == "beam";
}

void run_method(const std::string& method, AgentDriver& driver, const TaskDescription& task,
                const MethodSettings& settings) {
  if (method == "best-of-n") return run_best_of_n(driver, task, settings);
  if (method == "iterative" || method == "iterative-context")
    return run_iterative(driver, task, settings);
  if (method == "beam") return run_beam(driver, task, settings);
  throw std::invalid_argument("unknown method '" + method + "'");
}

ChatRequest refinement_of(const TaskDescription& task, const Attempt& parent,
                          const std::string& instruction) {
  const EvalResult* evaluation = parent.evaluation ? &*parent.evaluation : nullptr;
  return refinement_request(task, parent.sample.code, feedback_text(parent.sample, evaluation),
                            instruction);
}

Draft seeded_draft(const MethodSettings& settings, int index, int round, ChatRequest request) {
  Draft d;
  d.index = index;
  d.round = round;
  d.request = std::move(request);
  d.request.seed = settings.seed + static_cast<std::uint64_t>(index);
  return d;
}

void run_best_of_n(AgentDriver& driver, const TaskDescription& task,
                   const MethodSettings& settings) {
  std::vector<Draft> drafts;
  for (int i = 0; i < settings.samples; ++i)
    drafts.push_back(seeded_draft(settings, i, 0, first_request(task)));
  driver.run(std::move(drafts));
}

std::string next_step_instruction(const Attempt& previous) {
  const std::string& status = previous.sample.status;
  if (status == "correct")
    return "It is correct. Make it faster while keeping it correct: use what the timing and "
           "roofline figures say bounds it.";
  if (status == "compile_error" || status == "no_code")
    return "Fix it so that it compiles and defines kb_run exactly as the ABI says.";
  if (status == "rejected")
    return "The harness rejected it for breaking a sandbox rule. Write a pure compute kernel.";
  return "Fix it so that it produces correct results.";
}

void run_iterative(AgentDriver& driver, const TaskDescription& task,
                   const MethodSettings& settings) {
  std::optional<Attempt> previous;
  for (int round = 0; round < settings.samples; ++round) {
    Draft d =
        seeded_draft(settings, round, round,
                     previous ? refinement_of(task, *previous, next_step_instruction(*previous))
                              : first_request(task));
    if (previous) d.parent = previous->sample.index;
    previous = std::move(driver.run({std::move(d)}).front());
  }
}

}  // namespace kbench::agents
