// The one typed record of an evaluation, carried from the evaluator to the store and every report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kbench {

enum class Status { kCorrect, kIncorrect, kCompileError, kRuntimeError, kTimeout };
const char* status_name(Status status);  // "correct", "incorrect", "compile_error", ...

struct CorrectnessReport {
  bool passed = false;
  int trials = 0;                    // input sets checked
  std::vector<std::uint64_t> seeds;  // the fresh seeds drawn for them
  double max_abs_err = 0;
  double max_rel_err = 0;  // max |out-ref| / |ref| over elements with |ref| > atol
  double rel_l2_err = 0;   // worst over trials of ||out-ref|| / ||ref||
  std::string detail;      // the first failing check, naming the worst element
};

struct TimingSummary {
  double median_ms = 0, p25_ms = 0, p75_ms = 0, min_ms = 0, mean_ms = 0;
  int iters = 0;
  std::vector<double> samples_ms;  // every timed call, in order
};

struct Utilization {
  double gflops = 0, pct_peak_flops = 0, gbps = 0, pct_peak_bw = 0;
  double peak_gflops = 0, peak_gbps = 0;  // the probe's measurements used as 100%
  std::string peak_flops_kind;            // "fp32_fma"
};

// What `kbench eval` produces (kind "eval") and `kbench run` per workload (kind "run": baseline
// only).
struct EvalResult {
  std::string kind = "eval";
  std::string workload;  // full name, e.g. "8p_GEMM"
  std::string size;      // "smoke" | "cpu" | "full"
  int threads = 1;
  Status status = Status::kRuntimeError;
  std::string error;        // one line; empty when correct
  std::string diagnostics;  // compiler output, candidate stderr tail
  std::string candidate_path;
  std::string candidate_source;
  std::string candidate_hash;  // sha256 of source + compiler + flags
  CorrectnessReport correctness;
  std::optional<TimingSummary> candidate;  // only when correct
  std::optional<TimingSummary> baseline;
  std::optional<double> speedup;                          // baseline median / candidate median
  std::optional<std::pair<double, double>> speedup_ci95;  // paired bootstrap
  std::optional<Utilization> utilization;  // of the candidate (of the baseline for kind "run")
  int warmup = 0;
  double wall_s = 0;
  std::string created_at;  // ISO-8601 UTC
};

}  // namespace kbench
