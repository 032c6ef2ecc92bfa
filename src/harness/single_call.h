// Calls of a compiled candidate on fresh inputs, in a worker seated and confined as `kbench eval`
// seats the candidate, for tools: what the first call wrote comes back unchecked, with the fastest
// call's time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/evaluator.h"

namespace kbench {

struct CandidateCalls {
  std::string error;  // why the worker did not start or a call did not return 0; empty if none
  std::optional<SandboxReport> sandbox;         // the worker's confinement, once it started
  std::vector<std::vector<std::byte>> outputs;  // each output's bytes after the first call
  double best_seconds = 0;                      // the fastest call, timed as kbench times calls
  bool ok() const { return error.empty(); }
};

// `calls` calls of `so_path` on inputs drawn from `seed`, stopping at the first that fails. Uses
// options.workload, size, threads, worker_exe, mem_limit_mb and call_timeout_s.
CandidateCalls call_candidate(const EvalOptions& options, const std::string& so_path,
                              std::uint64_t seed, int calls);

}  // namespace kbench
