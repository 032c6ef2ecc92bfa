// A sweep: the matrix of what to run, one cell a unit that runs on its own (one workload's
// baselines, one agent run, one expert's tuning), kept in DIR/sweep.json so that every executor,
// every attempt and `kbench sweep status` read the same cells.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kbench::sweep {

// A sweep directory that cannot be used (unreadable or foreign plan, a cell that does not exist).
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Cell {
  std::string name;               // unique in the sweep, a file name: "run-8p_GEMM"
  std::vector<std::string> args;  // the kbench command line after "kbench", without --db
};

struct Plan {
  std::vector<Cell> cells;
  // A cell whose attempts failed (or vanished) this many times is reported, not run again.
  int max_attempts = 3;
};

// Reads DIR/sweep.json.
Plan read_plan(const std::filesystem::path& dir);
// Writes DIR/sweep.json (whole, by rename), creating DIR.
void write_plan(const std::filesystem::path& dir, const Plan& plan);
// True when the two plans have the same cells with the same command lines: a sweep resubmitted into
// its directory must be the same sweep, or its shards would mix two matrices.
bool same_cells(const Plan& a, const Plan& b);

}  // namespace kbench::sweep
