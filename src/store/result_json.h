// The JSON form of EvalResult, shared by `kbench eval --json`, the JSON sink and the store's
// full_json column.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/eval_result.h"

namespace kbench {

struct JsonOptions {
  bool include_samples = true;  // candidate/baseline "samples_ms": one number per timed call
  bool include_source = true;   // "candidate_source": the whole kernel file, often kilobytes
};

// Every field of `result`. Keys: kind, workload, size, threads, status, error, diagnostics,
// candidate_path, candidate_hash, candidate_source, correctness{passed, trials, seeds, max_abs_err,
// max_rel_err, rel_l2_err, detail}, candidate and baseline{median_ms, p25_ms, p75_ms, min_ms,
// mean_ms, iters, used, wall_median_ms, samples_ms, and where measured wait_ms, offcpu_ms, cpu_ms,
// adjusted_ms, disturbed} or null, speedup, speedup_ci95 [lo, hi], speedup_verdict,
// noise{cv_candidate, cv_baseline, steal_pct, calls, disturbed_calls, candidate_disturbed,
// baseline_disturbed, unadjustable_calls, clean_pairs, accounted, estimator, ci_half_width_pct,
// stable, unstable_reason, stop_reason, min_iters, max_iters, time_budget_s} or null,
// baseline_path, gflops, pct_peak_flops, gbps, pct_peak_bw, peak_gflops, peak_gbps,
// peak_flops_kind, math, intensity, balance, bound, roofline_ms, pct_roofline, library_gflops,
// library_method, pct_library (null when not measured), warmup, wall_s, created_at. Non-finite
// doubles become the strings "nan", "inf" and "-inf" (JSON has no such numbers), so null keeps
// meaning "not measured".
nlohmann::json to_json(const EvalResult& result, const JsonOptions& options = {});

// An expert's summary as `kbench run --json` carries it under "expert".
nlohmann::json expert_to_json(const ExpertSummary& expert);

// Reads what to_json() writes; with default options the round trip is exact. Missing keys keep
// their defaults (older records, other tools); a present key of the wrong type or an unknown status
// throws std::invalid_argument naming the key. Numbers may also be null or "nan"/"inf"/"-inf"
// strings.
EvalResult eval_result_from_json(const nlohmann::json& json);

// Serializes `json` (indent < 0: one line) replacing invalid UTF-8 with U+FFFD instead of throwing:
// diagnostics and candidate stderr are arbitrary bytes. Use this, not json.dump(), for EvalResult
// JSON.
std::string dump_json(const nlohmann::json& json, int indent = -1);

}  // namespace kbench
