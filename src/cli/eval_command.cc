// `kbench eval`: one candidate through the three gates, recorded in the store.
#include <filesystem>

#include "cli/commands.h"
#include "cli/context.h"
#include "core/environment.h"
#include "experts/expert.h"
#include "experts/tuner.h"
#include "harness/compiler.h"
#include "harness/evaluator.h"

namespace kbench::cli {

int eval_command(const EvalCommandOptions& options) {
  EvalOptions eval;
  eval.workload = &workload_or_usage_error(options.workload);
  eval.size = size_or_usage_error(options.size);
  if (int(options.aa) + int(options.expert) + int(!options.candidate.empty()) != 1)
    throw UsageError("give exactly one of --candidate FILE, --aa or --expert");
  if (!options.candidate.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(options.candidate, ec))
      throw UsageError("cannot read candidate file '" + options.candidate + "'");
  }
  threads_or_usage_error(options.threads);
  if (options.iters < 1 || options.warmup < 0 || options.trials < 1)
    throw UsageError("--iters and --trials must be at least 1, --warmup at least 0");
  if (options.max_iters < options.iters) throw UsageError("--max-iters must be at least --iters");
  if (!(options.time_budget_s >= 0)) throw UsageError("--time-budget-s must be at least 0");
  if (options.timeout_s <= 0) throw UsageError("--timeout-s must be positive");
  eval.candidate_path = options.candidate;
  eval.baseline_as_candidate = options.aa;
  eval.threads = options.threads;
  eval.warmup = options.warmup;
  eval.iters = options.iters;
  eval.max_iters = options.max_iters;
  eval.time_budget_s = options.time_budget_s;
  eval.trials = options.trials;
  eval.call_timeout_s = options.timeout_s;
  eval.mem_limit_mb = options.mem_limit_mb;
  eval.seed = options.seed;
  eval.worker_exe = worker_executable();
  eval.cache_dir = default_cache_dir();

  // Open the store first: a bad --db must fail before minutes of evaluation, not after.
  ResultStore store = open_store(options.db);
  const PeakReport peaks = machine_peaks(options.threads).peaks;
  std::string expert_name;
  if (options.expert) {
    const std::optional<experts::ExpertKernel> expert =
        experts::find_expert(experts::default_experts_dir(), *eval.workload);
    if (!expert)
      throw UsageError(std::string(eval.workload->name) + " has no expert in " +
                       experts::default_experts_dir());
    const experts::Config config =
        experts::config_for_run(store, *expert, options.size, options.threads).config;
    eval.candidate_path = experts::write_configured_source(*expert, config, eval.cache_dir);
    expert_name = experts::point_name(*expert, config);
  }
  resolve_baseline(eval);
  ProgressLine progress(std::string(eval.workload->name));
  eval.progress = [&](const std::string& line) { progress.update(line); };
  EvalResult result = evaluate(eval, peaks);
  progress.update("");
  if (!expert_name.empty()) result.candidate_path = expert_name;
  if (!options.no_record) result.id = store.record(result, current_environment());

  print_result(result, options.json);
  return 0;
}

}  // namespace kbench::cli
