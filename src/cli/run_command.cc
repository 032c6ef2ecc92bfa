// `kbench run`: the baseline pass over a suite, each baseline first checked against its reference.
#include <iostream>
#include <map>
#include <string>

#include "cli/baselines_markdown.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/environment.h"
#include "harness/evaluator.h"
#include "store/result_json.h"
#include "store/sinks.h"
#include "workloads/registry.h"

namespace kbench::cli {
namespace {

std::vector<const Workload*> selected_workloads(const RunCommandOptions& options) {
  std::vector<const Workload*> chosen;
  if (!options.workloads.empty()) {
    for (const std::string& id : options.workloads) chosen.push_back(&workload_or_usage_error(id));
    return chosen;
  }
  if (options.suite != "all" && options.suite != "production" && options.suite != "kernelbench")
    throw UsageError("unknown suite '" + options.suite + "' (all, production or kernelbench)");
  for (const Workload* w : all_workloads()) {
    const bool in_suite = options.suite == "all" ||
                          (options.suite == "production") == (w->group == Group::kProduction);
    if (in_suite) chosen.push_back(w);
  }
  return chosen;
}

}  // namespace

int run_command(const RunCommandOptions& options) {
  const std::vector<const Workload*> workloads = selected_workloads(options);
  const Size size = size_or_usage_error(options.size);
  threads_or_usage_error(options.threads);
  if (options.iters < 1 || options.warmup < 0)
    throw UsageError("--iters must be at least 1, --warmup at least 0");
  if (options.max_iters < options.iters) throw UsageError("--max-iters must be at least --iters");
  if (!(options.time_budget_s >= 0)) throw UsageError("--time-budget-s must be at least 0");
  if (options.json && options.markdown)
    throw UsageError("--json and --markdown exclude each other");
  // Read before hours of timing, so a bad file fails first.
  const std::map<std::string, XlaTiming> xla_ms = options.xla.empty()
                                                   ? std::map<std::string, XlaTiming>{}
                                                   : read_xla_times(options.xla, options.size);
  ResultStore store = open_store(options.db);
  const PeakReport peaks = machine_peaks(store, options.threads);

  std::vector<EvalResult> results;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    EvalOptions run;
    run.workload = workloads[i];
    run.size = size;
    run.threads = options.threads;
    run.warmup = options.warmup;
    run.iters = options.iters;
    run.max_iters = options.max_iters;
    run.time_budget_s = options.time_budget_s;
    run.seed = options.seed;
    run.worker_exe = worker_executable();
    run.gemm_plan = baseline_gemm_plan(store, *run.workload, run.size, run.threads);
    ProgressLine progress(std::to_string(i + 1) + "/" + std::to_string(workloads.size()) + " " +
                          std::string(workloads[i]->name));
    run.progress = [&](const std::string& line) { progress.update(line); };
    results.push_back(run_baseline(run, peaks));
    if (!options.no_record) store.record(results.back(), current_environment());
  }
  if (options.markdown) {
    std::string command = "kbench run";
    if (options.workloads.empty()) command += " --suite " + options.suite;
    for (const std::string& w : options.workloads) command += " -w " + w;
    command +=
        " --size " + options.size + " --threads " + std::to_string(options.threads) + " --markdown";
    if (!options.xla.empty()) command += " --xla FILE";
    write_baselines_markdown(std::cout, results, peaks, xla_ms, command);
  } else if (options.json) {
    write_results(std::cout, results, Format::kJson,
                  {.include_samples = false, .include_source = false});
  } else {
    write_results(std::cout, results, Format::kTable);
  }
  return 0;
}

}  // namespace kbench::cli
