// `kbench sweep status DIR`: where each cell of a sweep stands, read from its files alone, so it
// works the same for the local executor and for a Slurm job on another node.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "cli/sweep.h"
#include "sweep/cell_files.h"

namespace kbench::cli {

int sweep_status(const std::filesystem::path& dir, bool json) {
  const sweep::Plan plan = plan_or_usage_error(dir);
  std::map<sweep::CellState, int> counts;
  nlohmann::json cells = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const sweep::Cell& cell : plan.cells) {
    const sweep::CellFiles files(dir, cell);
    const sweep::CellStatus s = sweep::cell_status(files, plan.max_attempts);
    ++counts[s.state];
    cells.push_back({{"cell", cell.name},
                     {"state", sweep::cell_state_name(s.state)},
                     {"attempts", s.attempts},
                     {"failures", s.failures},
                     {"line", s.line},
                     {"shard", s.state == sweep::CellState::kDone ? files.shard().string() : ""}});
    if (s.state != sweep::CellState::kDone)
      lines.push_back(std::string(sweep::cell_state_name(s.state)) + "  " + cell.name +
                      (s.attempts ? "  (" + std::to_string(s.attempts) + " attempts)" : "") +
                      (s.line.empty() ? "" : "  " + s.line));
  }
  const auto count = [&](sweep::CellState state) { return counts[state]; };
  if (json) {
    std::cout << nlohmann::json{{"dir", dir.string()},
                                {"cells", plan.cells.size()},
                                {"done", count(sweep::CellState::kDone)},
                                {"running", count(sweep::CellState::kRunning)},
                                {"failed", count(sweep::CellState::kFailed)},
                                {"pending", count(sweep::CellState::kPending)},
                                {"max_attempts", plan.max_attempts},
                                {"per_cell", cells}}
                     .dump(2)
              << '\n';
    return 0;
  }
  std::printf("sweep %s: %zu cells: %d done, %d running, %d failed, %d pending\n", dir.c_str(),
              plan.cells.size(), count(sweep::CellState::kDone), count(sweep::CellState::kRunning),
              count(sweep::CellState::kFailed), count(sweep::CellState::kPending));
  for (const std::string& line : lines) std::printf("  %s\n", line.c_str());
  if (count(sweep::CellState::kDone) > 0)
    std::printf("merge what is done: kbench merge OUT %s/shards/*.db\n", dir.c_str());
  return 0;
}

}  // namespace kbench::cli
