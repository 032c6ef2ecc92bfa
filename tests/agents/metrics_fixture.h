// A small hand-built set of agent samples whose metrics are worked out by hand in metrics_test.cc,
// shared with the report tests so both read the same numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/agent_sample.h"

namespace kbench::agents::testing {

inline AgentSample make_sample(const std::string& method, const std::string& workload, int index,
                               int round, const std::string& status,
                               std::optional<double> speedup = std::nullopt,
                               const std::string& verdict = "") {
  AgentSample s;
  s.run_id = 1;
  s.method = method;
  s.workload = workload;
  s.size = "smoke";
  s.model = "scripted";
  s.index = index;
  s.round = round;
  s.status = status;
  s.speedup = speedup;
  s.speedup_verdict = verdict;
  s.prompt_tokens = 100;
  s.completion_tokens = 20;
  s.latency_s = 0.5;
  return s;
}

// best-of-n: 1p_X and 2p_Y, 4 samples each, all round 0; 1p_X is solved (0.8x then 2.5x), 2p_Y
// fails four different ways.
// iterative: 1p_X and 2p_Y 4 samples each (round = index), 3p_Z 2 samples; every workload solved:
// 1p_X best 1.6x (and a correct sample without a timing), 2p_Y best 3.0x, 3p_Z exactly 1.0x;
// one status no list names ("sandbox_violation"). The verdicts of 1p_X's 2.5x (best-of-n) and
// 2p_Y's 3.0x (iterative) are "faster"; the others' intervals cover 1 or none was recorded.
inline std::vector<AgentSample> two_method_samples() {
  return {
      make_sample("best-of-n", "1p_X", 0, 0, "compile_error"),
      make_sample("best-of-n", "1p_X", 1, 0, "correct", 0.8),
      make_sample("best-of-n", "1p_X", 2, 0, "correct", 2.5, "faster"),
      make_sample("best-of-n", "1p_X", 3, 0, "incorrect"),
      make_sample("best-of-n", "2p_Y", 0, 0, "runtime_error"),
      make_sample("best-of-n", "2p_Y", 1, 0, "timeout"),
      make_sample("best-of-n", "2p_Y", 2, 0, "no_code"),
      make_sample("best-of-n", "2p_Y", 3, 0, "llm_error"),
      make_sample("iterative", "1p_X", 0, 0, "correct", 1.2),
      make_sample("iterative", "1p_X", 1, 1, "correct", 1.6, "no significant difference"),
      make_sample("iterative", "1p_X", 2, 2, "rejected"),
      make_sample("iterative", "1p_X", 3, 3, "correct"),
      make_sample("iterative", "2p_Y", 0, 0, "incorrect"),
      make_sample("iterative", "2p_Y", 1, 1, "correct", 0.5),
      make_sample("iterative", "2p_Y", 2, 2, "correct", 3.0, "faster"),
      make_sample("iterative", "2p_Y", 3, 3, "compile_error"),
      make_sample("iterative", "3p_Z", 0, 0, "sandbox_violation"),
      make_sample("iterative", "3p_Z", 1, 1, "correct", 1.0),
  };
}

}  // namespace kbench::agents::testing
