// The one typed record of an evaluation, carried from the evaluator to the store and every report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kbench {

// kRejected: the candidate broke the sandbox's rules (a forbidden system call, a forged reply on
// kbench's channel, running while frozen, more CPU than its threads allow), whatever its outputs.
enum class Status { kCorrect, kIncorrect, kCompileError, kRuntimeError, kTimeout, kRejected };
// The names are part of the JSON, CSV and SQLite formats, so they never change.
const char* status_name(Status status);  // "correct", "incorrect", "compile_error", ...
// The inverse of status_name(): "correct" -> kCorrect, ...; nullopt for any other text.
std::optional<Status> parse_status(std::string_view name);

struct CorrectnessReport {
  bool passed = false;
  int trials = 0;                    // input sets whose outputs were compared with the oracle
  std::vector<std::uint64_t> seeds;  // the fresh seeds drawn for them
  double max_abs_err = 0;
  double max_rel_err = 0;  // max |out-ref| / |ref| over elements with |ref| > atol
  double rel_l2_err = 0;   // worst over trials of ||out-ref|| / ||ref||
  std::string detail;      // the first failing check, naming the worst element

  // An error metric where outputs were compared; none where a crash, a timeout or a rejection came
  // before the first comparison (0 would read as a perfect result).
  std::optional<double> measured(double CorrectnessReport::*metric) const {
    return trials > 0 ? std::optional<double>(this->*metric) : std::nullopt;
  }
};

// One side's timed calls. The statistics are of the calls' adjusted times (wall time without the
// run-queue wait of the critical thread, harness/noise.h) over `used` calls; the per-call vectors
// hold every timed call, in order.
struct TimingSummary {
  double median_ms = 0, p25_ms = 0, p75_ms = 0, min_ms = 0, mean_ms = 0;
  int iters = 0;                   // timed calls
  std::vector<double> samples_ms;  // wall time of every timed call
  int used = 0;                    // calls the statistics above are over (0: all, older records)
  double wall_median_ms = 0;       // median wall time (the statistics above are of adjusted times)
  // Measured by kbench from /proc around each call (empty where the kernel does not provide it):
  std::vector<double> wait_ms;      // run-queue wait, summed over the worker's threads
  std::vector<double> offcpu_ms;    // wall minus the busiest thread's on-CPU time
  std::vector<double> cpu_ms;       // on-CPU time, summed over the worker's threads
  std::vector<double> adjusted_ms;  // wall without the critical thread's run-queue wait (noise.h)
  std::vector<std::uint8_t> disturbed;  // 0 clean, 1 only waited (adjustable), 2 disturbed
};

// One workload's library ceiling on this machine: every library call its baseline makes (GEMMs and
// convolutions at their own shapes, as many times as it makes them), each at the best time of the
// fastest library path for it, with nothing between them. A kernel built from the same library
// calls plus the work between them cannot reach it; a kernel above it does the library's part
// faster than the library.
struct LibraryCeilingPart {
  std::string call;  // LibraryCall::key(): "gemm 768x2688x768:nn:bf16:t1", "conv2d ..."
  int count = 0;     // calls per kernel call
  double flops = 0;  // of one call
  std::string path;  // the fastest library path for it
  double best_ms = 0;
};
struct LibraryCeiling {
  double ms = 0;  // sum over parts of count x best_ms
  std::vector<LibraryCeilingPart> parts;
  // Timed again during this evaluation because the baseline outran the cached times
  // (settled_library_ceiling); false where the cached times stood.
  bool retimed = false;
};

// The roofline of this machine for the result's math, and where the measured time sits on it.
// Every number is 0 (and `bound` empty) where the peaks were not measured.
struct Utilization {
  double gflops = 0, pct_peak_flops = 0, gbps = 0, pct_peak_bw = 0;
  double peak_gflops = 0, peak_gbps = 0;  // the roofs: compute (of `peak_flops_kind`) and memory
  std::string peak_flops_kind;            // the compute unit: "amx_bf16", "bf16_dot", "fp32_fma"
  std::string math;                       // the workload's math class: "bf16_matmul", "f32_vector"
  double intensity = 0;                   // essential flops per minimal byte moved
  double balance = 0;                     // peak_gflops / peak_gbps, flops per byte
  std::string bound;                      // "compute" (intensity >= balance) or "memory"
  double roofline_ms = 0;                 // max(essential flops / compute roof, bytes / bandwidth)
  double pct_roofline = 0;                // 100 * roofline_ms / measured median
  // The workload's library ceiling (LibraryCeiling), where its baseline makes library calls:
  // its time, the workload's FLOPs over it, and the measured time's share of it.
  double library_ms = 0;
  double library_gflops = 0;   // flops / library_ms
  std::string library_method;  // the parts in short: "768x2688x768:nn:bf16:t1 onednn_bf16"
  double pct_library = 0;      // 100 * library_ms / measured median
};

// The pairs split by the order of their calls: those whose candidate call ran first and those
// whose baseline call did (harness/noise.h). `split` compares the speedups of the two halves; it
// also moves when the first (or second) call of every pair is slower for both sides alike, which
// the alternating order cancels. `carryover` compares the two kinds of pair by their total time,
// couple by couple (a candidate-first pair and the baseline-first pair after it): a call that slows
// the other side's next call makes the pairs it goes first in longer, which no alternation cancels,
// and that is what makes a result unstable.
struct OrderEffect {
  double candidate_first = 0, baseline_first = 0;  // the estimator over each half of the pairs
  std::pair<double, double> candidate_first_ci95{0, 0}, baseline_first_ci95{0, 0};
  int candidate_first_pairs = 0, baseline_first_pairs = 0;
  double split = 0;  // candidate_first / baseline_first
  // Median over couples of (c * b of the candidate-first pair) / (b * c of the baseline-first
  // pair), with its interval: 1 when neither side's calls change the other's next call.
  double carryover = 0;
  std::pair<double, double> carryover_ci95{0, 0};
  int couples = 0;
};

// The conditions the timing ran under, measured from outside the workers (harness/noise.h).
struct NoiseReport {
  double cv_candidate = 0, cv_baseline = 0;  // stddev / mean over every timed call of each side
  double steal_pct = 0;     // hypervisor steal over the workers' CPUs during timing
  int calls = 0;            // timed calls, both sides
  int disturbed_calls = 0;  // of which disturbed (waited on a run queue, or worse)
  int candidate_disturbed = 0, baseline_disturbed = 0;
  int unadjustable_calls = 0;    // disturbed by what the adjusted time cannot take out (steal, ...)
  int clean_pairs = 0;           // pairs with neither call disturbed (calls, for kind "run")
  bool accounted = false;        // per-thread scheduler counters were readable
  std::string estimator;         // "median_pair_ratio_adjusted" (eval), "median_adjusted" (run)
  double ci_half_width_pct = 0;  // of the final estimate
  bool stable = false;           // the estimate may be claimed; false says why in unstable_reason
  std::string unstable_reason;
  std::string stop_reason;  // "ci_target", "time_budget", "max_iters"
  int min_iters = 0, max_iters = 0;
  double time_budget_s = 0;
  std::optional<OrderEffect> order_effect;  // paired timing (eval) only
};

// The isolation the candidate's worker ran under (docs/security.md). A layer this machine could not
// provide is listed in `missing` with the reason, and the verdict says so: never silently weaker.
struct SandboxReport {
  std::vector<std::string> layers;   // "seccomp", "landlock", "pid_namespace", "net_namespace", ...
  std::vector<std::string> missing;  // "landlock: kernel without landlock (ENOSYS)", ...
};

// `kbench run`: the workload's expert kernel (docs/experts.md) evaluated beside the baseline, by
// the gates of `kbench eval`, at the configuration tuned for this machine or else its default.
struct ExpertSummary {
  std::string config;  // "KB_MC=96 KB_NC=..." (empty for an expert without tunables)
  bool tuned = false;  // the configuration `kbench tune` saved for this machine, not the default
  Status status = Status::kRuntimeError;
  std::string error;
  std::optional<double> median_ms;
  std::optional<double> speedup;  // baseline median / expert median, paired as in eval
  std::optional<std::pair<double, double>> speedup_ci95;
  std::string speedup_verdict;
  std::string unstable_reason;               // why speedup_verdict is "unstable"; empty otherwise
  std::optional<double> baseline_median_ms;  // the baseline in the expert's pairs
  std::optional<double> gflops;
  std::optional<double> pct_roofline;
};

// What `kbench eval` produces (kind "eval") and `kbench run` per workload (kind "run": baseline
// only, plus the expert's summary where the workload has one).
struct EvalResult {
  std::int64_t id = 0;  // the record's id in the store; 0 for a result not (yet) recorded
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
  // "faster", "slower", "no significant difference" (CI covers 1.0) or "unstable" (noise.stable is
  // false: no claim either way); empty without a speedup.
  std::string speedup_verdict;
  std::optional<NoiseReport> noise;  // whenever anything was timed
  // The baseline's library path per GEMM shape class and per convolution (ops::set_library_plan's
  // encoding; the store's column baseline_gemm_plan); empty: the defaults.
  std::string baseline_library_plan;
  std::optional<Utilization> utilization;  // of the candidate (of the baseline for kind "run")
  std::optional<LibraryCeiling> library_ceiling;  // what Utilization's library figures rest on
  // Non-empty when the candidate's median beat the physical floor, max(FLOPs / compute roof, bytes
  // / bandwidth): an algebraic shortcut can do that legitimately, so it informs, it is no verdict.
  std::string suspicious;
  std::optional<SandboxReport> sandbox;  // eval only: how the candidate was confined
  std::optional<ExpertSummary> expert;   // run only
  // `kbench eval --analyze`: the candidate's loops (src/analysis/analyze.h) as JSON text; empty
  // without.
  std::string analysis_json;
  int warmup = 0;
  double wall_s = 0;
  std::string created_at;  // ISO-8601 UTC
};

}  // namespace kbench
