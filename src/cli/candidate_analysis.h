// The analysis of a candidate (src/analysis/analyze.h) as `kbench analyze` and `kbench eval
// --analyze` make it: compiled to assembly, the model chosen and calibrated against this machine's
// probe, the loops simulated, their trips counted and the candidate timed in sandboxed workers.
#pragma once

#include <string>

#include "analysis/analyze.h"
#include "workloads/workload.h"

namespace kbench::cli {

struct CandidateAnalysisOptions {
  std::string size = "cpu";  // where the trips are counted and the candidate timed
  bool static_only = false;  // machine code alone: no probe, no runs
  std::string model;         // empty: chosen against the probe
};

// Throws UsageError for a bad size and std::runtime_error where the candidate does not compile or
// llvm-mca simulates none of its loops; a failed run leaves its error in the analysis.
analysis::Analysis analyze_candidate(const Workload& workload, const std::string& candidate,
                                     const CandidateAnalysisOptions& options);

}  // namespace kbench::cli
