// The Slurm executor: a sweep's cells as one array job, one array task per cell. Slurm owns
// placement, CPU binding, cancellation and requeue; each task runs `kbench sweep cell DIR INDEX`,
// which keeps its attempt's files apart from every other attempt's (sweep/cell_files.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kbench::sweep {

struct SlurmOptions {
  std::string partition;
  int cpus_per_task = 1;
  bool exclusive = false;  // whole nodes: publication-grade timing, no neighbour on the cores
  std::string time;        // --time, Slurm's syntax ("30", "1:00:00")
  int max_parallel = 0;    // array tasks at once (the %N of --array); 0: as many as Slurm runs
  std::vector<std::string> sbatch_args;  // passed to sbatch as they are
};

// "0-3,7,9-12": the array indices of `cells` (ascending).
std::string array_ranges(const std::vector<int>& cells);

// The batch script of the array job over `cells` of the sweep in `dir`, run with `kbench`.
std::string batch_script(const SlurmOptions& options, const std::filesystem::path& dir,
                         const std::string& kbench, const std::vector<int>& cells);

// Submits the script written at `script` with sbatch; returns the job id. Throws SweepError with
// sbatch's own message when it refuses.
std::string submit(const SlurmOptions& options, const std::filesystem::path& script);

}  // namespace kbench::sweep
