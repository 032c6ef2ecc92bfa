// The three gates of `kbench eval` (compiles, correct on fresh inputs, faster than the baseline)
// and the baseline pass of `kbench run`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/eval_result.h"
#include "harness/worker_process.h"
#include "probe/probe.h"
#include "workloads/workload.h"

namespace kbench {

// The evaluation itself could not complete (kbench's side failed, not the candidate's).
class HarnessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EvalOptions {
  const Workload* workload = nullptr;
  Size size = Size::kCpu;
  int threads = 1;
  std::string candidate_path;  // C++ source of the candidate
  bool baseline_as_candidate =
      false;  // A/A check: the built-in baseline takes the candidate's seat
  // Timing is adaptive (harness/noise.h): after `warmup` untimed pairs, pairs are timed until the
  // speedup's 95% CI is within 2% of it, or `time_budget_s` of timing has passed, or `max_iters`
  // pairs; never fewer than `iters`.
  int warmup = 2;
  int iters = 5;  // the minimum of timed pairs (calls, for run_baseline)
  int max_iters = 500;
  double time_budget_s = 10;   // of the timing phase, warmup included
  int trials = 3;              // correctness input sets (at least; correctness_trials)
  double call_timeout_s = 10;  // per kb_run call
  // Address-space limit of each worker (both seats), raised where the workload's tensors need more
  // (seat_conditions); 0: none.
  long long mem_limit_mb = 4096;
  std::optional<std::uint64_t> seed;  // base seed; drawn fresh when unset
  std::string worker_exe;             // kbench-worker
  std::string cache_dir;              // compiled candidates
  // The baseline's library path per GEMM shape class and per convolution (ops::set_library_plan's
  // encoding), resolved per machine by the caller (cli::resolve_baseline) before any side starts;
  // used by the baseline worker and the in-process oracle, and recorded in the result.
  std::string library_plan;
  // The workload's library ceiling at this size and thread count (cli::resolve_baseline), for
  // Utilization's library figures; none where the baseline makes no library call.
  std::optional<LibraryCeiling> library_ceiling;
  // Times the ceiling's calls again, now (settled_library_ceiling); empty: the cached one stands.
  std::function<std::optional<LibraryCeiling>()> retime_library_ceiling;
  // Measures the machine's peaks again, now, each figure the higher of the cached and the new
  // (cli::machine_peaks_measured_again): called where the baseline ran below the physical floor
  // the peaks passed to evaluate put under it. Empty: those peaks stand.
  std::function<std::optional<PeakReport>()> measure_peaks_again;
  std::function<void(const std::string&)> progress;  // short status lines, may be empty
  // For evaluations that run concurrently (the agents' executor). `check_cpus`: the CPUs the
  // compiler, the in-process oracle and the candidate's checking worker use for gates 1 and 2
  // (empty: no pinning beyond the workers' usual CPUs). `acquire_timing`: called once before gate
  // 3; the handle it returns is held until the evaluation ends, so that one evaluation at a time
  // times. Gate 3 starts both sides' workers on worker_cpus(threads), which no check uses, and
  // moves this thread there.
  std::vector<int> check_cpus;
  std::function<std::shared_ptr<void>()> acquire_timing;
};

// The correctness trials gate 2 runs: options.trials, raised where the timed pairs' minimum
// (iters) would leave a candidate compared on fewer than kMinCheckedDraws input sets
// (harness/checker.h), so that options cannot thin out the draws a verdict rests on. The A/A
// check's candidate is the baseline itself and runs options.trials.
int correctness_trials(const EvalOptions& options);

// Never throws for anything a candidate does; throws HarnessError when kbench itself fails.
EvalResult evaluate(const EvalOptions& options, const std::optional<PeakReport>& peaks);

// `kbench run` for one workload: checks the baseline against the reference at smoke size, then
// times the baseline alone at options.size, with fresh inputs per call exactly as in `evaluate`.
EvalResult run_baseline(const EvalOptions& options, const std::optional<PeakReport>& peaks);

// EvalResult::suspicious for a candidate whose median beat max(FLOPs / compute roof, bytes /
// bandwidth) of `util`; empty when it did not or the roofs were not measured.
std::string below_physical_floor(double median_ms, const std::optional<Utilization>& util);
// The same for the baseline: kbench's own code doing the whole work cannot beat the floor, so one
// that did shows the floor wrong (its FLOP or byte count includes work a kernel may skip, or the
// cached peaks were measured in a slow moment), and a candidate's place against it means nothing.
// `peaks_measured_again`: the peaks behind `util` were measured again beside the baseline, which
// leaves the count.
std::string baseline_below_physical_floor(double baseline_median_ms,
                                          const std::optional<Utilization>& util,
                                          bool peaks_measured_again = false);

// The seat every worker of an evaluation with `options` starts in, pinned to `cpus`, reading the
// inputs on `inputs_fd`: the candidate's and the baseline's alike.
SeatConditions seat_conditions(const EvalOptions& options, int inputs_fd, std::vector<int> cpus);

// The CPUs a worker with `threads` threads is pinned to: the first `threads` CPUs this process may
// use.
std::vector<int> worker_cpus(int threads);

}  // namespace kbench
