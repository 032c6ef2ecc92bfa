// The steady-state cost of a loop body on a CPU model, as LLVM's machine-code analyzer (llvm-mca)
// simulates it: cycles per iteration and what bounds them. llvm-mca models the core only: caches
// and memory are perfect, a call costs nothing beyond its own instruction, and instructions it does
// not model (AMX) get a default latency.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kbench::analysis {

struct LoopCost {
  double cycles_per_iter = 0;    // simulated cycles over iterations, steady state
  double block_rthroughput = 0;  // the resources' bound alone: no dependency can beat it
  double uops_per_iter = 0;
  int dispatch_width = 0;
  double dependency_share = 0;  // share of cycles with backend pressure from data dependencies
  // llvm-mca's critical sequence enters the next iteration through a vector register (an
  // accumulator), not through the loop's index.
  bool accumulator_chain = false;
  std::string bound;             // "front end", "latency chain", or "port <resource>"
  std::string busiest_resource;  // the resource with the most cycles per iteration
  double busiest_resource_cycles = 0;
  // The confinement llvm-mca ran under (harness/confined_command.h), set by simulate_loop.
  std::vector<std::string> layers, missing;
};

// Reads llvm-mca's text report (run with --bottleneck-analysis); throws std::runtime_error when it
// lacks the summary.
LoopCost parse_mca_report(std::string_view report);

// The llvm-mca this build uses: $KBENCH_LLVM_MCA, else llvm-mca-19 (Debian 12's LLVM 19: earlier
// versions misjudge AVX512-BF16, and their AMX and Sapphire Rapids models are older).
std::string llvm_mca_tool();

// Runs llvm-mca on `instructions` (AT&T syntax, one per element) for `mcpu`; throws
// std::runtime_error with llvm-mca's own message when it fails.
LoopCost simulate_loop(const std::vector<std::string>& instructions, const std::string& mcpu);

}  // namespace kbench::analysis
