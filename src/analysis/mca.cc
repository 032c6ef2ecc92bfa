#include "analysis/mca.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/scratch_dir.h"
#include "harness/confined_command.h"

namespace kbench::analysis {
namespace {

// The number after `key` on the report's line that starts with it (leading blanks skipped), or
// `missing`.
double number_after(std::string_view report, std::string_view key, double missing) {
  for (std::size_t at = report.find(key); at != std::string_view::npos;
       at = report.find(key, at + 1)) {
    const std::size_t line_start = report.rfind('\n', at);
    const std::string_view before =
        report.substr(line_start == std::string_view::npos ? 0 : line_start + 1,
                      at - (line_start == std::string_view::npos ? 0 : line_start + 1));
    if (before.find_first_not_of(" -") != std::string_view::npos) continue;
    std::string rest(report.substr(at + key.size(), 64));
    const std::size_t digit = rest.find_first_of("0123456789");
    if (digit == std::string::npos) return missing;
    return std::strtod(rest.c_str() + digit, nullptr);
  }
  return missing;
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "Resources:" lists "[i] - Name" per column of the "Resource pressure per iteration:" table,
// whose second line holds each column's cycles ('-' for none).
void busiest_resource(std::string_view report, LoopCost& cost) {
  const std::vector<std::string> lines = lines_of(report);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == "Resources:") {
      for (std::size_t j = i + 1; j < lines.size() && lines[j].starts_with('['); ++j) {
        const std::size_t dash = lines[j].find("- ");
        if (dash != std::string::npos) names.push_back(lines[j].substr(dash + 2));
      }
    }
    if (lines[i] == "Resource pressure per iteration:" && i + 2 < lines.size()) {
      std::istringstream values(lines[i + 2]);
      std::string value;
      for (std::size_t column = 0; values >> value && column < names.size(); ++column) {
        const double cycles = value == "-" ? 0 : std::strtod(value.c_str(), nullptr);
        if (cycles > cost.busiest_resource_cycles) {
          cost.busiest_resource_cycles = cycles;
          cost.busiest_resource = names[column];
        }
      }
      return;
    }
  }
}

}  // namespace

LoopCost parse_mca_report(std::string_view report) {
  const double iterations = number_after(report, "Iterations:", 0);
  const double cycles = number_after(report, "Total Cycles:", 0);
  if (iterations <= 0 || cycles <= 0)
    throw std::runtime_error("llvm-mca's report has no summary (Iterations, Total Cycles)");
  LoopCost cost;
  cost.cycles_per_iter = cycles / iterations;
  cost.uops_per_iter = number_after(report, "Total uOps:", 0) / iterations;
  cost.dispatch_width = static_cast<int>(number_after(report, "Dispatch Width:", 0));
  cost.block_rthroughput = number_after(report, "Block RThroughput:", 0);
  cost.dependency_share = number_after(report, "Data Dependencies:", 0) / 100.0;
  const double resource_share = number_after(report, "Resource Pressure", 0) / 100.0;
  busiest_resource(report, cost);
  if (const auto carried = report.find("< loop carried >"); carried != std::string_view::npos) {
    constexpr std::string_view kDependency = "## REGISTER dependency:";
    if (const auto at = report.find(kDependency, carried); at != std::string_view::npos) {
      const std::string_view reg = report.substr(at + kDependency.size(), 8);
      cost.accumulator_chain = reg.find("mm") != std::string_view::npos;  // %xmm, %ymm, %zmm
    }
  }

  // A loop runs slower than its resources allow only when a chain of dependent instructions
  // (carried from one iteration to the next) sets the pace; otherwise it is as fast as the
  // dispatch width or its busiest port lets it be.
  if (cost.cycles_per_iter > 1.25 * cost.block_rthroughput &&
      cost.dependency_share >= resource_share) {
    const double memory = number_after(report, "Memory Dependencies", 0);
    const double registers = number_after(report, "Register Dependencies", 0);
    cost.bound = memory > registers ? "latency chain (memory)" : "latency chain (registers)";
  } else if (cost.dispatch_width > 0 &&
             cost.uops_per_iter >= 0.9 * cost.dispatch_width * cost.cycles_per_iter) {
    cost.bound = "front end (dispatch width " + std::to_string(cost.dispatch_width) + ")";
  } else if (!cost.busiest_resource.empty()) {
    cost.bound = "port " + cost.busiest_resource;
  } else {
    cost.bound = "unknown";
  }
  return cost;
}

std::string llvm_mca_tool() {
  if (const char* tool = std::getenv("KBENCH_LLVM_MCA"); tool && *tool) return tool;
  return "llvm-mca-19";
}

LoopCost simulate_loop(const std::vector<std::string>& instructions, const std::string& mcpu) {
  // The loop's lines are the candidate's text: an instruction line may carry directives after a
  // ';' (".incbin" of a key file, ".rept" without end), so llvm-mca runs confined as the build
  // does, in a directory of its own that holds only the loop.
  const ScratchDir dir(std::filesystem::temp_directory_path(), "kbench-mca");
  const std::string path = "loop.s";  // in the tool's directory, where it starts
  {
    std::ofstream body(dir.path() / path);
    for (const std::string& instruction : instructions) body << instruction << '\n';
  }
  const ConfinedResult r =
      run_confined({llvm_mca_tool(), "-mcpu=" + mcpu, "-iterations=200", "--all-views=false",
                    "--summary-view", "--bottleneck-analysis", "--resource-pressure", path},
                   tool_confinement(llvm_mca_tool(), dir.path().string()), 60, 1 << 20);
  if (!r.error.empty()) throw std::runtime_error(llvm_mca_tool() + ": " + r.error);
  if (r.timed_out || r.exit_code != 0)
    throw std::runtime_error(llvm_mca_tool() + " failed: " + r.output.substr(0, 400));
  LoopCost cost = parse_mca_report(r.output);
  cost.layers = r.layers;
  cost.missing = r.missing;
  return cost;
}

}  // namespace kbench::analysis
