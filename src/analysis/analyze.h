// `kbench analyze`: where a kernel's cycles go, read off its machine code. Each innermost loop of
// the compiled candidate, with its source lines, is simulated by llvm-mca on a model of this CPU:
// cycles per iteration and the resource, dependency chain or front end that bounds them, and the
// warnings a kernel writer acts on. Static: nothing of the candidate runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/asm_loops.h"
#include "analysis/calibration.h"
#include "analysis/confined_steps.h"
#include "analysis/mca.h"
#include "harness/eval_result.h"

namespace kbench::analysis {

struct LoopReport {
  AsmLoop loop;
  LoopCost cost;
  std::vector<std::string> warnings;
  std::optional<std::int64_t> trips;  // iterations over one call, where counted
  double cycles = 0;                  // cycles_per_iter * trips
  double share = 0;                   // of the counted loops' cycles
  double predicted_ms = 0;            // cycles at the calibrated clock
};

struct Analysis {
  std::string model;           // llvm-mca's -mcpu
  std::string model_reason;    // why that model
  std::string candidate_file;  // the analyzed source's file name: its loops' own lines
  std::vector<LoopReport> loops;
  std::string loops_error;                 // why no loop could be simulated, if none could
  std::string trips_size;                  // the size the trips were counted at; empty: not counted
  std::string trips_error;                 // why they could not be counted
  std::optional<Calibration> calibration;  // with the trips: the clock that turns cycles into ms
  double predicted_ms = 0;                 // the counted loops' cycles at that clock
  std::optional<double> measured_ms;       // the fastest of a few calls of the candidate itself
  std::string timing_error;                // why it was not timed
  // The workload's roofline at the size timed, and the measured time against it.
  std::optional<Utilization> roofline;
  // Each step that built, simulated or ran the candidate's text, in the order they ran.
  std::vector<ConfinedStep> sandbox;
};

// Every innermost loop of `assembly` simulated on `model`.
Analysis analyze_assembly(std::string_view assembly, const std::string& model,
                          const std::string& model_reason);

// The loops' trip counts (in analysis.loops' order) counted at `size`: each loop's cycles over
// the call and its share of all loops' cycles, loops sorted by it.
void attach_trips(Analysis& analysis, const std::vector<std::int64_t>& trips,
                  const std::string& size);

// Each counted loop's cycles at the calibrated clock, their total, and what share of
// `measured_ms` they explain.
void attach_timing(Analysis& analysis, const Calibration& calibration,
                   std::optional<double> measured_ms);

// "40-44, 52" of the sorted line numbers 40, 41, 42, 43, 44, 52 with `separator` ", ".
std::string line_ranges(const std::vector<int>& lines, std::string_view separator);

// "8p_GEMM.cpp:40-44,52 blocked_gemm.h:118": a loop's lines, by file, runs of lines joined; the
// system's headers (intrinsics, the standard library) left out.
std::string lines_text(const std::vector<SourceLine>& lines);

// A demangled function name without return type, parameters and anonymous namespaces:
// "void (anonymous namespace)::f<int>(float*)" -> "f<int>".
std::string short_function_name(std::string name);

// Each loop's "lines" (lines_text) and, where the analysis names its candidate file,
// "candidate_lines": the loop's line numbers in that file, for quoting them from the source.
nlohmann::json to_json(const Analysis& analysis);
std::string to_text(const Analysis& analysis);

}  // namespace kbench::analysis
