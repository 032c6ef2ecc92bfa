// One cell of a sweep, as an executor's task runs it (`kbench sweep cell DIR INDEX`): its own
// attempt, its own database on node-local disk, the cell's command run in this process, the
// attempt's database kept in the sweep directory, and the shard published when the command
// completed.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

#include "cli/app.h"
#include "cli/context.h"
#include "cli/sweep.h"
#include "core/environment.h"
#include "core/sha256.h"
#include "core/stop_signals.h"
#include "store/snapshot.h"
#include "sweep/cell_files.h"

namespace kbench::cli {
namespace {

// Node-local disk for the attempt's database: SQLite over a network file system is slow and its
// locking unreliable. $KBENCH_SWEEP_LOCAL, else $TMPDIR (Slurm's per-job directory where the
// cluster sets one), else /tmp.
std::filesystem::path local_dir() {
  for (const char* name : {"KBENCH_SWEEP_LOCAL", "TMPDIR"})
    if (const char* dir = std::getenv(name); dir && *dir) return dir;
  return "/tmp";
}

void remove_database(const std::filesystem::path& db) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(db.string() + suffix, ec);
}

// Attempt `number`'s working database on this node's local disk.
std::filesystem::path local_database(const std::filesystem::path& dir, const sweep::Cell& cell,
                                     int number) {
  const std::string cell_key = std::filesystem::absolute(dir).string() + "/" + cell.name;
  return local_dir() / ("kbench-sweep-" + sha256_hex(cell_key).substr(0, 16) + "-attempt-" +
                        std::to_string(number) + ".db");
}

// Where this attempt resumes: the database of the latest earlier attempt that left one. An attempt
// that ended kept its copy in the sweep directory; one killed before it could (kill -9, the OOM
// killer) left only its working database, which is found when this attempt runs on the same node.
std::optional<std::filesystem::path> last_database(const std::filesystem::path& dir,
                                                   const sweep::Cell& cell,
                                                   const sweep::CellFiles& files, int before) {
  std::optional<std::filesystem::path> found;
  std::error_code ec;
  const std::string host = sweep::this_host();
  for (const sweep::Attempt& a : files.attempts()) {
    if (a.number >= before) continue;
    if (std::filesystem::is_regular_file(files.attempt_db(a.number), ec))
      found = files.attempt_db(a.number);
    else if (a.host == host &&
             std::filesystem::is_regular_file(local_database(dir, cell, a.number), ec))
      found = local_database(dir, cell, a.number);
  }
  return found;
}

bool newest_attempt(const sweep::CellFiles& files, int number) {
  for (const sweep::Attempt& a : files.attempts())
    if (a.number > number) return false;
  return true;
}

}  // namespace

int run_sweep_cell(const std::filesystem::path& dir, int index) {
  const sweep::Plan plan = plan_or_usage_error(dir);
  if (index < 0 || index >= static_cast<int>(plan.cells.size()))
    throw UsageError("the sweep in '" + dir.string() + "' has no cell " + std::to_string(index) +
                     " (it has " + std::to_string(plan.cells.size()) + ")");
  const sweep::Cell& cell = plan.cells[index];
  sweep::CellFiles files(dir, cell);
  if (files.done()) {
    std::printf("cell %s is done already (%s)\n", cell.name.c_str(), files.shard().c_str());
    return 0;
  }
  const sweep::CellStatus status = sweep::cell_status(files, plan.max_attempts);
  if (status.state == sweep::CellState::kFailed) {
    std::fprintf(stderr, "kbench: cell %s failed %d times and is not run again: %s\n",
                 cell.name.c_str(), status.failures, status.line.c_str());
    return 1;
  }

  // Run and agent stop between units of work: from here a SIGTERM (Slurm's time limit, scancel)
  // lets the attempt keep what it did and say so. Other commands end at once, as they do alone.
  if (cell.args.front() == "run" || cell.args.front() == "agent") stop_between_units();
  sweep::Attempt attempt = files.claim_attempt();
  const std::filesystem::path local = local_database(dir, cell, attempt.number);
  remove_database(local);
  if (const auto earlier = last_database(dir, cell, files, attempt.number)) {
    snapshot_database(earlier->string(), local.string());
    std::fprintf(stderr, "kbench: cell %s, attempt %d, resumes from %s\n", cell.name.c_str(),
                 attempt.number, earlier->c_str());
  } else {
    std::fprintf(stderr, "kbench: cell %s, attempt %d: kbench %s\n", cell.name.c_str(),
                 attempt.number, cell.args.front().c_str());
  }

  std::vector<std::string> args = cell.args;
  args.insert(args.end(), {"--db", local.string()});
  // An agent's request log would sit beside the database, on node-local disk, in one file per run
  // id that every cell's database numbers from 1: each attempt keeps its own in the sweep
  // directory.
  if (cell.args.front() == "agent")
    args.insert(args.end(), {"--request-log", files.attempt_log(attempt.number).string()});
  std::string failure;
  const int code = run_cli(args, &failure);

  std::error_code ec;
  try {
    if (std::filesystem::is_regular_file(local, ec))
      snapshot_database(local.string(), files.attempt_db(attempt.number).string());
    attempt.exit_code = code;
    attempt.ended_at = utc_now_iso8601();
    if (code == 0 && newest_attempt(files, attempt.number)) {
      std::filesystem::create_directories(files.shard().parent_path(), ec);
      snapshot_database(files.attempt_db(attempt.number).string(), files.shard().string());
      attempt.outcome = sweep::Outcome::kDone;
      // Working databases that killed attempts left on this node are not needed any more.
      for (const sweep::Attempt& a : files.attempts())
        if (a.number < attempt.number && a.host == attempt.host)
          remove_database(local_database(dir, cell, a.number));
    } else if (code == 0) {
      // A newer attempt of this cell started while this one ran (Slurm requeued it while this
      // copy was cut off from its controller): that one publishes.
      attempt.outcome = sweep::Outcome::kStopped;
      attempt.message = "completed after a newer attempt started; left to it";
    } else if (const int signal = stop_signal(); signal != 0 && code == 128 + signal) {
      attempt.outcome = sweep::Outcome::kStopped;
      attempt.message = std::string("stopped by ") + stop_signal_name(signal);
    } else {
      attempt.outcome = sweep::Outcome::kFailed;
      attempt.message = failure.empty() ? "exit status " + std::to_string(code) : failure;
    }
    files.end_attempt(attempt);
  } catch (...) {
    remove_database(local);
    throw;
  }
  remove_database(local);
  return code;
}

}  // namespace kbench::cli
