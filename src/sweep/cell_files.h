// What a sweep keeps of each cell in its directory, written so that attempts of one cell (a Slurm
// task requeued while its old copy still runs, a local rerun) never share a file:
//   cells/NAME/attempt-N.json  who ran attempt N, where, since when, and how it ended
//   cells/NAME/attempt-N.db    attempt N's database as it ended (the next attempt starts from it)
//   cells/NAME/attempt-N.requests.jsonl  an agent cell's LLM requests in attempt N
//   shards/NAME.db             the finished cell's database, what `kbench merge` takes
// Attempt numbers are claimed by exclusive creation; every file is replaced by rename, so a reader
// sees a whole file or the one before.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/plan.h"

namespace kbench::sweep {

enum class Outcome {
  kDone,     // the command completed; the shard is published
  kStopped,  // stopped by SIGTERM or SIGINT between units of work: resumable, not a failure
  kFailed,   // the command failed (exit status other than 0 or a stop)
};

// "done", "stopped" or "failed", as attempt files and messages spell it.
const char* outcome_name(Outcome outcome);

struct Attempt {
  int number = 0;
  std::string host;
  long pid = 0;
  std::string started_at;          // UTC, ISO-8601
  std::string slurm_job;           // "JOB_ARRAYTASK", when run by Slurm
  std::optional<Outcome> outcome;  // none while it runs, or when it vanished (killed, node lost)
  int exit_code = 0;
  std::string message;  // one line: why it failed or stopped
  std::string ended_at;
};

class CellFiles {
 public:
  CellFiles(const std::filesystem::path& sweep_dir, const Cell& cell);

  // Attempt N + 1 where N is the highest claimed so far, created exclusively (two processes
  // claiming at once get different numbers), recorded as started by this process on this host now.
  Attempt claim_attempt();
  // Records how `attempt` ended (replacing its file whole).
  void end_attempt(const Attempt& attempt) const;
  // Every attempt, by number; a file still being written reads as an attempt that runs.
  std::vector<Attempt> attempts() const;

  std::filesystem::path attempt_db(int number) const;
  // An agent cell's LLM requests and replies in attempt `number` (JSON lines).
  std::filesystem::path attempt_log(int number) const;
  std::filesystem::path shard() const;
  bool done() const;

 private:
  std::filesystem::path attempt_file(int number) const;
  void write_attempt(const Attempt& attempt) const;

  std::filesystem::path dir_;
  std::filesystem::path shard_;
};

// This machine's host name, as attempts record it.
std::string this_host();

enum class CellState { kPending, kRunning, kDone, kFailed };
const char* cell_state_name(CellState state);

struct CellStatus {
  CellState state = CellState::kPending;
  int attempts = 0;
  int failures = 0;  // attempts that failed or vanished
  std::string line;  // the failure's line, or where and since when it runs
};

// A cell's state from its files: done once its shard is published; failed once `max_attempts`
// attempts failed or vanished; running while its latest attempt has not ended (unless it ran on
// this host and its process is gone: then it vanished); else pending.
CellStatus cell_status(const CellFiles& files, int max_attempts);

}  // namespace kbench::sweep
