// The four generation methods of JAXBench's evaluation. Each decides what to ask next from what
// came back; the driver does the asking, evaluating and recording.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/agent_driver.h"
#include "agents/prompt.h"

namespace kbench::agents {

struct MethodSettings {
  int samples = 8;  // the budget per workload: samples generated, whatever their fate
  int beam_width = 2;
  int plans = 2;            // per parent and beam step
  int implementations = 2;  // per plan
  double menu_dropout = 0.3;
  std::uint64_t seed = 0;         // sampling seeds sent to the model and the beam's draws
  std::vector<std::string> menu;  // beam: the optimization menu (context artifact)
};

// "best-of-n", "iterative", "iterative-context", "beam".
const std::vector<std::string>& method_names();
// Whether the method's prompts carry the context artifact.
bool method_uses_context(const std::string& method);

// Runs `method` on the driver's workload until its budget is spent. Throws std::invalid_argument
// for an unknown method.
void run_method(const std::string& method, AgentDriver& driver, const TaskDescription& task,
                const MethodSettings& settings);

// The methods themselves (run_method dispatches).
void run_best_of_n(AgentDriver& driver, const TaskDescription& task,
                   const MethodSettings& settings);
void run_iterative(AgentDriver& driver, const TaskDescription& task,
                   const MethodSettings& settings);
void run_beam(AgentDriver& driver, const TaskDescription& task, const MethodSettings& settings);

// The refinement instruction after an attempt: fix what failed, or speed up what passed.
std::string next_step_instruction(const Attempt& previous);

// The request that refines `parent`: its code and the harness's feedback on it, then `instruction`.
ChatRequest refinement_of(const TaskDescription& task, const Attempt& parent,
                          const std::string& instruction);

// Draft `index` of `round`, sending `request` with that draft's sampling seed: distinct per sample,
// and the same when a run resumes.
Draft seeded_draft(const MethodSettings& settings, int index, int round, ChatRequest request);

}  // namespace kbench::agents
