#include "sweep/slurm.h"

#include <sstream>

#include "harness/subprocess.h"
#include "sweep/plan.h"

namespace kbench::sweep {
namespace {

// Single quotes for the shell, each ' inside closed, escaped and reopened.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  out += '\'';
  return out;
}

std::string last_line(const std::string& text) {
  std::string line;
  std::istringstream in(text);
  for (std::string next; std::getline(in, next);)
    if (!next.empty()) line = next;
  return line;
}

}  // namespace

std::string array_ranges(const std::vector<int>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size();) {
    std::size_t j = i;
    while (j + 1 < cells.size() && cells[j + 1] == cells[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cells[i]);
    if (j > i) {
      out += '-';
      out += std::to_string(cells[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string batch_script(const SlurmOptions& options, const std::filesystem::path& dir,
                         const std::string& kbench, const std::vector<int>& cells) {
  const std::filesystem::path absolute = std::filesystem::absolute(dir);
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# kbench sweep: one array task per cell; each runs `kbench sweep cell DIR INDEX`.\n"
    << "#SBATCH --job-name=kbench-sweep\n"
    << "#SBATCH --array=" << array_ranges(cells) << (options.max_parallel > 0 ? "%" : "")
    << (options.max_parallel > 0 ? std::to_string(options.max_parallel) : "") << "\n"
    << "#SBATCH --cpus-per-task=" << options.cpus_per_task << "\n"
    << "#SBATCH --ntasks=1\n"
    // A task requeued after its node failed (or by scontrol requeue) runs the cell again, as a new
    // attempt that resumes from the last one's database.
    << "#SBATCH --requeue\n"
    << "#SBATCH --open-mode=append\n"
    << "#SBATCH --output=" << (absolute / "logs" / "%a.log").string() << "\n";
  if (!options.partition.empty()) s << "#SBATCH --partition=" << options.partition << "\n";
  if (options.exclusive) s << "#SBATCH --exclusive\n";
  if (!options.time.empty()) s << "#SBATCH --time=" << options.time << "\n";
  s << "exec " << quoted(kbench) << " sweep cell " << quoted(absolute.string())
    << " \"$SLURM_ARRAY_TASK_ID\"\n";
  return s.str();
}

std::string submit(const SlurmOptions& options, const std::filesystem::path& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  argv.insert(argv.end(), options.sbatch_args.begin(), options.sbatch_args.end());
  argv.push_back(script.string());
  const CommandResult r = run_command(argv, 120);
  if (!r.error.empty()) throw SweepError("cannot run sbatch: " + r.error);
  if (r.timed_out) throw SweepError("sbatch did not answer within 120 s");
  if (r.exit_code != 0)
    throw SweepError("sbatch refused the sweep: " + last_line(r.output) +
                     " (script: " + script.string() + ")");
  // --parsable prints "JOBID" or "JOBID;CLUSTER" (warnings may come before it).
  const std::string line = last_line(r.output);
  return line.substr(0, line.find(';'));
}

}  // namespace kbench::sweep
