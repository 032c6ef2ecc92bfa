// `kbench agent`: one method over one or more workloads, every sample evaluated by the standard
// pipeline and stored; a rerun of the same command resumes an interrupted run from the database.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agents/agent_driver.h"
#include "agents/context_artifact.h"
#include "agents/methods.h"
#include "agents/metrics.h"
#include "agents/report.h"
#include "analysis/candidate_analysis.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/environment.h"
#include "core/sha256.h"
#include "core/stop_signals.h"
#include "harness/compiler.h"
#include "harness/executor.h"

namespace kbench::cli {
namespace {

void check_agent_options(const AgentOptions& o) {
  const auto& names = agents::method_names();
  if (o.method.empty())
    throw UsageError("--method is required (best-of-n, iterative, iterative-context or beam)");
  if (std::find(names.begin(), names.end(), o.method) == names.end())
    throw UsageError("unknown method '" + o.method +
                     "' (best-of-n, iterative, iterative-context or beam)");
  if (o.workloads.empty()) throw UsageError("--workload is required");
  if (o.llm.model.empty()) throw UsageError("--model is required");
  if (o.llm.provider != "openai" && o.llm.provider != "anthropic")
    throw UsageError("unknown provider '" + o.llm.provider + "' (openai or anthropic)");
  base_url_or_usage_error("--base-url", o.llm.base_url);
  if (o.samples < 1 || o.samples > 10000) throw UsageError("--samples must be between 1 and 10000");
  if (o.beam_width < 1 || o.plans < 1 || o.implementations < 1)
    throw UsageError("--beam-width, --plans and --implementations must be at least 1");
  if (!(o.menu_dropout >= 0 && o.menu_dropout < 1))
    throw UsageError("--menu-dropout must be in [0, 1)");
  if (o.jobs < 0) throw UsageError("--jobs must be at least 0");
  if (o.llm.max_concurrency < 1) throw UsageError("--max-concurrency must be at least 1");
  seconds_or_usage_error("--request-timeout-s", o.llm.timeout_s, kShortestTimeoutS, kLongestCallS);
  if (o.llm.max_retries < 0) throw UsageError("--max-retries must be at least 0");
  if (o.max_tokens < 1) throw UsageError("--max-tokens must be at least 1");
  if (!(o.temperature >= 0 && o.temperature <= 2))
    throw UsageError("--temperature must be in [0, 2]");
  seconds_or_usage_error("--time-budget-s", o.time_budget_s, 0, kLongestBudgetS);
  // The summary is written when the run ends, maybe hours later: a path it cannot go to fails now.
  if (!o.json.empty()) {
    namespace fs = std::filesystem;
    const fs::path summary(o.json);
    const fs::path dir = summary.has_parent_path() ? summary.parent_path() : fs::path(".");
    std::error_code ec;
    if (fs::is_directory(summary, ec))
      throw UsageError("--json '" + o.json + "' is a directory; give the summary file's path");
    if (!fs::is_directory(dir, ec))
      throw UsageError("--json '" + o.json + "': there is no directory '" + dir.string() +
                       "' to write it in");
  }
}

// Everything that determines the run's samples: a rerun with the same key resumes it.
std::string run_key(const AgentOptions& o, const std::vector<std::string>& workloads,
                    const std::string& target) {
  std::string key =
      std::string(kAgentRunKeyPrefix) + "method=" + o.method + " provider=" + o.llm.provider +
      " base_url=" + o.llm.base_url + " model=" + o.llm.model + " size=" + o.size +
      " samples=" + std::to_string(o.samples) + " threads=" + std::to_string(o.threads) +
      " time_budget_s=" + std::to_string(o.time_budget_s) + " workloads=";
  for (const std::string& w : workloads) key += w + ",";
  if (o.method == "beam")
    key += " beam=" + std::to_string(o.beam_width) + "x" + std::to_string(o.plans) + "x" +
           std::to_string(o.implementations) + " dropout=" + std::to_string(o.menu_dropout);
  if (agents::method_uses_context(o.method)) key += " target=" + target;
  key += " max_tokens=" + std::to_string(o.max_tokens) +
         " temperature=" + std::to_string(o.temperature);
  if (o.seed) key += " seed=" + std::to_string(*o.seed);
  if (o.analyze) key += " analyze";
  return key;
}

void write_summary(const std::string& path, const std::string& text, std::int64_t run_id) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (!out || !out.flush())
    throw std::runtime_error("cannot write the summary to '" + path +
                             "' (the run is complete in the database: kbench agent report --run " +
                             std::to_string(run_id) + " --format json writes it)");
}

void print_sample(const AgentSample& s) {
  std::string line = "[" + s.method + " " + s.workload + " #" + std::to_string(s.index) +
                     " round " + std::to_string(s.round) + "] " + s.status;
  if (s.speedup) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " %.3gx", *s.speedup);
    line += buf;
    if (!s.speedup_verdict.empty()) line += " (" + s.speedup_verdict + ")";
  } else if (!s.error.empty()) {
    line += ": " + s.error.substr(0, 160);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace

int agent_command(const AgentOptions& options) {
  check_agent_options(options);
  const Size size = size_or_usage_error(options.size);
  threads_or_usage_error(options.threads);
  std::vector<std::string> workloads;
  for (const std::string& w : options.workloads)
    workloads.emplace_back(workload_or_usage_error(w).name);

  agents::ProviderOptions provider_options = options.llm;

  // The context artifact: its text for the methods that use it, its menu for the beam.
  const std::string target = options.target.empty() ? agents::detect_target() : options.target;
  std::string context_text;
  std::vector<std::string> menu;
  if (agents::method_uses_context(options.method)) {
    const agents::ContextArtifact artifact = agents::load_context(
        options.context_dir.empty() ? agents::default_context_dir() : options.context_dir, target);
    context_text = agents::context_prompt_text(artifact);
    menu = agents::optimization_menu(artifact);
  }

  ResultStore store = open_store(options.db);
  const std::string key = run_key(options, workloads, target);
  std::string command = "kbench agent --method " + options.method + " --model " + options.llm.model;
  for (const std::string& w : workloads) command += " --workload " + w;
  const ResultStore::RunStart run = store.begin_or_resume_run(key, command);
  std::fprintf(stderr, "kbench agent: %s run %lld (%s, %s)\n",
               run.resumed ? "resuming" : "starting", static_cast<long long>(run.id),
               options.method.c_str(), options.llm.model.c_str());

  // The request log sits beside the database unless named (an in-memory store has no beside).
  std::string& log = provider_options.request_log_path;
  log = options.request_log;
  if (log.empty() && store.path() != ":memory:")
    log = (std::filesystem::path(store.path()).parent_path() / "agent-logs" /
           ("run-" + std::to_string(run.id) + ".jsonl"))
              .string();
  if (!log.empty() && std::filesystem::path(log).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(log).parent_path());
  std::unique_ptr<agents::LlmProvider> llm;
  try {
    llm = agents::make_provider(provider_options);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  agents::MethodSettings settings;
  settings.samples = options.samples;
  settings.beam_width = options.beam_width;
  settings.plans = options.plans;
  settings.implementations = options.implementations;
  settings.menu_dropout = options.menu_dropout;
  // Without --seed the seed still follows from the key, so a resumed run draws as the first did.
  settings.seed = options.seed.value_or(std::stoull(sha256_hex(key).substr(0, 15), nullptr, 16));
  settings.menu = menu;

  const PeakReport peaks = machine_peaks(options.threads).peaks;
  // The analysis runs its candidate on one thread, calibrated against the one-thread probe.
  std::optional<PeakReport> analysis_peaks;
  if (options.analyze) analysis_peaks = machine_peaks(1).peaks;
  agents::SampleJournal journal(store, run.id, current_environment());
  // SIGINT and SIGTERM let the batch in flight finish and be recorded (AgentDriver::run).
  stop_between_units();
  for (const std::string& name : workloads) {
    const Workload& workload = workload_or_usage_error(name);
    EvalOptions eval =
        resolved_eval_options(workload, size, options.threads, options.time_budget_s);
    const std::string work_dir = (std::filesystem::path(kbench_cache_dir()) / "agent-runs" /
                                  ("run-" + std::to_string(run.id)) / name)
                                     .string();
    LocalPoolExecutor executor(eval, peaks, work_dir, options.jobs);
    if (analysis_peaks)
      executor.set_followup([&analysis_peaks](const EvalOptions& evaluated, EvalResult& result) {
        if (result.status == Status::kCorrect)
          result.analysis_json =
              analysis::analysis_record(evaluated, {.peaks = analysis_peaks}).json;
      });
    agents::AgentDriver driver(*llm, executor, journal,
                               {run.id, options.method, name, options.size, options.llm.model},
                               options.max_tokens, options.temperature, print_sample);
    agents::TaskDescription task;
    task.workload = &workload;
    task.size = size;
    task.threads = options.threads;
    task.target = target;
    task.context_text = context_text;
    try {
      agents::run_method(options.method, driver, task, settings);
    } catch (const agents::RunStopped& stopped) {
      std::fprintf(stderr,
                   "kbench agent: stopped by %s; run %lld is kept and the same command resumes "
                   "it\n",
                   stop_signal_name(stopped.signal), static_cast<long long>(run.id));
      return 128 + stopped.signal;
    } catch (const agents::RunAborted& e) {
      throw std::runtime_error(std::string(e.what()) + " (run " + std::to_string(run.id) +
                               " is kept; the same command resumes it)");
    }
  }
  store.complete_run(run.id);
  if (journal.replayed() > 0)
    std::fprintf(stderr, "kbench agent: %d sample(s) replayed from the database\n",
                 journal.replayed());

  const agents::AgentMetrics metrics = agents::compute_metrics(store.agent_samples({run.id}));
  std::cout << agents::metrics_markdown(metrics);
  if (!options.json.empty())
    write_summary(options.json, agents::metrics_json(metrics).dump(2) + "\n", run.id);
  return 0;
}

}  // namespace kbench::cli
