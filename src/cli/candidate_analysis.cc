#include "cli/candidate_analysis.h"

#include <optional>
#include <stdexcept>
#include <vector>

#include "analysis/calibration.h"
#include "analysis/trip_counts.h"
#include "cli/context.h"
#include "core/environment.h"
#include "harness/compiler.h"
#include "harness/single_call.h"
#include "store/sinks.h"

namespace kbench::cli {
namespace {

// The compiler's first lines: the first error is what a writer fixes first. (The verdict printer
// keeps them too; terminal_safe makes them safe to print, whatever bytes the "source" held.)
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

}  // namespace

analysis::Analysis analyze_candidate(const Workload& w, const std::string& candidate,
                                     const CandidateAnalysisOptions& options) {
  const AssemblyOutcome compiled = candidate_assembly(candidate, 120);
  if (!compiled.ok)
    throw std::runtime_error("the candidate does not compile:\n" +
                             terminal_safe(head_of(compiled.diagnostics, 20)));
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
  return a;
}

}  // namespace kbench::cli
