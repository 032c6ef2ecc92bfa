// `kbench sweep`'s parts: the matrix of cells, the cell an executor runs, the local executor and
// the status of a sweep directory (docs/cluster.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "sweep/plan.h"
#include "sweep/slurm.h"

namespace kbench::cli {

struct SweepOptions {
  // The matrix: workloads x what to do.
  std::vector<std::string> workloads;
  std::string suite = "all";
  TimingOptions timing;
  bool no_experts = false;
  bool agent = false;  // agent runs (methods x models x seeds) instead of baseline runs
  std::vector<std::string> methods;
  std::vector<std::string> models;
  std::vector<std::uint64_t> seeds;
  int samples = 8;
  std::string provider = "openai";
  std::string base_url;
  std::string api_key_env;
  bool tune = false;  // each expert's tuning instead of baseline runs
  // Where and how.
  std::string out;
  std::string executor = "local";
  int max_parallel = 0;  // 0: one at a time locally, as many as Slurm runs on a cluster
  int max_attempts = 3;
  sweep::SlurmOptions slurm;
};

// The plan in `dir`; a directory that holds none (or an unreadable one) is a usage error.
sweep::Plan plan_or_usage_error(const std::filesystem::path& dir);

// The cells of the matrix `options` describes, in a fixed order (workload-major).
sweep::Plan sweep_plan(const SweepOptions& options);

// One cell of the sweep in `dir`, in this process: claims the next attempt, starts from the last
// attempt's database on node-local disk, runs the cell's command against it, keeps the attempt's
// database in `dir` and, when the command completed, publishes it as the cell's shard. Returns the
// command's exit code (1 for a cell that failed max_attempts times, which is not run again).
int run_sweep_cell(const std::filesystem::path& dir, int index);

// Runs `cells` of the sweep in `dir` on this machine, `max_parallel` at a time, each a
// `kbench sweep cell` process with its output in dir/logs/INDEX.log. A SIGINT or SIGTERM is passed
// on to the cells in flight, which stop between units of work; no cell starts after it.
int run_local(const std::filesystem::path& dir, const sweep::Plan& plan,
              const std::vector<int>& cells, int max_parallel);

// Prints the cells done, running, failed and pending, with each failure's line.
int sweep_status(const std::filesystem::path& dir, bool json);

}  // namespace kbench::cli
