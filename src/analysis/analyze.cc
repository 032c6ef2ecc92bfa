#include "analysis/analyze.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "core/environment.h"
#include "core/number_format.h"

namespace kbench::analysis {
namespace {

int stack_accesses(const std::vector<std::string>& instructions) {
  int count = 0;
  for (const std::string& instruction : instructions)
    if (instruction.find("(%rsp)") != std::string::npos ||
        instruction.find("(%rbp)") != std::string::npos)
      ++count;
  return count;
}

std::vector<std::string> warnings_of(const AsmLoop& loop, const LoopCost& cost) {
  std::vector<std::string> warnings;
  if (loop.uses_amx)
    warnings.push_back("AMX instructions: llvm-mca does not model them (default latency)");
  if (loop.has_call)
    warnings.push_back("a call inside the loop: the callee's cycles are not counted");
  if (const int stack = stack_accesses(loop.instructions); stack > 0)
    warnings.push_back(std::to_string(stack) +
                       " stack accesses per iteration: spilled registers in a hot loop?");
  if (loop.vector_bits == 256 && cpu_has("avx512f"))
    warnings.push_back("ymm code on a CPU with zmm registers");
  if (loop.vector_bits == 0 && !loop.uses_amx)
    warnings.push_back("scalar code: no packed vector instruction");
  if (cost.bound.starts_with("latency chain") && !loop.uses_amx)
    warnings.push_back(
        "latency-bound: " + fixed(cost.cycles_per_iter, 2) +
        " cycles per iteration where the ports allow " + fixed(cost.block_rthroughput, 2) +
        (cost.accumulator_chain
             ? "; the chain runs from one iteration into the next: independent accumulators "
               "would overlap it"
             : "; a long chain within each iteration, which the out-of-order window does not "
               "overlap enough"));
  return warnings;
}

}  // namespace

std::string short_function_name(std::string name) {
  constexpr std::string_view kAnonymous = "(anonymous namespace)::";
  for (auto at = name.find(kAnonymous); at != std::string::npos; at = name.find(kAnonymous))
    name.erase(at, kAnonymous.size());
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++depth;
    if (c == '>') --depth;
    if (depth == 0 && c == ' ') start = i + 1;
    if (depth == 0 && c == '(' && i > start) return name.substr(start, i - start);
  }
  return name.substr(start);
}

Analysis analyze_assembly(std::string_view assembly, const std::string& model,
                          const std::string& model_reason) {
  Analysis analysis;
  analysis.model = model;
  analysis.model_reason = model_reason;
  for (AsmLoop& loop : innermost_loops(assembly)) {
    LoopReport report;
    try {
      report.cost = simulate_loop(loop.instructions, model);
      record_step(analysis.sandbox, "llvm-mca", {report.cost.layers, report.cost.missing});
    } catch (const std::runtime_error& e) {
      analysis.loops_error = e.what();
      continue;
    }
    report.warnings = warnings_of(loop, report.cost);
    report.loop = std::move(loop);
    analysis.loops.push_back(std::move(report));
  }
  if (!analysis.loops.empty()) analysis.loops_error.clear();
  return analysis;
}

void attach_trips(Analysis& analysis, const std::vector<std::int64_t>& trips,
                  const std::string& size) {
  analysis.trips_size = size;
  double total = 0;
  for (std::size_t i = 0; i < analysis.loops.size() && i < trips.size(); ++i) {
    LoopReport& r = analysis.loops[i];
    r.trips = trips[i];
    r.cycles = r.trips ? r.cost.cycles_per_iter * static_cast<double>(*r.trips) : 0;
    total += r.cycles;
  }
  for (LoopReport& r : analysis.loops) r.share = total > 0 ? r.cycles / total : 0;
  std::stable_sort(analysis.loops.begin(), analysis.loops.end(),
                   [](const LoopReport& a, const LoopReport& b) { return a.cycles > b.cycles; });
}

namespace {

bool has_bf16_dot_products(const LoopReport& report) {
  return std::any_of(report.loop.instructions.begin(), report.loop.instructions.end(),
                     [](const std::string& i) { return mnemonic_of(i) == "vdpbf16ps"; });
}

// The fewest milliseconds the loop's vdpbf16ps can take over its trips at the rate the probe
// measured (4 flops per f32 lane: 64 for a zmm instruction, 32 for ymm, 16 for xmm); 0 without
// such instructions, trips or a measured rate. Counting flops, not instructions, keeps it a floor
// should narrower forms issue faster than the probe's zmm loop.
double bf16_dot_floor_ms(const LoopReport& r, const Calibration& calibration) {
  if (!r.trips || !calibration.bf16_dot || !(calibration.bf16_dot->probe_gflops > 0)) return 0;
  double flops_per_iter = 0;
  for (const std::string& instruction : r.loop.instructions) {
    if (mnemonic_of(instruction) != "vdpbf16ps") continue;
    flops_per_iter += instruction.find("%zmm") != std::string::npos   ? 64
                      : instruction.find("%ymm") != std::string::npos ? 32
                                                                      : 16;
  }
  return flops_per_iter * static_cast<double>(*r.trips) /
         (calibration.bf16_dot->probe_gflops * 1e6);
}

}  // namespace

void attach_timing(Analysis& analysis, const Calibration& calibration,
                   std::optional<double> measured_ms) {
  analysis.calibration = calibration;
  analysis.measured_ms = measured_ms;
  analysis.predicted_ms = 0;
  for (LoopReport& r : analysis.loops) {
    const double model_ms =
        r.trips ? r.cycles / (calibration.clock_for(r.loop.vector_bits) * 1e6) : 0;
    // LLVM's models issue vdpbf16ps up to 4x faster than Intel's cores do: no loop of them is
    // predicted faster than the probe measured the instruction to run.
    const double floor_ms = bf16_dot_floor_ms(r, calibration);
    r.predicted_ms = std::max(model_ms, floor_ms);
    analysis.predicted_ms += r.predicted_ms;
    if (has_bf16_dot_products(r) && calibration.bf16_dot && !calibration.bf16_warning.empty()) {
      std::string warning = "vdpbf16ps: the model runs it " +
                            fixed(calibration.bf16_dot->ratio(), 2) +
                            "x as fast as the probe measures";
      if (floor_ms > model_ms)
        warning += "; at the probe's rate this loop takes " + fixed(floor_ms, 3) +
                   " ms, the time counted, not the model's " + fixed(model_ms, 3);
      r.warnings.push_back(warning);
    }
  }
}

std::string line_ranges(const std::vector<int>& lines, std::string_view separator) {
  std::string text;
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    if (i > 0) text += separator;
    text += std::to_string(lines[i]);
    if (j > i) text += '-' + std::to_string(lines[j]);
    i = j + 1;
  }
  return text;
}

std::string lines_text(const std::vector<SourceLine>& lines) {
  std::map<std::string, std::vector<int>> by_file;
  for (const SourceLine& l : lines)
    if (!l.file.starts_with("/usr/"))  // the compiler's and libraries' headers: intrinsics, STL
      by_file[std::filesystem::path(l.file).filename().string()].push_back(l.line);
  std::string text;
  for (const auto& [file, numbers] : by_file) {
    if (!text.empty()) text += ' ';
    text += file + ':' + line_ranges(numbers, ",");
  }
  return text;
}

nlohmann::json to_json(const Analysis& analysis) {
  nlohmann::json loops = nlohmann::json::array();
  for (const LoopReport& r : analysis.loops)
    loops.push_back(
        {{"function", r.loop.function},
         {"lines", lines_text(r.loop.lines)},
         {"vector_bits", r.loop.vector_bits},
         {"instructions", r.loop.instructions.size()},
         {"cycles_per_iter", r.cost.cycles_per_iter},
         {"block_rthroughput", r.cost.block_rthroughput},
         {"bound", r.cost.bound},
         {"trips", r.trips ? nlohmann::json(*r.trips) : nlohmann::json()},
         {"cycles", r.trips ? nlohmann::json(r.cycles) : nlohmann::json()},
         {"share", r.trips ? nlohmann::json(r.share) : nlohmann::json()},
         {"predicted_ms",
          r.trips && analysis.calibration ? nlohmann::json(r.predicted_ms) : nlohmann::json()},
         {"warnings", r.warnings}});
  if (!analysis.candidate_file.empty())
    for (std::size_t i = 0; i < analysis.loops.size(); ++i) {
      std::vector<int> own;
      for (const SourceLine& l : analysis.loops[i].loop.lines)
        if (std::filesystem::path(l.file).filename() == analysis.candidate_file)
          own.push_back(l.line);
      loops[i]["candidate_lines"] = own;
    }
  nlohmann::json j = {{"model", analysis.model},
                      {"model_reason", analysis.model_reason},
                      {"tool", llvm_mca_tool()},
                      {"loops", loops}};
  if (!analysis.loops_error.empty()) j["error"] = analysis.loops_error;
  j["trips_size"] =
      analysis.trips_size.empty() ? nlohmann::json() : nlohmann::json(analysis.trips_size);
  if (!analysis.trips_error.empty()) j["trips_error"] = analysis.trips_error;
  j["clock_ghz"] = nullptr;
  j["predicted_ms"] = nullptr;
  j["measured_ms"] = analysis.measured_ms ? nlohmann::json(*analysis.measured_ms) : nullptr;
  j["explained_pct"] = nullptr;
  if (const auto& c = analysis.calibration) {
    j["clock_ghz"] = c->clock_ghz;
    j["calibration"] = {{"probe_isa", c->isa},
                        {"probe_fp32_gflops", c->probe_gflops},
                        {"model_fp32_flops_per_cycle", c->model_flops_per_cycle}};
    if (!c->warning.empty()) j["calibration"]["warning"] = c->warning;
    if (c->ymm_clock_ghz) {
      j["calibration"]["probe_fp32_ymm_gflops"] = *c->probe_ymm_gflops;
      j["calibration"]["ymm_clock_ghz"] = *c->ymm_clock_ghz;
    }
    if (const auto& dot = c->bf16_dot) {
      j["calibration"]["bf16_dot"] = {{"probe_gflops", dot->probe_gflops},
                                      {"model_flops_per_cycle", dot->model_flops_per_cycle},
                                      {"model_gflops", dot->model_gflops},
                                      {"ratio", dot->ratio()}};
      if (!c->bf16_warning.empty()) j["calibration"]["bf16_dot"]["warning"] = c->bf16_warning;
    }
    j["predicted_ms"] = analysis.predicted_ms;
    if (analysis.measured_ms && *analysis.measured_ms > 0)
      j["explained_pct"] = 100 * analysis.predicted_ms / *analysis.measured_ms;
  }
  if (!analysis.timing_error.empty()) j["timing_error"] = analysis.timing_error;
  j["roofline"] = nullptr;
  if (const auto& u = analysis.roofline; u && !u->bound.empty())
    j["roofline"] = {{"ms", u->roofline_ms},
                     {"bound", u->bound},
                     {"compute_gflops", u->peak_gflops},
                     {"compute_unit", u->peak_flops_kind},
                     {"bandwidth_gbps", u->peak_gbps},
                     {"pct_of_measured", u->pct_roofline}};
  j["sandbox"] = to_json(analysis.sandbox);
  return j;
}

std::string to_text(const Analysis& analysis) {
  std::string text = "model " + analysis.model + " (" + analysis.model_reason + "), " +
                     llvm_mca_tool() + "; " + std::to_string(analysis.loops.size()) +
                     " innermost loops\n";
  if (!analysis.loops_error.empty()) text += "no loop simulated: " + analysis.loops_error + "\n";
  if (!analysis.trips_size.empty())
    text += "trips counted over one call at " + analysis.trips_size + " size; loops by cycles\n";
  if (!analysis.trips_error.empty()) text += "trips not counted: " + analysis.trips_error + "\n";
  if (const auto& c = analysis.calibration) {
    text += "clock " + fixed(c->clock_ghz, 2) + " GHz (the probe's " + fixed(c->probe_gflops, 1) +
            " GFLOP/s fp32 " + c->isa + " over the model's " + fixed(c->model_flops_per_cycle, 1) +
            " flops/cycle); loops predict " + fixed(analysis.predicted_ms, 3) + " ms";
    if (analysis.measured_ms && *analysis.measured_ms > 0)
      text += ", measured " + fixed(*analysis.measured_ms, 3) + " ms: loops explain " +
              fixed(100 * analysis.predicted_ms / *analysis.measured_ms, 0) + "%";
    text += "\n";
    if (c->ymm_clock_ghz)
      text += "ymm, xmm and scalar loops at " + fixed(*c->ymm_clock_ghz, 2) + " GHz (the probe's " +
              fixed(*c->probe_ymm_gflops, 1) + " GFLOP/s at 256 bits)\n";
    if (!c->warning.empty()) text += "! " + c->warning + "\n";
    // Only where it matters: a loop of bf16 dot products, whose own line says so too.
    if (!c->bf16_warning.empty() &&
        std::any_of(analysis.loops.begin(), analysis.loops.end(), has_bf16_dot_products))
      text += "! " + c->bf16_warning + "\n";
  }
  if (!analysis.timing_error.empty()) text += "not timed: " + analysis.timing_error + "\n";
  text += to_text(analysis.sandbox);
  if (const auto& u = analysis.roofline; u && !u->bound.empty())
    text += "roofline " + fixed(u->roofline_ms, 3) + " ms, " + u->bound + "-bound (" +
            fixed(u->peak_gflops, 1) + " GFLOP/s " + u->peak_flops_kind + ", " +
            fixed(u->peak_gbps, 1) + " GB/s): the candidate runs at " + fixed(u->pct_roofline, 1) +
            "% of it\n";
  char row[512];
  std::snprintf(row, sizeof row, "%-4s %9s %9s %5s %12s %6s  %-28s %s\n", "loop", "cyc/iter",
                "ports", "bits", "trips", "share", "bound", "function  lines");
  text += row;
  for (std::size_t i = 0; i < analysis.loops.size(); ++i) {
    const LoopReport& r = analysis.loops[i];
    const std::string function = short_function_name(r.loop.function);
    const std::string trips = r.trips ? std::to_string(*r.trips) : "-";
    const std::string share = r.trips ? fixed(100 * r.share, 1) + "%" : "-";
    std::snprintf(row, sizeof row, "%-4zu %9.2f %9.2f %5d %12s %6s  %-28s %s  %s\n", i + 1,
                  r.cost.cycles_per_iter, r.cost.block_rthroughput, r.loop.vector_bits,
                  trips.c_str(), share.c_str(), r.cost.bound.c_str(), function.c_str(),
                  lines_text(r.loop.lines).c_str());
    text += row;
    // A loop that takes under 1% of the counted cycles is not where a writer's time goes.
    if (!r.trips || r.share >= 0.01)
      for (const std::string& w : r.warnings) text += "       ! " + w + "\n";
  }
  return text;
}

}  // namespace kbench::analysis
