// The analysis of one candidate as `kbench analyze`, `kbench eval --analyze` and the agents'
// feedback make it: compiled to assembly, the model chosen and calibrated against this machine's
// probe, the loops simulated, their trips counted and the candidate timed in sandboxed workers.
#pragma once

#include <optional>
#include <string>

#include "analysis/analyze.h"
#include "harness/evaluator.h"
#include "probe/probe.h"

namespace kbench::analysis {

struct CandidateAnalysisOptions {
  // The single-thread probe: it chooses the model and calibrates its clock. Absent: the machine
  // code alone is read (no runs, no trips, no times), as `kbench analyze --static` does.
  std::optional<PeakReport> peaks;
  std::string model;  // empty: chosen against the probe
  // Per call of the instrumented build, which runs slower than the candidate it counts.
  double call_timeout_s = 120;
};

// Analyzes `eval.candidate_path` for `eval.workload`: trips counted and the candidate timed at
// `eval.size` on one thread (eval.threads is not used: a loop's trips and cycles are summed over
// threads, so one thread is what the clock turns into the measured time), in workers started from
// eval.worker_exe with eval.mem_limit_mb, the build cached in eval.cache_dir. Throws
// std::runtime_error where the candidate does not compile or llvm-mca simulates none of its loops;
// a failed run leaves its error in the analysis.
Analysis analyze_candidate(const EvalOptions& eval, const CandidateAnalysisOptions& options);

// The analysis, or why there is none, with what a result record keeps of it
// (EvalResult::analysis_json): to_json of the analysis, or {"error": why}.
struct AnalysisRecord {
  std::optional<Analysis> analysis;
  std::string error;
  std::string json;
};
// Never throws for anything the candidate does.
AnalysisRecord analysis_record(const EvalOptions& eval, const CandidateAnalysisOptions& options);

}  // namespace kbench::analysis
