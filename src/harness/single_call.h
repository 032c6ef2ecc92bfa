// One call of a compiled candidate on fresh inputs, in a worker seated and confined as `kbench
// eval` seats the candidate, for tools that need what a kernel writes rather than how fast: its
// output bytes come back, unchecked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/evaluator.h"

namespace kbench {

// The bytes of each output after one call of `so_path` on inputs drawn from `seed`, in output
// order; nullopt with `error` set when the worker did not start or the call did not return 0.
// Uses options.workload, size, threads, worker_exe, mem_limit_mb and call_timeout_s.
std::optional<std::vector<std::vector<std::byte>>> call_candidate_once(const EvalOptions& options,
                                                                       const std::string& so_path,
                                                                       std::uint64_t seed,
                                                                       std::string& error);

}  // namespace kbench
