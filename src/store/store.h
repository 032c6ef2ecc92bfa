// The SQLite sink: every evaluation with its environment and raw timing samples, the agents'
// samples, and a small key-value cache (the experts' tuned configurations), in one database file
// shared by concurrent kbench processes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/environment.h"
#include "harness/eval_result.h"
#include "store/agent_sample.h"
#include "store/schema.h"
#include "store/store_error.h"

struct sqlite3;

namespace kbench {

// $KBENCH_DB if set, else $XDG_DATA_HOME/kbench/results.db, else
// $HOME/.local/share/kbench/results.db. Throws StoreError when none of them (nor the passwd home
// directory) is available.
std::string default_db_path();

// Schema (user_version schema::kVersion, 4; older files are migrated in place on open):
//   environments(id, cpu_model, cpu_flags, logical_cpus, hostname, compiler, libraries,
//                kbench_commit, build_type, first_seen, last_seen) -- one row per distinct content
//   results(id, created_at, kind, workload, size, threads, status, error, diagnostics,
//           candidate_path, candidate_hash, candidate_source, passed, trials, seeds (JSON text),
//           max_abs_err, max_rel_err, rel_l2_err, correctness_detail,
//           candidate_{median,p25,p75}_ms, candidate_iters, baseline_{median,p25,p75}_ms,
//           baseline_iters, speedup, speedup_ci_lo, speedup_ci_hi, gflops, pct_peak_flops, gbps,
//           pct_peak_bw, warmup, wall_s, env_id,
//           full_json (to_json() of the record without candidate_source, which has its own column))
//   (user_version 2 adds) results.speedup_verdict, stable, steal_pct, disturbed_calls,
//           stop_reason, pct_roofline, bound, baseline_gemm_plan (NULL in older rows)
//   (user_version 3 adds) results.run_id (NULL for results outside a resumable run; at most one
//           result per (run_id, workload))
//   samples(result_id, side 'candidate'|'baseline', iter, ms, wait_ms, offcpu_ms, cpu_ms,
//           adjusted_ms, disturbed) -- every timed call; all but ms (v2) NULL where not measured
//   runs(id, key, command, created_at, completed_at) -- (v3) one multi-result command, such as a
//           suite pass, that a rerun of the same command resumes until completed_at is set
//   (user_version 4 adds) agent_samples(id, run_id, method, workload, size, model, idx, round,
//           parent_idx, phase, plan, prompt_hash, prompt_tokens, completion_tokens, latency_s,
//           status, error, speedup, speedup_verdict, pct_roofline, result_id, reply, code,
//           created_at) -- every sample of `kbench agent`, unique per (run_id, workload, idx)
//   cache(key, value, updated_at) -- the experts' tuned configurations (machine facts such as
//           the probe's peaks live in the machine cache, store/machine_cache.h, not here)
// REAL columns hold NULL for values that are absent or NaN (SQLite cannot store NaN); full_json
// keeps them exactly.
//
// One ResultStore is one connection: use it from one thread at a time. Several processes may share
// a file; writers queue for up to 5 s (busy_timeout) before StoreError("database is locked").
class ResultStore {
 public:
  static constexpr int kSchemaVersion = schema::kVersion;

  // Opens or creates the database at `path` (creating parent directories) and brings its schema up
  // to kSchemaVersion. ":memory:" gives a private in-memory store. Throws StoreError naming `path`.
  static ResultStore open(const std::string& path);
  // Opens the database at `path` for reading only, never creating, migrating or writing it, so a
  // file on a read-only mount (or another user's) can be read. A missing file reads as an empty
  // store (in memory, whose path() is still `path`). A database of an older schema is upgraded when
  // the file is writable, else refused. Throws StoreError naming `path`.
  static ResultStore open_read_only(const std::string& path);

  ResultStore(ResultStore&& other) noexcept;
  ResultStore& operator=(ResultStore&& other) noexcept;
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;
  ~ResultStore();

  // Writes `result`, `env` (deduplicated by content), every timing sample and, when given, the
  // result's membership in run `run_id` in one transaction, so a crash or kill leaves either the
  // whole record or nothing. Fills created_at with the current UTC time when empty. Returns the new
  // results.id. Throws StoreError when `run_id` names no run, a completed run, or a run that
  // already holds a result for result.workload (another process resuming the same run).
  std::int64_t record(const EvalResult& result, const Environment& env,
                      std::optional<std::int64_t> run_id = std::nullopt);

  struct RunStart {
    std::int64_t id = 0;
    bool resumed = false;  // an incomplete run with this key existed and is continued
  };
  // The newest run with `key` that was never completed (a killed or failed earlier attempt of the
  // same command), or else a new run recording `command` (for people reading the table). `key`
  // must determine every result the run produces: resuming mixes the earlier attempt's results with
  // new ones.
  RunStart begin_or_resume_run(const std::string& key, const std::string& command);
  // The results recorded in run `run_id`, oldest first, with their samples.
  std::vector<EvalResult> results_of_run(std::int64_t run_id) const;
  // A row of the runs table as it was written.
  struct Run {
    std::int64_t id = 0;
    std::string key;      // what a rerun of the same command matches on
    std::string command;  // for people reading it
    bool complete = false;
  };
  // Run `run_id`, or nullopt when this database has none.
  std::optional<Run> run_by_id(std::int64_t run_id) const;
  // Marks run `run_id` complete: the same command then starts a new run. Completing a completed
  // run is a no-op; an unknown id throws StoreError.
  void complete_run(std::int64_t run_id);

  // Which results `recent` lists: each field set keeps only the results that equal it.
  struct Filter {
    std::optional<std::string> workload, kind, status;
  };

  // Up to `limit` results, newest first (a negative limit means all), those `filter` keeps.
  // Timing samples come from the samples table.
  std::vector<EvalResult> recent(int limit, const Filter& filter = {}) const;

  // One result by its results.id, with its samples; nullopt when there is none.
  std::optional<EvalResult> result_by_id(std::int64_t id) const;

  // Writes an agent's sample and, when it was evaluated, its evaluation (whose new id goes into
  // sample.result_id) in one transaction. Fills created_at when empty. Throws StoreError when the
  // run does not exist, is complete, or already holds this (workload, index). Returns the row id.
  std::int64_t record_agent_sample(AgentSample& sample, const EvalResult* evaluation,
                                   const Environment& env);
  // The samples of the given runs (every agent run when empty), by run, workload and index.
  std::vector<AgentSample> agent_samples(const std::vector<std::int64_t>& run_ids) const;

  // What merging one shard (merge_shard) did.
  struct ShardMerge {
    int runs_added = 0;
    int runs_present = 0;  // complete runs this database already held
    // Runs left out because they never completed (their command was killed or is still running):
    // "run 3 (kbench run --suite all): 2 results, 0 agent samples".
    std::vector<std::string> incomplete;
    int results_added = 0;    // of the runs added, their agent samples' and outside any run
    int results_present = 0;  // results outside any run this database already held
    int agent_samples_added = 0;
  };
  // Refuses (StoreError naming it) a shard that is not a readable kbench database of this schema
  // version; reads it without writing anything, so a sweep's shards can all be checked before the
  // first is merged.
  static void check_shard(const std::string& shard);
  // Copies the database at `shard` into this one in one transaction, with new ids: its complete
  // runs with their results, timing samples, agent samples and their evaluations, its results
  // outside runs, and the environments they name (one row per distinct content, as record() keeps
  // them). What this database already holds is not copied again: a run with the same key and start
  // time, a result outside runs with the same record. Incomplete runs are left out and listed.
  // Throws StoreError, having written nothing, where check_shard refuses `shard` or it is this
  // database's own file. The experts' cache is not merged: tuned configurations are per machine.
  ShardMerge merge_shard(const std::string& shard);

  std::optional<std::string> cache_get(const std::string& key) const;
  void cache_put(const std::string& key, const std::string& value);

  const std::string& path() const { return path_; }

  // Test-only: called inside record()'s transaction after the results row and the candidate samples
  // are written and before the baseline samples and COMMIT, so a test can kill the process there.
  void set_after_insert_hook(std::function<void()> hook) { after_insert_hook_ = std::move(hook); }

 private:
  ResultStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void set_up();  // pragmas and migrations on a fresh connection
  // The results row and its timing samples, inside the caller's write transaction.
  std::int64_t insert_result(const EvalResult& result, const Environment& env,
                             std::optional<std::int64_t> run_id);
  sqlite3* handle() const;  // throws on a moved-from store

  sqlite3* db_ = nullptr;
  std::string path_;
  std::function<void()> after_insert_hook_;
};

}  // namespace kbench
