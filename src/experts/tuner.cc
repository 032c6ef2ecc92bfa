// Grid selection, the evaluation of each point, and the per-machine record of the winner.
#include "experts/tuner.h"

#include <algorithm>
#include <random>

#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "harness/evaluator.h"
#include "harness/noise.h"

namespace kbench::experts {

std::vector<Config> select_configs(const ExpertKernel& expert, int max_configs, std::uint64_t seed,
                                   const std::string& path) {
  std::vector<Config> grid = full_grid(expert, path);
  if (max_configs <= 0 || static_cast<int>(grid.size()) <= max_configs) return grid;
  // The default stays first; the rest is a uniform sample, evaluated in grid order.
  std::vector<std::size_t> rest(grid.size() - 1);
  for (std::size_t i = 0; i < rest.size(); ++i) rest[i] = i + 1;
  std::mt19937_64 rng(seed);
  std::shuffle(rest.begin(), rest.end(), rng);
  rest.resize(static_cast<std::size_t>(max_configs - 1));
  std::sort(rest.begin(), rest.end());
  std::vector<Config> chosen = {grid[0]};
  for (std::size_t i : rest) chosen.push_back(grid[i]);
  return chosen;
}

TuneReport tune(const ExpertKernel& expert, const std::vector<Config>& configs, Executor& executor,
                const std::function<void(const TunePoint&)>& on_point, const std::string& path) {
  TuneReport report;
  report.workload = expert.workload;
  report.path = path;
  report.space_size = full_grid(expert, path).size();
  std::vector<std::string> sources;
  for (const Config& c : configs) sources.push_back(configured_source(expert, c));
  std::vector<EvalResult> results =
      executor.evaluate(sources, [&](std::size_t i, const EvalResult& r) {
        if (on_point) on_point({configs[i], r});
      });
  const Config defaults = default_config(expert);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    EvalResult& r = results[i];
    // Name the point, not the executor's scratch file.
    r.candidate_path = point_name(expert, configs[i]);
    report.size = r.size;
    report.threads = r.threads;
    report.points.push_back({configs[i], std::move(r)});
    const EvalResult& stored = report.points.back().result;
    if (configs[i] == defaults) report.default_point = i;
    if (stored.status != Status::kCorrect || !stored.speedup) continue;
    if (!report.best || *stored.speedup > *report.points[*report.best].result.speedup)
      report.best = i;
  }
  report.chosen = report.best;
  if (report.best && report.default_point) {
    const EvalResult& d = report.points[*report.default_point].result;
    const EvalResult& b = report.points[*report.best].result;
    if (d.status == Status::kCorrect && d.speedup && *d.speedup > 0) {
      report.gain_over_default = *b.speedup / *d.speedup;
      const bool clears_default =
          b.speedup_ci95 && b.speedup_ci95->first > *d.speedup * (1 + kClaimMargin);
      if (!clears_default) report.chosen = report.default_point;
    }
  }
  return report;
}

std::string tuned_config_key(const std::string& workload, const std::string& size, int threads) {
  return "expert-config/" + current_environment().machine_id() + "/" + workload + "/" + size +
         "/threads=" + std::to_string(threads);
}

std::optional<Config> saved_config(const ResultStore& store, const ExpertKernel& expert,
                                   const std::string& size, int threads) {
  const std::optional<std::string> text =
      store.cache_get(tuned_config_key(expert.workload, size, threads));
  if (!text) return std::nullopt;
  try {
    Config config = nlohmann::json::parse(*text).at("config").get<Config>();
    validate_config(expert, config);
    return config;
  } catch (const std::exception&) {
    return std::nullopt;  // damaged, or tuned for a space the expert no longer declares
  }
}

void save_config(ResultStore& store, const TuneReport& report) {
  if (!report.chosen) return;
  const TunePoint& chosen = report.points[*report.chosen];
  nlohmann::json entry = {{"config", chosen.config},
                          {"speedup", *chosen.result.speedup},
                          {"points", report.points.size()},
                          {"space", report.space_size},
                          {"tuned_at", chosen.result.created_at},
                          {"kbench_commit", current_environment().kbench_commit}};
  if (report.gain_over_default) entry["gain_over_default"] = *report.gain_over_default;
  store.cache_put(tuned_config_key(report.workload, report.size, report.threads), entry.dump());
}

RunConfig config_for_run(const ResultStore& store, const ExpertKernel& expert,
                         const std::string& size, int threads) {
  if (std::optional<Config> saved = saved_config(store, expert, size, threads))
    return {std::move(*saved), true};
  return {default_config(expert), false};
}

ExpertSummary summarize(const EvalResult& result, const Config& config, bool tuned) {
  ExpertSummary e;
  e.config = config_text(config);
  e.tuned = tuned;
  e.status = result.status;
  e.error = result.error;
  if (result.candidate) e.median_ms = result.candidate->median_ms;
  e.speedup = result.speedup;
  e.speedup_ci95 = result.speedup_ci95;
  e.speedup_verdict = result.speedup_verdict;
  if (result.noise && !result.noise->stable) e.unstable_reason = result.noise->unstable_reason;
  if (result.baseline) e.baseline_median_ms = result.baseline->median_ms;
  if (result.utilization) e.gflops = result.utilization->gflops;
  if (result.utilization && !result.utilization->bound.empty())
    e.pct_roofline = result.utilization->pct_roofline;
  return e;
}

}  // namespace kbench::experts
