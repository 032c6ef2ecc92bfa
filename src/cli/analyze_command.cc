// `kbench analyze -w ID -c FILE`: each innermost loop of a candidate's machine code, simulated on a
// model of this CPU (src/analysis/analyze.h). Nothing of the candidate runs.
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "analysis/analyze.h"
#include "analysis/calibration.h"
#include "analysis/trip_counts.h"
#include "cli/commands.h"
#include "cli/context.h"
#include "core/environment.h"
#include "experts/expert.h"
#include "harness/compiler.h"
#include "harness/single_call.h"

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

// The compiler's first lines: the first error is what a writer fixes first.
std::string head_of(const std::string& text, std::size_t lines) {
  std::size_t at = 0;
  for (std::size_t n = 0; n < lines && at != std::string::npos; ++n) at = text.find('\n', at + 1);
  return at == std::string::npos ? text : text.substr(0, at + 1);
}

// The candidate's own time at the size the trips were counted at: the fastest of five calls of
// its uninstrumented build. Sets a.timing_error where it cannot be timed.
std::optional<double> measured_ms(analysis::Analysis& a, const EvalOptions& eval,
                                  const std::string& candidate) {
  CompileOptions compile;
  compile.cache_dir = kbench_cache_dir();
  const CompileOutcome built = compile_candidate(candidate, compile);
  std::string error = built.ok ? "" : "the candidate does not build";
  if (built.ok)
    if (const auto calls = call_candidate(eval, built.so_path, 1, 5, error))
      return calls->best_seconds * 1e3;
  a.timing_error = error;
  return std::nullopt;
}

int analyze_command(const AnalyzeOptions& options) {
  const Workload& w = workload_or_usage_error(options.workload);
  if (options.expert == !options.candidate.empty())
    throw UsageError("give exactly one of --candidate FILE or --expert");
  std::string candidate = options.candidate;
  if (options.expert) {
    const std::optional<experts::ExpertKernel> expert =
        experts::find_expert(experts::default_experts_dir(), w);
    if (!expert)
      throw UsageError(std::string(w.name) + " has no expert in " + experts::default_experts_dir());
    candidate = experts::write_configured_source(*expert, experts::default_config(*expert),
                                                 kbench_cache_dir());
  } else if (!std::filesystem::is_regular_file(candidate)) {
    throw UsageError("cannot read candidate " + candidate);
  }
  const AssemblyOutcome compiled = candidate_assembly(candidate, 120);
  if (!compiled.ok)
    throw std::runtime_error("the candidate does not compile:\n" +
                             head_of(compiled.diagnostics, 20));
  // The model is chosen (and its clock calibrated) against this machine's probe, measured once
  // per machine; --static reads the machine code alone.
  std::optional<PeakReport> peaks;
  if (!options.static_only) peaks = machine_peaks(1).peaks;
  analysis::ModelChoice choice =
      analysis::choose_model(peaks ? peaks->isa_used : "", peaks ? peaks->fp32_fma_gflops : 0);
  if (!options.model.empty()) {
    choice.model = options.model;
    choice.reason = "given with --model";
    if (peaks)
      choice.calibration =
          analysis::calibrate(choice.model, peaks->isa_used, peaks->fp32_fma_gflops);
  }
  analysis::Analysis a = analysis::analyze_assembly(compiled.assembly, choice.model, choice.reason);
  if (!a.loops_error.empty() && a.loops.empty())
    throw std::runtime_error("llvm-mca could not simulate the loops: " + a.loops_error);
  if (!options.static_only) {
    EvalOptions eval;
    eval.workload = &w;
    eval.size = size_or_usage_error(options.size);
    eval.threads = 1;
    eval.worker_exe = worker_executable();
    eval.call_timeout_s = 120;
    std::vector<analysis::AsmLoop> loops;
    for (const analysis::LoopReport& r : a.loops) loops.push_back(r.loop);
    try {
      analysis::attach_trips(a, analysis::count_trips(compiled.assembly, loops, eval, 1),
                             options.size);
    } catch (const std::runtime_error& e) {
      a.trips_error = e.what();
    }
    if (a.trips_error.empty() && choice.calibration)
      analysis::attach_timing(a, *choice.calibration, measured_ms(a, eval, candidate));
  }
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
  cmd->add_option("-w,--workload", options->workload, "Workload id or name")->required();
  cmd->add_option("-c,--candidate", options->candidate, "Candidate C++ file");
  cmd->add_flag("--expert", options->expert,
                "Analyze the workload's expert (experts/) at its default configuration");
  cmd->add_option("--size", options->size,
                  "Size whose one call counts the loops' trips (smoke, cpu, full)")
      ->capture_default_str();
  cmd->add_flag("--static", options->static_only,
                "Machine code only: no instrumented run, so no trip counts");
  cmd->add_option("--model", options->model,
                  "llvm-mca CPU model (default: chosen from this CPU's vendor and ISA and checked "
                  "against its probe)");
  cmd->add_flag("--json", options->json, "JSON output");
  return {cmd, [options] { return analyze_command(*options); }};
}

}  // namespace kbench::cli
