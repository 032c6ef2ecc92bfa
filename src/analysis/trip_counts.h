// How often each innermost loop of a candidate runs: the candidate's own assembly with a counter
// at each loop's header (lock incq, so OpenMP threads count exactly), assembled with a wrapper
// kb_run that calls the candidate's and then copies the counters over its outputs, and run once in
// a sandboxed worker like any candidate code. The counts come back in the output bytes, which
// nothing checks on this run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/asm_loops.h"
#include "analysis/confined_steps.h"
#include "harness/evaluator.h"

namespace kbench::analysis {

// Whether the flags register is live at the top of `instructions` (a loop body from its header):
// some instruction reads the flags before any writes them. A counter there must keep them.
bool flags_live_at_entry(const std::vector<std::string>& instructions);

struct InstrumentedAssembly {
  std::string assembly;
  std::vector<bool> saved_flags;  // per loop: its counter saves and restores the flags
};

// `assembly` with a counter at the header of each of `loops` (keeping the flags where they are live
// there), the counters' array (kbench_loop_trips), and the candidate's kb_run renamed
// kbench_candidate_run.
InstrumentedAssembly instrument(std::string_view assembly, const std::vector<AsmLoop>& loops);

// The wrapper kb_run, C++ compiled beside the instrumented assembly, for `loops` counters.
std::string trip_count_wrapper(std::size_t loops);

// The trip count of each of `loops` over one call of the candidate at options.size; throws
// std::runtime_error when it cannot build or run. The build and the run go into `steps` as they
// happen, a failed one too.
std::vector<std::int64_t> count_trips(std::string_view assembly, const std::vector<AsmLoop>& loops,
                                      const EvalOptions& options, std::uint64_t seed,
                                      std::vector<ConfinedStep>& steps);

}  // namespace kbench::analysis
