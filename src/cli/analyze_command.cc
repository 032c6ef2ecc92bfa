// `kbench analyze -w ID -c FILE`: each innermost loop of a candidate's machine code, simulated on a
// model of this CPU (src/analysis/analyze.h). Nothing of the candidate runs.
#include <iostream>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "analysis/candidate_analysis.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "cli/shared_options.h"
#include "core/environment.h"
#include "experts/expert.h"

namespace kbench::cli {
namespace {

struct AnalyzeOptions {
  std::string workload;
  std::string candidate;
  bool expert = false;
  std::string size = "cpu";  // where the trips are counted
  bool static_only = false;  // no trip-count run
  std::string model;         // empty: the model for this CPU
  bool json = false;
};

int analyze_command(const AnalyzeOptions& options) {
  const Workload& w = workload_or_usage_error(options.workload);
  if (options.expert == !options.candidate.empty())
    throw UsageError("give exactly one of --candidate FILE or --expert");
  std::string candidate = options.candidate;
  if (options.expert) {
    const experts::ExpertKernel expert = expert_or_usage_error(w);
    candidate = experts::write_configured_source(expert, experts::default_config(expert),
                                                 kbench_cache_dir());
  } else {
    candidate_file_or_usage_error(candidate);
  }
  EvalOptions eval;
  eval.workload = &w;
  eval.size = size_or_usage_error(options.size);
  eval.candidate_path = candidate;
  eval.worker_exe = worker_executable();
  eval.cache_dir = kbench_cache_dir();
  analysis::CandidateAnalysisOptions analysis_options;
  // The model is chosen (and its clock calibrated) against this machine's single-thread probe,
  // measured once per machine; --static reads the machine code alone.
  if (!options.static_only) analysis_options.peaks = machine_peaks(1).peaks;
  analysis_options.model = options.model;
  const analysis::Analysis a = analysis::analyze_candidate(eval, analysis_options);
  if (options.json) {
    nlohmann::json j = analysis::to_json(a);
    j["workload"] = w.name;
    j["candidate"] = options.expert ? "expert (default configuration)" : candidate;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << w.name << ", " << (options.expert ? "expert" : candidate) << ": "
              << analysis::to_text(a);
  }
  return 0;
}

}  // namespace

Subcommand add_analyze_command(CLI::App& app) {
  auto options = std::make_shared<AnalyzeOptions>();
  auto* cmd = app.add_subcommand(
      "analyze", "Where a candidate's cycles go: its innermost loops, simulated by llvm-mca");
  add_workload_option(cmd, options->workload);
  cmd->add_option("--candidate,-c", options->candidate, "Candidate C++ source file");
  cmd->add_flag("--expert", options->expert,
                "Analyze the workload's expert (experts/) at its default configuration");
  add_size_option(cmd, options->size, "the one call whose loops' trips are counted");
  cmd->add_flag("--static", options->static_only,
                "Machine code only: no instrumented run, so no trip counts");
  cmd->add_option("--model", options->model,
                  "llvm-mca CPU model (default: chosen from this CPU's vendor and ISA and checked "
                  "against its probe)");
  add_json_flag(cmd, options->json, "one JSON object");
  return {cmd, [options] { return analyze_command(*options); }};
}

}  // namespace kbench::cli
