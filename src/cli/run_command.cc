// `kbench run`: the baseline pass over a suite, each baseline first checked against its reference,
// resumable: a rerun of a killed or failed pass times only the workloads it had not recorded.
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include "cli/baselines_markdown.h"
#include "core/number_format.h"

#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "cli/timing_options.h"
#include "core/environment.h"
#include "core/stop_signals.h"
#include "experts/tuner.h"
#include "harness/breakdown.h"
#include "harness/compiler.h"
#include "harness/evaluator.h"
#include "harness/noise.h"
#include "store/result_json.h"
#include "store/sinks.h"
#include "workloads/registry.h"

namespace kbench::cli {
namespace {

std::string number_text(double value) {
  return significant(value, 17);  // round-trips every double
}

// The command as a person would retype it (stored with the run, for reading the runs table).
std::string command_line(const RunCommandOptions& options,
                         const std::vector<const Workload*>& workloads) {
  std::string command = "kbench run";
  if (options.workloads.empty()) {
    command += " --suite " + options.suite;
  } else {
    for (const Workload* w : workloads) command += " -w " + std::string(w->id());
  }
  command += " --size " + options.timing.size + " --threads " +
             std::to_string(options.timing.threads) + " --warmup " +
             std::to_string(options.timing.warmup) + " --iters " +
             std::to_string(options.timing.iters) + " --max-iters " +
             std::to_string(options.timing.max_iters) + " --time-budget-s " +
             number_text(options.timing.time_budget_s);
  if (options.timing.seed) command += " --seed " + std::to_string(*options.timing.seed);
  return command;
}

// Everything that decides what the run's results are, canonically spelled: a rerun resumes an
// incomplete run only when its key is identical, so results timed under other settings, another
// kbench build or on another machine never mix into it. Output options (--json, --markdown, --xla)
// only change how the results are printed and are left out.
std::string run_key(const RunCommandOptions& options, const std::vector<const Workload*>& workloads,
                    Size size) {
  const Environment& env = current_environment();
  std::string key = "run/1 workloads=";
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    if (i) key += ',';
    key += workloads[i]->id();
  }
  key += std::string(" size=") + size_name(size) +
         " threads=" + std::to_string(options.timing.threads) +
         " warmup=" + std::to_string(options.timing.warmup) +
         " iters=" + std::to_string(options.timing.iters) +
         " max_iters=" + std::to_string(options.timing.max_iters) +
         " time_budget_s=" + number_text(options.timing.time_budget_s) +
         " seed=" + (options.timing.seed ? std::to_string(*options.timing.seed) : "fresh") +
         " experts=" + (options.no_experts ? "off" : "on") + " commit=" + env.kbench_commit +
         " build=" + env.build_type + " machine=" + env.machine_id() + " host=" + env.hostname;
  return key;
}

// The workload's expert through the gates of `kbench eval`, at this machine's tuned configuration
// (else the default), summarized into the run's record; its full evaluation is recorded on its own.
void attach_expert(EvalResult& run_result, const EvalOptions& run, ResultStore& store,
                   const PeakReport& peaks, bool record) {
  const std::optional<experts::ExpertKernel> expert =
      experts::find_expert(experts::default_experts_dir(), *run.workload);
  if (!expert) return;
  const experts::RunConfig chosen =
      experts::config_for_run(store, *expert, run_result.size, run.threads);
  EvalOptions eval = run;
  eval.candidate_path = experts::write_configured_source(*expert, chosen.config, run.cache_dir);
  if (run.progress) run.progress("expert");
  EvalResult r = evaluate(eval, peaks);
  if (run_result.baseline) mark_baseline_drift(r, run_result.baseline->median_ms);
  r.candidate_path = experts::point_name(*expert, chosen.config);
  if (record) store.record(r, current_environment());
  run_result.expert = experts::summarize(r, chosen.config, chosen.tuned);
}

// A failed write (disk full, database locked) ends the command with one line that also says how
// to continue.
template <typename Write>
void write_or_explain(std::int64_t run_id, const std::string& what, Write write) {
  try {
    write();
  } catch (const StoreError& e) {
    throw StoreError(std::string(e.what()) + "; " + what + ", run " + std::to_string(run_id) +
                     " incomplete: the same command resumes it");
  }
}

// Timed baseline runs a breakdown's medians are over: its parts are medians of a few runs, which
// the timed run before it has already warmed.
constexpr int kBreakdownRuns = 5;

nlohmann::json breakdown_json(const Breakdown& b) {
  nlohmann::json parts = nlohmann::json::array();
  for (const BreakdownPart& p : b.parts)
    parts.push_back({{"call", p.call},
                     {"calls_per_run", p.calls_per_run},
                     {"ms", p.ms},
                     {"share", b.share_of(p)},
                     {"in_parallel_region", p.in_parallel_region},
                     {"spread_over_threads", p.spread_over}});
  return {{"runs", b.runs},
          {"total_ms", b.total_ms},
          {"library_ms", b.library_ms},
          {"outside_library_share", b.outside_library_share()},
          {"parts", std::move(parts)}};
}

// Inputs the correctness gate already drew (so a --seed rerun reproduces the breakdown's too).
std::uint64_t breakdown_seed(const EvalResult& r) {
  return r.correctness.seeds.empty() ? 1 : r.correctness.seeds.front();
}

void print_breakdown(const std::string& workload, const Breakdown& b) {
  std::printf("breakdown %s: %s ms a run (median of %d), %s ms in library calls, %.1f%% outside\n",
              workload.c_str(), significant(b.total_ms, 4).c_str(), b.runs,
              significant(b.library_ms, 4).c_str(), 100.0 * b.outside_library_share());
  for (const BreakdownPart& p : b.parts)
    std::printf(
        "  %-58s x%-4d %10s ms %6.1f%%%s\n", p.call.c_str(), p.calls_per_run,
        significant(p.ms, 4).c_str(), 100.0 * b.share_of(p),
        p.spread_over > 0
            ? ("  (spread over " + std::to_string(p.spread_over) + " threads, one each)").c_str()
        : p.in_parallel_region ? "  (inside a parallel region: one thread)"
                               : "");
}

}  // namespace

int run_command(const RunCommandOptions& options) {
  const std::vector<const Workload*> workloads =
      selected_workloads(options.workloads, options.suite);
  const EvalOptions timed = timed_eval_options(options.timing);
  const Size size = timed.size;
  if (options.json && options.markdown)
    throw UsageError("--json and --markdown exclude each other");
  // Read before hours of timing, so a bad file fails first.
  const std::map<std::string, XlaTiming> xla_ms =
      options.xla.empty() ? std::map<std::string, XlaTiming>{}
                          : read_xla_times(options.xla, options.timing.size);
  ResultStore store = open_store(options.db);

  // Before the peaks are measured: a database that cannot be written fails here, in a second.
  std::optional<std::int64_t> run_id;
  std::map<std::string, EvalResult> recorded;  // by workload name, from an earlier attempt
  if (!options.no_record) {
    const ResultStore::RunStart start = store.begin_or_resume_run(run_key(options, workloads, size),
                                                                  command_line(options, workloads));
    run_id = start.id;
    if (start.resumed) {
      for (EvalResult& r : store.results_of_run(start.id)) {
        const std::string name = r.workload;
        recorded.emplace(name, std::move(r));
      }
      std::size_t done = 0;
      for (const Workload* w : workloads) done += recorded.count(std::string(w->name));
      std::fprintf(stderr, "kbench: resuming run %lld: %zu of %zu workloads already recorded\n",
                   static_cast<long long>(start.id), done, workloads.size());
    }
  }
  const PeakReport peaks = machine_peaks(options.timing.threads).peaks;

  std::vector<EvalResult> results;
  std::map<std::string, Breakdown> breakdowns;  // by workload name
  // SIGINT and SIGTERM (a batch system's time limit, `scancel`) let the workload in flight finish
  // and be recorded; the run stays open for the same command to resume.
  stop_between_units();
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    if (const int signal = stop_signal()) {
      std::fprintf(
          stderr, "kbench: stopped by %s after %zu of %zu workloads%s\n", stop_signal_name(signal),
          i, workloads.size(),
          run_id ? ("; run " + std::to_string(*run_id) + " is kept and the same command resumes it")
                       .c_str()
                 : "");
      return 128 + signal;
    }
    if (const auto earlier = recorded.find(std::string(workloads[i]->name));
        earlier != recorded.end()) {
      results.push_back(std::move(earlier->second));
      continue;
    }
    EvalOptions run = timed;
    run.workload = workloads[i];
    run.worker_exe = worker_executable();
    resolve_baseline(run);
    ProgressLine progress(std::to_string(i + 1) + "/" + std::to_string(workloads.size()) + " " +
                          std::string(workloads[i]->name));
    run.progress = [&](const std::string& line) { progress.update(line); };
    // A HarnessError ends the command here and leaves the run incomplete, so the rerun resumes.
    run.cache_dir = kbench_cache_dir();
    results.push_back(run_baseline(run, peaks));
    if (!options.no_experts) attach_expert(results.back(), run, store, peaks, run_id.has_value());
    if (options.breakdown && results.back().status == Status::kCorrect) {
      progress.update("breakdown");
      breakdowns.emplace(results.back().workload,
                         measure_breakdown(*workloads[i], size, run.threads, run.library_plan,
                                           breakdown_seed(results.back()), kBreakdownRuns));
    }
    if (run_id) {
      write_or_explain(*run_id, results.back().workload + " not recorded", [&] {
        results.back().id = store.record(results.back(), current_environment(), run_id);
      });
    }
  }
  if (run_id) {
    write_or_explain(*run_id, "every result recorded", [&] { store.complete_run(*run_id); });
  }
  if (options.markdown) {
    std::string command = "kbench run";
    if (options.workloads.empty()) command += " --suite " + options.suite;
    for (const std::string& w : options.workloads) command += " -w " + w;
    command += " --size " + options.timing.size + " --threads " +
               std::to_string(options.timing.threads) + " --markdown";
    if (!options.xla.empty()) command += " --xla FILE";
    write_baselines_markdown(std::cout, results, peaks, xla_ms, command);
  } else if (options.json) {
    nlohmann::json array = nlohmann::json::array();
    for (const EvalResult& r : results) {
      array.push_back(to_json(r, {.include_samples = false, .include_source = false}));
      if (const auto b = breakdowns.find(r.workload); b != breakdowns.end())
        array.back()["breakdown"] = breakdown_json(b->second);
    }
    std::cout << dump_json(array, 2) << '\n';
  } else {
    write_results(std::cout, results, Format::kTable);
    for (const auto& [workload, b] : breakdowns) print_breakdown(workload, b);
    for (const EvalResult& r : results) {
      if (!r.expert) continue;
      const ExpertSummary& e = *r.expert;
      std::printf("expert %s (%s%s): %s", r.workload.c_str(), e.tuned ? "tuned " : "default ",
                  e.config.empty() ? "-" : e.config.c_str(), status_name(e.status));
      if (e.speedup && e.median_ms)
        std::printf(" %.4g ms, %.3fx the baseline%s%s", *e.median_ms, *e.speedup,
                    e.speedup_verdict.empty() ? "" : ", ", e.speedup_verdict.c_str());
      if (!e.unstable_reason.empty()) std::printf(" (%s)", e.unstable_reason.c_str());
      if (!e.error.empty()) std::printf(": %s", e.error.c_str());
      std::printf("\n");
    }
  }
  return 0;
}

Subcommand add_run_command(CLI::App& app) {
  auto run = std::make_shared<RunCommandOptions>();
  auto* run_cmd =
      app.add_subcommand("run", "Time the baselines (each checked against its reference first)");
  add_workloads_option(run_cmd, run->workloads, "the suite");
  run_cmd->add_option("--suite", run->suite, "all, production or kernelbench")
      ->capture_default_str();
  add_timing_options(run_cmd, run->timing, "calls", " per workload");
  add_json_flag(run_cmd, run->json, "one JSON object");
  run_cmd->add_flag("--markdown", run->markdown,
                    "Print docs/baselines.md's table (machine, sizes, roofline, XLA:CPU, TPU)");
  run_cmd
      ->add_option("--xla", run->xla,
                   "XLA:CPU timings for --markdown (scripts/xla-peer.sh --json FILE)")
      ->type_name("FILE");
  run_cmd->add_flag("--no-experts", run->no_experts,
                    "Do not evaluate the expert kernels beside their baselines");
  add_no_record_flag(run_cmd, run->no_record, "the results");
  run_cmd->add_flag("--breakdown", run->breakdown,
                    "Split each baseline's time into its library calls and the passes between "
                    "them (measured after the timed run, not recorded)");
  add_db_option(run_cmd, run->db);
  return {run_cmd, [run] { return run_command(*run); }};
}

}  // namespace kbench::cli
