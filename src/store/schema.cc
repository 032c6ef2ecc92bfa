#include "store/schema.h"

#include <array>
#include <string>

#include "store/sqlite.h"

namespace kbench::schema {
namespace {

using sqlite::exec;
using sqlite::Statement;
using sqlite::Transaction;

// Migration i takes a database from user_version i to i + 1; append, never edit, so that existing
// files upgrade in place.
constexpr std::array<const char*, kVersion> kMigrations = {
    R"sql(
CREATE TABLE environments (
  id            INTEGER PRIMARY KEY,
  cpu_model     TEXT NOT NULL,
  cpu_flags     TEXT NOT NULL,
  logical_cpus  INTEGER NOT NULL,
  hostname      TEXT NOT NULL,
  compiler      TEXT NOT NULL,
  libraries     TEXT NOT NULL,
  kbench_commit TEXT NOT NULL,
  build_type    TEXT NOT NULL,
  first_seen    TEXT NOT NULL,
  last_seen     TEXT NOT NULL,
  UNIQUE (cpu_model, cpu_flags, logical_cpus, hostname, compiler, libraries, kbench_commit,
          build_type)
);

-- AUTOINCREMENT: ids are never reused, so an id printed in a report keeps naming the same result.
CREATE TABLE results (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at          TEXT NOT NULL,
  kind                TEXT NOT NULL,
  workload            TEXT NOT NULL,
  size                TEXT NOT NULL,
  threads             INTEGER NOT NULL,
  status              TEXT NOT NULL,
  error               TEXT NOT NULL,
  diagnostics         TEXT NOT NULL,
  candidate_path      TEXT NOT NULL,
  candidate_hash      TEXT NOT NULL,
  candidate_source    TEXT NOT NULL,
  passed              INTEGER NOT NULL,
  trials              INTEGER NOT NULL,
  seeds               TEXT NOT NULL,
  max_abs_err         REAL,
  max_rel_err         REAL,
  rel_l2_err          REAL,
  correctness_detail  TEXT NOT NULL,
  candidate_median_ms REAL,
  candidate_p25_ms    REAL,
  candidate_p75_ms    REAL,
  candidate_iters     INTEGER,
  baseline_median_ms  REAL,
  baseline_p25_ms     REAL,
  baseline_p75_ms     REAL,
  baseline_iters      INTEGER,
  speedup             REAL,
  speedup_ci_lo       REAL,
  speedup_ci_hi       REAL,
  gflops              REAL,
  pct_peak_flops      REAL,
  gbps                REAL,
  pct_peak_bw         REAL,
  warmup              INTEGER NOT NULL,
  wall_s              REAL,
  env_id              INTEGER NOT NULL REFERENCES environments (id),
  full_json           TEXT NOT NULL
);
CREATE INDEX results_by_workload ON results (workload, id);
CREATE INDEX results_by_kind ON results (kind, id);
CREATE INDEX results_by_candidate_hash ON results (candidate_hash);

CREATE TABLE samples (
  result_id INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
  side      TEXT NOT NULL CHECK (side IN ('candidate', 'baseline')),
  iter      INTEGER NOT NULL,
  ms        REAL,
  PRIMARY KEY (result_id, side, iter)
) WITHOUT ROWID;

CREATE TABLE cache (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
)sql",
    // 2: the timing conditions and the roofline (also in full_json; columns for queries), the
    // baseline's GEMM path, and per-call scheduler measurements beside every sample.
    R"sql(
ALTER TABLE results ADD COLUMN speedup_verdict TEXT;
ALTER TABLE results ADD COLUMN stable INTEGER;
ALTER TABLE results ADD COLUMN steal_pct REAL;
ALTER TABLE results ADD COLUMN disturbed_calls INTEGER;
ALTER TABLE results ADD COLUMN stop_reason TEXT;
ALTER TABLE results ADD COLUMN pct_roofline REAL;
ALTER TABLE results ADD COLUMN bound TEXT;
ALTER TABLE results ADD COLUMN baseline_gemm_plan TEXT;
ALTER TABLE samples ADD COLUMN wait_ms REAL;
ALTER TABLE samples ADD COLUMN offcpu_ms REAL;
ALTER TABLE samples ADD COLUMN cpu_ms REAL;
ALTER TABLE samples ADD COLUMN adjusted_ms REAL;
ALTER TABLE samples ADD COLUMN disturbed INTEGER;
)sql",
    // 3: resumable runs. A suite pass records each workload's result as it completes; a rerun of
    // the same command after a kill finds its incomplete run by key and times only what is
    // missing. The unique index makes "each workload once per run" a property of the file, whatever
    // the writers do.
    R"sql(
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  key          TEXT NOT NULL,
  command      TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX runs_by_key ON runs (key, id);
ALTER TABLE results ADD COLUMN run_id INTEGER REFERENCES runs (id);
CREATE UNIQUE INDEX results_once_per_run ON results (run_id, workload) WHERE run_id IS NOT NULL;
)sql",
    // 4: agent runs. Each generated sample of `kbench agent`, evaluated or not (a reply without
    // code is a sample too), in the run that produced it; its evaluation, when there was one, is a
    // results row of its own. The unique key is what lets a resumed run replay what it already has.
    R"sql(
CREATE TABLE agent_samples (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id            INTEGER NOT NULL REFERENCES runs (id),
  method            TEXT NOT NULL,
  workload          TEXT NOT NULL,
  size              TEXT NOT NULL,
  model             TEXT NOT NULL,
  idx               INTEGER NOT NULL,
  round             INTEGER NOT NULL,
  parent_idx        INTEGER,
  phase             TEXT NOT NULL,
  plan              TEXT NOT NULL,
  prompt_hash       TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  latency_s         REAL,
  status            TEXT NOT NULL,
  error             TEXT NOT NULL,
  speedup           REAL,
  speedup_verdict   TEXT NOT NULL,
  pct_roofline      REAL,
  result_id         INTEGER REFERENCES results (id),
  reply             TEXT NOT NULL,
  code              TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  UNIQUE (run_id, workload, idx)
);
)sql",
};

}  // namespace

int user_version(sqlite3* db) {
  Statement query(db, "PRAGMA user_version");
  return query.step() ? static_cast<int>(query.column_int(0)) : 0;
}

void migrate(sqlite3* db) {
  // Most opens find the schema current; checking first avoids taking the write lock for them.
  if (user_version(db) == kVersion) return;
  // Two processes may open a fresh file at once: the write lock serializes them and the second one
  // re-reads the version inside it and finds nothing to do.
  Transaction txn(db, "BEGIN IMMEDIATE");
  const int version = user_version(db);
  if (version > kVersion) {
    throw StoreError("database '" + sqlite::db_label(db) + "': schema version " +
                     std::to_string(version) + " is newer than this kbench understands (" +
                     std::to_string(kVersion) + "); upgrade kbench");
  }
  for (int v = version; v < kVersion; ++v) exec(db, kMigrations[v]);
  exec(db, "PRAGMA user_version = " + std::to_string(kVersion));
  txn.commit();
}

}  // namespace kbench::schema
