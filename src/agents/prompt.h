// What the model is told: the target preamble, the task (ABI, semantics, tensors, tolerance), and
// the feedback of earlier attempts. Every method builds its requests from these pieces, so that
// methods differ in search strategy, not in how well they describe the problem.
#pragma once

#include <string>

#include "agents/llm.h"
#include "harness/eval_result.h"
#include "store/agent_sample.h"
#include "workloads/workload.h"

namespace kbench::agents {

struct TaskDescription {
  const Workload* workload = nullptr;
  Size size = Size::kSmoke;
  int threads = 1;
  std::string target;        // context target, e.g. "avx512"
  std::string context_text;  // the curated context artifact; empty for methods without it
};

// The system prompt: who the model writes for (the CPU, its ISA, the thread budget, the compile
// command) and, when given, the context artifact.
std::string system_prompt(const TaskDescription& task);

// The first user message: the workload's operator (as its reference's file states it,
// workloads/spec_text.h) and naive implementation where it has one, its tensors and parameters at
// the task's size, the correctness rule, the ABI header, and the reply format.
std::string task_prompt(const TaskDescription& task);

// An attempt's verdict as the model should read it: compile diagnostics, the correctness verdict
// with error metrics, or the timing, speedup and roofline figures, and then the loop analysis
// where the evaluation carries one (`kbench agent --analyze`). `evaluation` is null for samples
// that never reached the evaluator (no code, LLM error).
std::string feedback_text(const AgentSample& sample, const EvalResult* evaluation);

// A request asking to improve on `previous` (its code and feedback); `instruction` says how (fix
// it, make it faster, apply a strategy).
ChatRequest refinement_request(const TaskDescription& task, const std::string& previous_code,
                               const std::string& previous_feedback,
                               const std::string& instruction);
ChatRequest first_request(const TaskDescription& task);

// sha256 of the request as sent (system, then each role and content), for the sample record.
std::string prompt_hash(const ChatRequest& request);

}  // namespace kbench::agents
