// `kbench eval`: one candidate through the three gates, recorded in the store.
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "analysis/candidate_analysis.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "cli/timing_options.h"
#include "core/environment.h"
#include "experts/expert.h"
#include "experts/tuner.h"
#include "harness/checker.h"
#include "harness/compiler.h"
#include "harness/evaluator.h"

namespace kbench::cli {

int eval_command(const EvalCommandOptions& options) {
  EvalOptions eval = timed_eval_options(options.timing);
  eval.workload = &workload_or_usage_error(options.workload);
  if (int(options.aa) + int(options.expert) + int(!options.candidate.empty()) != 1)
    throw UsageError("give exactly one of --candidate FILE, --aa or --expert");
  if (!options.candidate.empty()) candidate_file_or_usage_error(options.candidate);
  if (options.trials < 1) throw UsageError("--trials must be at least 1");
  seconds_or_usage_error("--timeout-s", options.timeout_s, kShortestTimeoutS, kLongestCallS);
  // 0 or less used to mean no address-space limit at all; the candidate always has one.
  if (options.mem_limit_mb < 1) throw UsageError("--mem-limit-mb must be at least 1");
  eval.candidate_path = options.candidate;
  eval.baseline_as_candidate = options.aa;
  eval.trials = options.trials;
  eval.call_timeout_s = options.timeout_s;
  eval.mem_limit_mb = options.mem_limit_mb;
  eval.worker_exe = worker_executable();
  eval.cache_dir = kbench_cache_dir();

  // Every usage error before the machine is measured (seconds, on a new machine).
  std::optional<experts::ExpertKernel> expert;
  if (options.expert) expert = expert_or_usage_error(*eval.workload);
  // Open the store first: a bad --db must fail before minutes of evaluation, not after.
  ResultStore store = open_store(options.db);
  const PeakReport peaks = machine_peaks(eval.threads).peaks;
  std::string expert_name;
  if (expert) {
    const experts::Config config =
        experts::config_for_run(store, *expert, options.timing.size, eval.threads).config;
    eval.candidate_path = experts::write_configured_source(*expert, config, eval.cache_dir);
    expert_name = experts::point_name(*expert, config);
  }
  resolve_baseline(eval);
  ProgressLine progress(std::string(eval.workload->name));
  eval.progress = [&](const std::string& line) { progress.update(line); };
  EvalResult result = evaluate(eval, peaks);
  progress.update("");
  std::optional<analysis::Analysis> loops;
  if (options.analyze && !options.aa && result.status != Status::kCompileError) {
    progress.update("analyzing the candidate's loops");
    // The verdict stands whatever happens here: a failed analysis is said and recorded, not fatal.
    analysis::AnalysisRecord record =
        analysis::analysis_record(eval, {.peaks = machine_peaks(1).peaks});
    result.analysis_json = record.json;
    loops = std::move(record.analysis);
    if (!loops) std::cerr << "kbench: no analysis: " << record.error << "\n";
    progress.update("");
  }
  if (!expert_name.empty()) result.candidate_path = expert_name;
  if (!options.no_record) result.id = store.record(result, current_environment());

  print_result(result, options.json);
  if (loops && !options.json) std::cout << "\n" << analysis::to_text(*loops);
  return 0;
}

Subcommand add_eval_command(CLI::App& app) {
  auto eval = std::make_shared<EvalCommandOptions>();
  auto* eval_cmd = app.add_subcommand(
      "eval", "Evaluate a candidate: compiles? correct? faster than the baseline?");
  add_workload_option(eval_cmd, eval->workload);
  eval_cmd->add_option("--candidate,-c", eval->candidate, "Candidate C++ source file");
  eval_cmd->add_flag("--aa", eval->aa,
                     "A/A check: evaluate the baseline as a candidate against itself");
  eval_cmd->add_flag("--expert", eval->expert,
                     "Evaluate the workload's expert (experts/), at this machine's tuned "
                     "configuration or its default");
  eval_cmd->add_flag(
      "--analyze", eval->analyze,
      "Also report the candidate's loops as `kbench analyze` does (docs/analyze.md), "
      "recorded with the result");
  add_timing_options(eval_cmd, eval->timing, "pairs", "");
  eval_cmd
      ->add_option("--trials", eval->trials,
                   "Correctness input sets (fresh seeds); more where --iters would leave fewer "
                   "than " +
                       std::to_string(kMinCheckedDraws) +
                       " input sets checked in all (each timed pair's are checked too)")
      ->capture_default_str();
  eval_cmd->add_option("--timeout-s", eval->timeout_s, "Wall-time limit per kb_run call")
      ->capture_default_str();
  eval_cmd
      ->add_option("--mem-limit-mb", eval->mem_limit_mb,
                   "Address-space limit of the candidate's process")
      ->capture_default_str();
  add_json_flag(eval_cmd, eval->json, "the result as one JSON object");
  add_no_record_flag(eval_cmd, eval->no_record, "the result");
  add_db_option(eval_cmd, eval->db);
  return {eval_cmd, [eval] { return eval_command(*eval); }};
}

}  // namespace kbench::cli
