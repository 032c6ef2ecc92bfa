#include "analysis/candidate_analysis.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/calibration.h"
#include "analysis/trip_counts.h"
#include "core/terminal_text.h"
#include "core/text.h"
#include "harness/compiler.h"
#include "harness/roofline.h"
#include "harness/single_call.h"

namespace kbench::analysis {
namespace {

// The compiler's first lines: the first error is what a writer fixes first. Each line is made
// safe to print and clipped, whatever bytes the "source" held, and stays a line of its own.
std::string first_lines_safe(std::string_view text, std::size_t lines) {
  constexpr std::size_t kMaxLineBytes = 400;
  const std::vector<std::string_view> all = split_lines(text);
  std::string shown;
  for (std::size_t n = 0; n < std::min(lines, all.size()); ++n)
    shown += terminal_safe(clip_line(all[n], kMaxLineBytes)) + "\n";
  return shown;
}

// The candidate's own time at the size the trips were counted at: the fastest of five calls of
// its uninstrumented build. Sets a.timing_error where it cannot be timed.
std::optional<double> measured_ms(Analysis& a, const EvalOptions& eval) {
  CompileOptions compile;
  compile.cache_dir = eval.cache_dir;
  const CompileOutcome built = compile_candidate(eval.candidate_path, compile);
  if (!built.cached) record_step(a.sandbox, "build", {built.build_layers, built.build_missing});
  if (!built.ok) {
    a.timing_error = "the candidate does not build";
    return std::nullopt;
  }
  const CandidateCalls calls = call_candidate(eval, built.so_path, 1, 5);
  if (calls.sandbox) record_step(a.sandbox, "timed run", *calls.sandbox);
  if (!calls.ok()) {
    a.timing_error = calls.error;
    return std::nullopt;
  }
  return calls.best_seconds * 1e3;
}

// Where the build that failed ran less confined than it should, the failure says so: its
// diagnostics quote whatever the source made the compiler read.
std::string refusals_of(const std::vector<std::string>& missing) {
  std::string text;
  for (const std::string& refusal : missing) text += "the build ran without " + refusal + "\n";
  return text;
}

}  // namespace

Analysis analyze_candidate(const EvalOptions& base, const CandidateAnalysisOptions& options) {
  const AssemblyOutcome compiled = candidate_assembly(base.candidate_path, 120);
  if (!compiled.ok) {
    std::string message = "the candidate does not compile:\n" +
                          first_lines_safe(compiled.diagnostics, 20) +
                          refusals_of(compiled.build_missing);
    message.pop_back();  // the last line's newline: the caller ends the message
    throw std::runtime_error(message);
  }
  const std::optional<PeakReport>& peaks = options.peaks;
  ModelChoice choice = choose_model(peaks);
  if (!options.model.empty()) {
    choice.model = options.model;
    choice.reason = "given with --model";
    if (peaks) choice.calibration = calibrate(choice.model, *peaks);
  }
  Analysis a = analyze_assembly(compiled.assembly, choice.model, choice.reason);
  a.candidate_file = std::filesystem::path(base.candidate_path).filename().string();
  a.sandbox.insert(a.sandbox.begin(),
                   {"assembly build", 1, {compiled.build_layers, compiled.build_missing}});
  if (!a.loops_error.empty() && a.loops.empty())
    throw std::runtime_error("llvm-mca could not simulate the loops: " + a.loops_error);
  if (!peaks) return a;

  EvalOptions eval = base;
  eval.threads = 1;
  eval.call_timeout_s = options.call_timeout_s;
  std::vector<AsmLoop> loops;
  for (const LoopReport& r : a.loops) loops.push_back(r.loop);
  try {
    attach_trips(a, count_trips(compiled.assembly, loops, eval, 1, a.sandbox),
                 size_name(eval.size));
  } catch (const std::runtime_error& e) {
    a.trips_error = e.what();
  }
  if (a.trips_error.empty() && choice.calibration)
    attach_timing(a, *choice.calibration, measured_ms(a, eval));
  if (a.measured_ms)
    a.roofline = utilization_of(eval.workload->problem(eval.size), eval.workload->math,
                                *a.measured_ms, peaks);
  return a;
}

AnalysisRecord analysis_record(const EvalOptions& eval, const CandidateAnalysisOptions& options) {
  AnalysisRecord record;
  try {
    record.analysis = analyze_candidate(eval, options);
    record.json = to_json(*record.analysis).dump();
  } catch (const std::exception& e) {
    record.error = e.what();
    record.json = nlohmann::json{{"error", record.error}}.dump();
  }
  return record;
}

}  // namespace kbench::analysis
