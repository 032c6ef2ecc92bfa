// One generated candidate of an agent run, as the agents' methods produce it, the store keeps it
// and the metrics read it. A record of the store, so that the store depends on nothing above it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kbench {

// The outcome of a sample: an evaluation status ("correct", "incorrect", "compile_error",
// "runtime_error", "timeout", "rejected"), or one that ended before evaluation: "no_code" (no
// usable code block, or no kb_run with the ABI's signature) and "llm_error" (the request failed for
// good).
struct AgentSample {
  std::int64_t run_id = 0;  // the store's runs.id
  std::string method;       // "best-of-n" | "iterative" | "iterative-context" | "beam"
  std::string workload;     // full name, "8p_GEMM"
  std::string size;         // "smoke" | "cpu" | "full"
  std::string model;
  int index = 0;              // position in the run's budget for this workload, 0-based
  int round = 0;              // best-of-n: 0; iterative: the attempt; beam: the beam step
  std::optional<int> parent;  // index of the sample this one refines
  std::string phase;          // beam: "correctness" | "optimization"; else empty
  std::string plan;           // beam: the strategy drawn from the optimization menu
  std::string prompt_hash;    // sha256 of the request as sent (system + messages)
  int prompt_tokens = 0;
  int completion_tokens = 0;
  double latency_s = 0;  // of the LLM request
  std::string status;
  std::string error;                      // one line; empty when correct
  std::optional<double> speedup;          // correct samples only: baseline / candidate median
  std::string speedup_verdict;            // "faster", "slower", ...
  std::optional<double> pct_roofline;     // correct samples only
  std::optional<std::int64_t> result_id;  // the evaluation's results.id
  std::string reply;                      // the model's whole reply
  std::string code;                       // the extracted candidate source
  std::string created_at;
  // The machine that evaluated it, "host (CPU model)" from its result's environment; empty when it
  // was not evaluated (no code, an LLM error). A sweep's samples may come from several nodes.
  std::string machine;
};

}  // namespace kbench
