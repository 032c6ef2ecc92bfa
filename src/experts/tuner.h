// `kbench tune`: a grid search over an expert's declared space, every point evaluated by the
// standard pipeline (correct on fresh inputs, timed against the baseline), the fastest correct
// point kept per machine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "experts/expert.h"
#include "harness/executor.h"
#include "store/store.h"

namespace kbench::experts {

struct TunePoint {
  Config config;
  EvalResult result;
};

struct TuneReport {
  std::string workload;
  std::string size;
  int threads = 1;
  std::string path;                 // the expert's path on this machine ("" if it names none)
  std::size_t space_size = 0;       // points in the grid of that path
  std::vector<TunePoint> points;    // in evaluation order, the default first
  std::optional<std::size_t> best;  // the correct point with the highest speedup
  std::optional<std::size_t> default_point;
  // best speedup / default speedup: what tuning bought, each measured against the baseline
  // interleaved with it (so drift between the two evaluations cancels).
  std::optional<double> gain_over_default;
  // The point save_config keeps: the best, unless the default is correct and the best's interval
  // does not clear the default's speedup by kClaimMargin. Picked by its point estimate among many
  // points of similar speed, the best is biased upward (the winner's curse); a lead inside its own
  // interval is no evidence that it is faster (6p on the AMX Xeon: best 1.87x [1.71, 1.94] against
  // the default's 1.79x).
  std::optional<std::size_t> chosen;

  // The best point did not clear the default, so the default was chosen instead.
  bool kept_default() const { return chosen && chosen != best; }
};

// The points to evaluate: the grid of `path` (full_grid) when it has at most `max_configs`
// points (0: no limit), else the default plus a seeded random sample of the rest ("pruned").
std::vector<Config> select_configs(const ExpertKernel& expert, int max_configs, std::uint64_t seed,
                                   const std::string& path = "");

// Evaluates `configs` (drawn from the grid of `path`) through `executor`; `on_point` sees each
// point as it completes.
TuneReport tune(const ExpertKernel& expert, const std::vector<Config>& configs, Executor& executor,
                const std::function<void(const TunePoint&)>& on_point = {},
                const std::string& path = "");

// The store's cache key of the tuned configuration for (this machine, workload, size, threads).
std::string tuned_config_key(const std::string& workload, const std::string& size, int threads);

// The saved configuration for this machine, validated against the expert's current space;
// nullopt when none is saved or it no longer fits the space (the expert changed).
std::optional<Config> saved_config(const ResultStore& store, const ExpertKernel& expert,
                                   const std::string& size, int threads);
void save_config(ResultStore& store, const TuneReport& report);

// What a run or a tune report says of an expert's evaluation at `config`.
ExpertSummary summarize(const EvalResult& result, const Config& config, bool tuned);

// The configuration `kbench run` and `kbench eval --expert` use: the saved one, else the default.
struct RunConfig {
  Config config;
  bool tuned = false;  // the saved one
};
RunConfig config_for_run(const ResultStore& store, const ExpertKernel& expert,
                         const std::string& size, int threads);

}  // namespace kbench::experts
