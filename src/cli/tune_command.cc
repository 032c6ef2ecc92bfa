// `kbench tune -w ID`: every point of the expert's space (or a seeded sample) through the standard
// pipeline, each recorded; the fastest correct point is kept as this machine's configuration when
// its interval clears the default's speedup, else the default is.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "core/environment.h"
#include "experts/tuner.h"
#include "harness/compiler.h"
#include "harness/noise.h"
#include "store/result_json.h"

namespace kbench::cli {
namespace {

// A point as `kbench run` reports an expert, its configuration as an object.
nlohmann::json point_json(const experts::TunePoint& p) {
  nlohmann::json j = expert_to_json(experts::summarize(p.result, p.config, false));
  j["config"] = p.config;
  j.erase("tuned");
  return j;
}

std::string point_line(const experts::TunePoint& p) {
  const EvalResult& r = p.result;
  char buf[160];
  if (r.status == Status::kCorrect && r.speedup) {
    std::snprintf(buf, sizeof buf, "%-14s %7.3fx [%.3f, %.3f] %8.4g ms %7.1f GFLOP/s %5.1f%% roof",
                  "correct", *r.speedup, r.speedup_ci95 ? r.speedup_ci95->first : 0,
                  r.speedup_ci95 ? r.speedup_ci95->second : 0, r.candidate->median_ms,
                  r.utilization ? r.utilization->gflops : 0,
                  r.utilization ? r.utilization->pct_roofline : 0);
    return experts::config_text(p.config) + "  " + buf;
  }
  return experts::config_text(p.config) + "  " + status_name(r.status) + ": " + r.error;
}

}  // namespace

int tune_command(const TuneOptions& options) {
  const Workload& workload = workload_or_usage_error(options.workload);
  const Size size = size_or_usage_error(options.size);
  threads_or_usage_error(options.threads);
  if (options.max_configs < 0) throw UsageError("--max-configs must be at least 0");
  if (options.jobs < 0) throw UsageError("--jobs must be at least 0");
  seconds_or_usage_error("--time-budget-s", options.time_budget_s, 0, kLongestBudgetS);
  const experts::ExpertKernel expert = expert_or_usage_error(workload);
  const std::string path = experts::path_on_this_machine(expert);
  const std::vector<experts::Config> configs =
      experts::select_configs(expert, options.max_configs, options.seed.value_or(1), path);

  ResultStore store = open_store(options.db);
  const PeakReport peaks = machine_peaks(options.threads).peaks;
  EvalOptions eval = resolved_eval_options(workload, size, options.threads, options.time_budget_s);
  eval.seed = options.seed;
  const std::string work_dir =
      (std::filesystem::path(kbench_cache_dir()) / "tune" / std::string(workload.name)).string();
  LocalPoolExecutor executor(eval, peaks, work_dir, options.jobs);
  std::fprintf(stderr, "kbench tune: %s at %s, %zu of %zu configurations, %d in flight\n",
               std::string(workload.name).c_str(), options.size.c_str(), configs.size(),
               experts::full_grid(expert, path).size(), executor.jobs());
  if (!path.empty())
    std::fprintf(stderr,
                 "kbench tune: this machine takes the %s path (of %zu points in the whole space, "
                 "the tunables only other paths read stay at their defaults)\n",
                 path.c_str(), experts::full_grid(expert).size());

  const Environment env = current_environment();
  std::size_t done = 0;
  const experts::TuneReport report = experts::tune(
      expert, configs, executor,
      [&](const experts::TunePoint& p) {
        std::fprintf(stderr, "[%zu/%zu] %s\n", ++done, configs.size(), point_line(p).c_str());
      },
      path);
  for (const experts::TunePoint& p : report.points) store.record(p.result, env);
  if (!options.no_save) experts::save_config(store, report);

  if (options.json) {
    nlohmann::json out = {
        {"workload", report.workload},
        {"size", report.size},
        {"threads", report.threads},
        {"space", report.space_size},
        {"path", report.path.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.path)},
        {"evaluated", report.points.size()},
        {"points", nlohmann::json::array()}};
    for (const experts::TunePoint& p : report.points) out["points"].push_back(point_json(p));
    out["best"] = report.best ? point_json(report.points[*report.best]) : nlohmann::json(nullptr);
    out["default"] = report.default_point ? point_json(report.points[*report.default_point])
                                          : nlohmann::json(nullptr);
    out["gain_over_default"] = report.gain_over_default ? nlohmann::json(*report.gain_over_default)
                                                        : nlohmann::json(nullptr);
    out["chosen"] =
        report.chosen ? point_json(report.points[*report.chosen]) : nlohmann::json(nullptr);
    out["kept_default"] = report.kept_default();
    out["saved"] = report.chosen && !options.no_save;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const experts::TunePoint& p : report.points) std::cout << point_line(p) << "\n";
  if (!report.best) {
    std::cout << "no configuration was correct: nothing saved\n";
    return 0;
  }
  std::cout << "best: " << point_line(report.points[*report.best]) << "\n";
  if (report.gain_over_default) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3fx", *report.gain_over_default);
    std::cout << "best over default: " << buf << "\n";
  }
  if (report.kept_default()) {
    const EvalResult& best = report.points[*report.best].result;
    const EvalResult& fallback = report.points[*report.chosen].result;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "kept the default: the best's interval [%.3f, %.3f] does not clear the "
                  "default's %.3fx by %.1f%%\n",
                  best.speedup_ci95 ? best.speedup_ci95->first : 0.0,
                  best.speedup_ci95 ? best.speedup_ci95->second : 0.0, *fallback.speedup,
                  100 * kClaimMargin);
    std::cout << buf;
  }
  if (options.no_save)
    std::cout << "not saved (--no-save)\n";
  else
    std::cout << (report.kept_default() ? "the default " : "")
              << "saved as this machine's configuration for `kbench run`\n";
  return 0;
}

Subcommand add_tune_command(CLI::App& app) {
  auto tune = std::make_shared<TuneOptions>();
  auto* tune_cmd = app.add_subcommand(
      "tune",
      "Grid-search an expert kernel's declared space; keep the fastest correct point, or the "
      "default when that is not clearly faster");
  add_workload_option(tune_cmd, tune->workload);
  add_size_option(tune_cmd, tune->size);
  tune_cmd->add_option("--threads", tune->threads, "Threads")->capture_default_str();
  tune_cmd
      ->add_option("--max-configs", tune->max_configs,
                   "At most this many points: the default plus a seeded sample (0: all)")
      ->capture_default_str();
  add_seed_option(tune_cmd, tune->seed, "Seed of the inputs and of the sample of points");
  tune_cmd->add_option("--time-budget-s", tune->time_budget_s, "Seconds of timing per point")
      ->capture_default_str();
  tune_cmd->add_option("--jobs", tune->jobs, "Evaluations in flight (0: as the CPUs allow)")
      ->capture_default_str();
  add_json_flag(tune_cmd, tune->json, "one JSON object");
  tune_cmd->add_flag("--no-save", tune->no_save, "Do not keep the winner for this machine");
  add_db_option(tune_cmd, tune->db);
  return {tune_cmd, [tune] { return tune_command(*tune); }};
}

}  // namespace kbench::cli
