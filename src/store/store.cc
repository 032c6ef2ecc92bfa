// ResultStore over the SQLite C API: RAII statements and transactions, versioned migrations, and
// the one-transaction record() that keeps a killed process from leaving half a result behind.
#include "store/store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "store/result_json.h"

namespace kbench {
namespace {

using nlohmann::json;

// Long enough to queue behind another process's record() (milliseconds of inserts) or a WAL
// checkpoint, short enough that a wedged writer surfaces as an error instead of a hang.
constexpr int kBusyTimeoutMs = 5000;

// Migration i takes a database from user_version i to i + 1; append, never edit, so that existing
// files upgrade in place.
constexpr std::array<const char*, ResultStore::kSchemaVersion> kMigrations = {
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

// Names the file in every message: with several stores (tests, --db) "database is locked" alone
// does not say which.
std::string db_label(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return file && *file ? file : ":memory:";
}

[[noreturn]] void fail(sqlite3* db, std::string_view what) {
  throw StoreError("database '" + db_label(db) + "': " + std::string(what) + ": " +
                   sqlite3_errmsg(db));
}

// Enough of a statement to tell which one failed, on one line: a whole INSERT or migration would
// make an error message a screenful.
std::string sql_excerpt(std::string_view sql) {
  constexpr std::size_t kMaxChars = 48;
  std::string text;
  for (const char c : sql) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return text;
}

void exec(sqlite3* db, const std::string& sql) {
  // Only for fixed SQL (schema, pragmas, BEGIN/COMMIT); anything carrying data goes through
  // Statement.
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
    fail(db, sql_excerpt(sql));
}

// One prepared statement with named parameters (":workload"), finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK)
      fail(db, "preparing statement");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind_text(const char* name, std::string_view text) {
    // A null data pointer would bind SQL NULL; an empty string_view may carry one.
    const char* data = text.data() ? text.data() : "";
    check(sqlite3_bind_text64(stmt_, index(name), data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
          name);
  }
  void bind_int(const char* name, std::int64_t value) {
    check(sqlite3_bind_int64(stmt_, index(name), value), name);
  }
  // NaN becomes NULL (SQLite has no NaN); infinities are stored as such.
  void bind_double(const char* name, double value) {
    if (std::isnan(value)) return bind_null(name);
    check(sqlite3_bind_double(stmt_, index(name), value), name);
  }
  void bind_double(const char* name, const std::optional<double>& value) {
    if (value) return bind_double(name, *value);
    bind_null(name);
  }
  void bind_null(const char* name) { check(sqlite3_bind_null(stmt_, index(name)), name); }

  // True while a row is available; false when done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "executing '" + sql_excerpt(sqlite3_sql(stmt_)) + "'");
  }
  void run() {
    while (step()) {
    }
  }
  void reset() { sqlite3_reset(stmt_); }

  std::int64_t column_int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool column_is_null(int column) const {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }
  double column_double(int column) const {
    if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nan("");
    return sqlite3_column_double(stmt_, column);
  }
  std::string column_text(int column) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return text ? std::string(text, sqlite3_column_bytes(stmt_, column)) : std::string();
  }

 private:
  int index(const char* name) const {
    const int i = sqlite3_bind_parameter_index(stmt_, name);
    if (i == 0) {
      throw StoreError(std::string("database: no parameter ") + name + " in '" +
                       sqlite3_sql(stmt_) + "'");
    }
    return i;
  }
  void check(int rc, const char* name) const {
    if (rc != SQLITE_OK) fail(db_, std::string("binding ") + name);
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN on construction; ROLLBACK on scope exit unless commit() succeeded. Exceptions, early
// returns and a failed COMMIT all leave the database as it was.
class Transaction {
 public:
  Transaction(sqlite3* db, const char* begin) : db_(db) { exec(db, begin); }
  ~Transaction() {
    // SQLite rolls back by itself after some errors (SQLITE_FULL, IOERR, ...); autocommit then is
    // on again and a second ROLLBACK would only fail.
    if (!committed_ && !sqlite3_get_autocommit(db_)) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit() {
    exec(db_, "COMMIT");
    committed_ = true;
  }

 private:
  sqlite3* db_;
  bool committed_ = false;
};

int user_version(sqlite3* db) {
  Statement query(db, "PRAGMA user_version");
  return query.step() ? static_cast<int>(query.column_int(0)) : 0;
}

void migrate(sqlite3* db) {
  // Most opens find the schema current; checking first avoids taking the write lock for them.
  if (user_version(db) == ResultStore::kSchemaVersion) return;
  // Two processes may open a fresh file at once: the write lock serializes them and the second one
  // re-reads the version inside it and finds nothing to do.
  Transaction txn(db, "BEGIN IMMEDIATE");
  const int version = user_version(db);
  if (version > ResultStore::kSchemaVersion) {
    throw StoreError("database '" + db_label(db) + "': schema version " + std::to_string(version) +
                     " is newer than this kbench understands (" +
                     std::to_string(ResultStore::kSchemaVersion) + "); upgrade kbench");
  }
  for (int v = version; v < ResultStore::kSchemaVersion; ++v) exec(db, kMigrations[v]);
  exec(db, "PRAGMA user_version = " + std::to_string(ResultStore::kSchemaVersion));
  txn.commit();
}

std::int64_t upsert_environment(sqlite3* db, const Environment& env, const std::string& now) {
  Statement upsert(
      db,
      "INSERT INTO environments (cpu_model, cpu_flags, logical_cpus, hostname, compiler, "
      "libraries, kbench_commit, build_type, first_seen, last_seen) "
      "VALUES (:cpu_model, :cpu_flags, :logical_cpus, :hostname, :compiler, :libraries, "
      ":kbench_commit, :build_type, :now, :now) "
      "ON CONFLICT (cpu_model, cpu_flags, logical_cpus, hostname, compiler, libraries, "
      "kbench_commit, build_type) DO UPDATE SET last_seen = excluded.last_seen "
      "RETURNING id");
  upsert.bind_text(":cpu_model", env.cpu_model);
  upsert.bind_text(":cpu_flags", env.cpu_flags);
  upsert.bind_int(":logical_cpus", env.logical_cpus);
  upsert.bind_text(":hostname", env.hostname);
  upsert.bind_text(":compiler", env.compiler);
  upsert.bind_text(":libraries", env.libraries);
  upsert.bind_text(":kbench_commit", env.kbench_commit);
  upsert.bind_text(":build_type", env.build_type);
  upsert.bind_text(":now", now);
  if (!upsert.step())
    throw StoreError("database '" + db_label(db) + "': environment upsert returned no id");
  const std::int64_t id = upsert.column_int(0);
  upsert.run();  // a RETURNING statement stays active until stepped to SQLITE_DONE
  return id;
}

void bind_timing(Statement& insert, const std::string& side,
                 const std::optional<TimingSummary>& timing) {
  const std::string prefix = ":" + side + "_";
  const auto name = [&](const char* field) { return prefix + field; };
  if (timing) {
    insert.bind_double(name("median_ms").c_str(), timing->median_ms);
    insert.bind_double(name("p25_ms").c_str(), timing->p25_ms);
    insert.bind_double(name("p75_ms").c_str(), timing->p75_ms);
    insert.bind_int(name("iters").c_str(), timing->iters);
  } else {
    for (const char* field : {"median_ms", "p25_ms", "p75_ms", "iters"}) {
      insert.bind_null(name(field).c_str());
    }
  }
}

void insert_samples(Statement& insert, std::int64_t result_id, const char* side,
                    const std::optional<TimingSummary>& timing) {
  if (!timing) return;
  const std::size_t n = timing->samples_ms.size();
  // The per-call measurements come as a set or not at all (a kernel without schedstat).
  const bool measured = timing->wait_ms.size() == n && timing->offcpu_ms.size() == n &&
                        timing->cpu_ms.size() == n && timing->adjusted_ms.size() == n &&
                        timing->disturbed.size() == n;
  for (std::size_t i = 0; i < n; ++i) {
    insert.reset();
    insert.bind_int(":result_id", result_id);
    insert.bind_text(":side", side);
    insert.bind_int(":iter", static_cast<std::int64_t>(i));
    insert.bind_double(":ms", timing->samples_ms[i]);
    if (measured) {
      insert.bind_double(":wait_ms", timing->wait_ms[i]);
      insert.bind_double(":offcpu_ms", timing->offcpu_ms[i]);
      insert.bind_double(":cpu_ms", timing->cpu_ms[i]);
      insert.bind_double(":adjusted_ms", timing->adjusted_ms[i]);
      insert.bind_int(":disturbed", timing->disturbed[i]);
    } else {
      for (const char* name : {":wait_ms", ":offcpu_ms", ":cpu_ms", ":adjusted_ms", ":disturbed"})
        insert.bind_null(name);
    }
    insert.run();
  }
}

// The results `rows` yields (columns: id, full_json, candidate_source), each with its samples. Call
// inside a read transaction, so that a concurrent writer cannot interleave rows and samples.
std::vector<EvalResult> read_results(sqlite3* db, const std::string& path, Statement& rows) {
  Statement samples(
      db,
      "SELECT side, ms, wait_ms, offcpu_ms, cpu_ms, adjusted_ms, disturbed FROM samples "
      "WHERE result_id = :id ORDER BY side, iter");
  std::vector<EvalResult> results;
  while (rows.step()) {
    const std::int64_t id = rows.column_int(0);
    EvalResult result;
    try {
      result = eval_result_from_json(json::parse(rows.column_text(1)));
    } catch (const std::exception& e) {
      throw StoreError("database '" + path + "': result " + std::to_string(id) +
                       " has unreadable full_json: " + e.what());
    }
    result.id = id;
    result.candidate_source = rows.column_text(2);
    for (std::optional<TimingSummary>* timing : {&result.candidate, &result.baseline}) {
      if (!*timing) continue;
      (*timing)->samples_ms.clear();
      (*timing)->wait_ms.clear();
      (*timing)->offcpu_ms.clear();
      (*timing)->cpu_ms.clear();
      (*timing)->adjusted_ms.clear();
      (*timing)->disturbed.clear();
    }
    samples.reset();
    samples.bind_int(":id", id);
    while (samples.step()) {
      std::optional<TimingSummary>& timing =
          samples.column_text(0) == "candidate" ? result.candidate : result.baseline;
      if (!timing) continue;
      timing->samples_ms.push_back(samples.column_double(1));
      // NULL in rows written before schema 2 or without scheduler counters.
      if (!samples.column_is_null(6)) {
        timing->wait_ms.push_back(samples.column_double(2));
        timing->offcpu_ms.push_back(samples.column_double(3));
        timing->cpu_ms.push_back(samples.column_double(4));
        timing->adjusted_ms.push_back(samples.column_double(5));
        const std::int64_t disturbed = samples.column_int(6);
        // 0 clean, 1 waited, 2 disturbed: anything else is a damaged row, not a flag to wrap.
        if (disturbed < 0 || disturbed > 2)
          throw StoreError("database '" + path + "': result " + std::to_string(id) +
                           " has a sample with disturbed = " + std::to_string(disturbed) +
                           " (0, 1 or 2)");
        timing->disturbed.push_back(static_cast<std::uint8_t>(disturbed));
      }
    }
    results.push_back(std::move(result));
  }
  return results;
}

// Inside record()'s transaction: a result may join only an open run, and only once per workload.
void check_run_accepts(sqlite3* db, std::int64_t run_id, const std::string& workload) {
  const auto refuse = [&](const std::string& why) {
    throw StoreError("database '" + db_label(db) + "': run " + std::to_string(run_id) + " " + why);
  };
  Statement run(db, "SELECT completed_at IS NOT NULL FROM runs WHERE id = :id");
  run.bind_int(":id", run_id);
  if (!run.step()) refuse("does not exist");
  if (run.column_int(0) != 0) refuse("is already complete");
  Statement existing(db, "SELECT id FROM results WHERE run_id = :id AND workload = :workload");
  existing.bind_int(":id", run_id);
  existing.bind_text(":workload", workload);
  if (existing.step()) {
    refuse("already has result " + std::to_string(existing.column_int(0)) + " for " + workload +
           " (is another kbench running the same command?)");
  }
}

// Why the file at `path` cannot be written, when it cannot: SQLite's own words for a read-only
// WAL database ("unable to open database file") do not say so.
std::optional<std::string> read_only_reason(const std::string& path) {
  const std::filesystem::path file(path);
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
  for (const std::filesystem::path& p : {file, dir}) {
    if (access(p.c_str(), W_OK) != 0 && errno != ENOENT)
      return "'" + p.string() + "' is read-only: " + std::strerror(errno);
  }
  return std::nullopt;
}

}  // namespace

std::string default_db_path() {
  if (const char* db = std::getenv("KBENCH_DB"); db && *db) return db;
  // The XDG spec says to ignore relative values.
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg == '/') {
    return (std::filesystem::path(xdg) / "kbench" / "results.db").string();
  }
  const std::string home = home_directory();
  if (home.empty()) {
    throw StoreError("database: no database path: set KBENCH_DB, XDG_DATA_HOME or HOME");
  }
  return (std::filesystem::path(home) / ".local" / "share" / "kbench" / "results.db").string();
}

ResultStore ResultStore::open(const std::string& path) {
  const auto error = [&](const std::string& what) {
    return StoreError("database '" + path + "': " + what);
  };
  if (path.empty()) throw error("empty database path");
  const bool in_memory = path == ":memory:";
  if (!in_memory) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) throw error("cannot create directory '" + parent.string() + "': " + ec.message());
  }

  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    if (const auto why = read_only_reason(path)) message += " (" + *why + ")";
    throw error("cannot open: " + message);
  }
  ResultStore store(raw, path);  // owns `raw` from here on, closing it if setup throws
  try {
    store.set_up();
  } catch (const StoreError& e) {
    if (const auto why = in_memory ? std::nullopt : read_only_reason(path))
      throw StoreError(std::string(e.what()) + " (" + *why + ")");
    throw;
  }
  return store;
}

namespace {

// `path` as an SQLite URI filename, so that query parameters can be added.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", static_cast<unsigned char>(c));
      uri += escaped;
    } else {
      uri += c;
    }
  }
  return uri;
}

}  // namespace

ResultStore ResultStore::open_read_only(const std::string& path) {
  const auto error = [&](const std::string& what) {
    return StoreError("database '" + path + "': " + what);
  };
  if (path.empty()) throw error("empty database path");
  if (path == ":memory:") return open(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw error("is a directory, not a database file");
  if (!std::filesystem::exists(path, ec)) return open(":memory:");

  // mode=ro still needs the -shm file of a WAL database, which a read-only directory without one
  // cannot give; there nobody can be writing through this mount, and immutable=1 reads the file
  // as it stands.
  const auto try_open = [&](const std::string& uri, std::string& message) -> sqlite3* {
    sqlite3* raw = nullptr;
    const int rc =
        sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    if (rc == SQLITE_OK) {
      sqlite3_extended_result_codes(raw, 1);
      sqlite3_busy_timeout(raw, kBusyTimeoutMs);
      sqlite3_stmt* probe = nullptr;
      if (sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &probe, nullptr) == SQLITE_OK &&
          sqlite3_step(probe) == SQLITE_ROW) {
        sqlite3_finalize(probe);
        return raw;
      }
      sqlite3_finalize(probe);
    }
    message = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return nullptr;
  };
  std::string message;
  sqlite3* raw = try_open(file_uri(path) + "?mode=ro", message);
  if (!raw && read_only_reason(path)) raw = try_open(file_uri(path) + "?immutable=1", message);
  if (!raw) throw error("cannot open: " + message);
  ResultStore store(raw, path);
  const int version = user_version(raw);
  if (version == kSchemaVersion) return store;
  if (version > kSchemaVersion) {
    throw error("schema version " + std::to_string(version) +
                " is newer than this kbench understands (" + std::to_string(kSchemaVersion) +
                "); upgrade kbench");
  }
  if (const auto why = read_only_reason(path)) {
    throw error("schema version " + std::to_string(version) + " is older than this kbench's (" +
                std::to_string(kSchemaVersion) + ") and cannot be upgraded here (" + *why + ")");
  }
  return open(path);
}

void ResultStore::set_up() {
  sqlite3* raw = handle();
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  // Garbage files are only detected here, on first access: SQLite opens lazily.
  if (path_ != ":memory:") {
    // WAL lets `kbench report` read while an eval writes, and commits with one fsync-free append.
    Statement wal(raw, "PRAGMA journal_mode = WAL");
    wal.run();
  }
  // synchronous=NORMAL under WAL survives process crashes (what the kill test checks) and loses at
  // most the last commits on power loss, which is acceptable for benchmark results.
  exec(raw, "PRAGMA synchronous = NORMAL");
  exec(raw, "PRAGMA foreign_keys = ON");
  migrate(raw);
}

ResultStore::ResultStore(ResultStore&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      path_(std::move(other.path_)),
      after_insert_hook_(std::move(other.after_insert_hook_)) {}

ResultStore& ResultStore::operator=(ResultStore&& other) noexcept {
  if (this != &other) {
    if (db_) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
    after_insert_hook_ = std::move(other.after_insert_hook_);
  }
  return *this;
}

ResultStore::~ResultStore() {
  if (db_) sqlite3_close_v2(db_);
}

sqlite3* ResultStore::handle() const {
  if (!db_) throw StoreError("database: used after being moved from");
  return db_;
}

std::int64_t ResultStore::record(const EvalResult& result, const Environment& env,
                                 std::optional<std::int64_t> run_id) {
  sqlite3* db = handle();
  Transaction txn(db, "BEGIN IMMEDIATE");
  if (run_id) check_run_accepts(db, *run_id, result.workload);
  const std::int64_t id = insert_result(result, env, run_id);
  txn.commit();
  return id;
}

std::int64_t ResultStore::insert_result(const EvalResult& result, const Environment& env,
                                        std::optional<std::int64_t> run_id) {
  sqlite3* db = handle();
  const std::string now = utc_now_iso8601();
  const std::string created_at = result.created_at.empty() ? now : result.created_at;

  // Samples live in their own table and the source in its own column; full_json carries the rest.
  json full = to_json(result, {.include_samples = false, .include_source = false});
  full["created_at"] = created_at;
  const std::int64_t env_id = upsert_environment(db, env, now);

  Statement insert(
      db,
      "INSERT INTO results (created_at, kind, workload, size, threads, status, error, diagnostics, "
      "candidate_path, candidate_hash, candidate_source, passed, trials, seeds, max_abs_err, "
      "max_rel_err, rel_l2_err, correctness_detail, candidate_median_ms, candidate_p25_ms, "
      "candidate_p75_ms, candidate_iters, baseline_median_ms, baseline_p25_ms, baseline_p75_ms, "
      "baseline_iters, speedup, speedup_ci_lo, speedup_ci_hi, gflops, pct_peak_flops, gbps, "
      "pct_peak_bw, warmup, wall_s, env_id, full_json, speedup_verdict, stable, steal_pct, "
      "disturbed_calls, stop_reason, pct_roofline, bound, baseline_gemm_plan, run_id) "
      "VALUES (:created_at, :kind, :workload, :size, :threads, :status, :error, :diagnostics, "
      ":candidate_path, :candidate_hash, :candidate_source, :passed, :trials, :seeds, "
      ":max_abs_err, "
      ":max_rel_err, :rel_l2_err, :correctness_detail, :candidate_median_ms, :candidate_p25_ms, "
      ":candidate_p75_ms, :candidate_iters, :baseline_median_ms, :baseline_p25_ms, "
      ":baseline_p75_ms, :baseline_iters, :speedup, :speedup_ci_lo, :speedup_ci_hi, :gflops, "
      ":pct_peak_flops, :gbps, :pct_peak_bw, :warmup, :wall_s, :env_id, :full_json, "
      ":speedup_verdict, :stable, :steal_pct, :disturbed_calls, :stop_reason, :pct_roofline, "
      ":bound, :baseline_gemm_plan, :run_id)");
  insert.bind_text(":created_at", created_at);
  insert.bind_text(":kind", result.kind);
  insert.bind_text(":workload", result.workload);
  insert.bind_text(":size", result.size);
  insert.bind_int(":threads", result.threads);
  insert.bind_text(":status", status_name(result.status));
  insert.bind_text(":error", result.error);
  insert.bind_text(":diagnostics", result.diagnostics);
  insert.bind_text(":candidate_path", result.candidate_path);
  insert.bind_text(":candidate_hash", result.candidate_hash);
  insert.bind_text(":candidate_source", result.candidate_source);
  const CorrectnessReport& correctness = result.correctness;
  insert.bind_int(":passed", correctness.passed ? 1 : 0);
  insert.bind_int(":trials", correctness.trials);
  insert.bind_text(":seeds", json(correctness.seeds).dump());
  insert.bind_double(":max_abs_err", correctness.max_abs_err);
  insert.bind_double(":max_rel_err", correctness.max_rel_err);
  insert.bind_double(":rel_l2_err", correctness.rel_l2_err);
  insert.bind_text(":correctness_detail", correctness.detail);
  bind_timing(insert, "candidate", result.candidate);
  bind_timing(insert, "baseline", result.baseline);
  insert.bind_double(":speedup", result.speedup);
  if (result.speedup_ci95) {
    insert.bind_double(":speedup_ci_lo", result.speedup_ci95->first);
    insert.bind_double(":speedup_ci_hi", result.speedup_ci95->second);
  } else {
    insert.bind_null(":speedup_ci_lo");
    insert.bind_null(":speedup_ci_hi");
  }
  const std::optional<Utilization>& util = result.utilization;
  insert.bind_double(":gflops", util ? std::optional(util->gflops) : std::nullopt);
  insert.bind_double(":pct_peak_flops", util ? std::optional(util->pct_peak_flops) : std::nullopt);
  insert.bind_double(":gbps", util ? std::optional(util->gbps) : std::nullopt);
  insert.bind_double(":pct_peak_bw", util ? std::optional(util->pct_peak_bw) : std::nullopt);
  insert.bind_int(":warmup", result.warmup);
  insert.bind_double(":wall_s", result.wall_s);
  insert.bind_int(":env_id", env_id);
  insert.bind_text(":full_json", dump_json(full));
  if (result.speedup_verdict.empty()) {
    insert.bind_null(":speedup_verdict");
  } else {
    insert.bind_text(":speedup_verdict", result.speedup_verdict);
  }
  if (const std::optional<NoiseReport>& noise = result.noise) {
    insert.bind_int(":stable", noise->stable ? 1 : 0);
    insert.bind_double(":steal_pct", noise->steal_pct);
    insert.bind_int(":disturbed_calls", noise->disturbed_calls);
    insert.bind_text(":stop_reason", noise->stop_reason);
  } else {
    for (const char* name : {":stable", ":steal_pct", ":disturbed_calls", ":stop_reason"})
      insert.bind_null(name);
  }
  if (util && !util->bound.empty()) {
    insert.bind_double(":pct_roofline", util->pct_roofline);
    insert.bind_text(":bound", util->bound);
  } else {
    insert.bind_null(":pct_roofline");
    insert.bind_null(":bound");
  }
  insert.bind_text(":baseline_gemm_plan", result.baseline_gemm_plan);
  if (run_id) {
    insert.bind_int(":run_id", *run_id);
  } else {
    insert.bind_null(":run_id");
  }
  insert.run();
  const std::int64_t id = sqlite3_last_insert_rowid(db);

  Statement sample(
      db,
      "INSERT INTO samples (result_id, side, iter, ms, wait_ms, offcpu_ms, cpu_ms, adjusted_ms, "
      "disturbed) VALUES (:result_id, :side, :iter, :ms, :wait_ms, :offcpu_ms, :cpu_ms, "
      ":adjusted_ms, :disturbed)");
  insert_samples(sample, id, "candidate", result.candidate);
  if (after_insert_hook_) after_insert_hook_();
  insert_samples(sample, id, "baseline", result.baseline);
  return id;
}

std::optional<EvalResult> ResultStore::result_by_id(std::int64_t id) const {
  sqlite3* db = handle();
  Transaction snapshot(db, "BEGIN");
  Statement rows(db, "SELECT id, full_json, candidate_source FROM results WHERE id = :id");
  rows.bind_int(":id", id);
  std::vector<EvalResult> results = read_results(db, path_, rows);
  snapshot.commit();
  if (results.empty()) return std::nullopt;
  return std::move(results.front());
}

std::int64_t ResultStore::record_agent_sample(agents::AgentSample& sample,
                                              const EvalResult* evaluation,
                                              const Environment& env) {
  sqlite3* db = handle();
  Transaction txn(db, "BEGIN IMMEDIATE");
  const auto refuse = [&](const std::string& why) {
    throw StoreError("database '" + db_label(db) + "': run " + std::to_string(sample.run_id) + " " +
                     why);
  };
  Statement run(db, "SELECT completed_at IS NOT NULL FROM runs WHERE id = :id");
  run.bind_int(":id", sample.run_id);
  if (!run.step()) refuse("does not exist");
  if (run.column_int(0) != 0) refuse("is already complete");
  Statement existing(db,
                     "SELECT id FROM agent_samples WHERE run_id = :run AND workload = :workload "
                     "AND idx = :idx");
  existing.bind_int(":run", sample.run_id);
  existing.bind_text(":workload", sample.workload);
  existing.bind_int(":idx", sample.index);
  if (existing.step()) {
    refuse("already has sample " + std::to_string(sample.index) + " of " + sample.workload +
           " (is another kbench resuming the same agent run?)");
  }
  if (evaluation) sample.result_id = insert_result(*evaluation, env, std::nullopt);
  if (sample.created_at.empty()) sample.created_at = utc_now_iso8601();
  Statement insert(
      db,
      "INSERT INTO agent_samples (run_id, method, workload, size, model, idx, round, parent_idx, "
      "phase, plan, prompt_hash, prompt_tokens, completion_tokens, latency_s, status, error, "
      "speedup, speedup_verdict, pct_roofline, result_id, reply, code, created_at) VALUES (:run, "
      ":method, :workload, :size, :model, :idx, :round, :parent, :phase, :plan, :hash, :ptok, "
      ":ctok, :latency, :status, :error, :speedup, :verdict, :roofline, :result, :reply, :code, "
      ":created_at)");
  insert.bind_int(":run", sample.run_id);
  insert.bind_text(":method", sample.method);
  insert.bind_text(":workload", sample.workload);
  insert.bind_text(":size", sample.size);
  insert.bind_text(":model", sample.model);
  insert.bind_int(":idx", sample.index);
  insert.bind_int(":round", sample.round);
  if (sample.parent) {
    insert.bind_int(":parent", *sample.parent);
  } else {
    insert.bind_null(":parent");
  }
  insert.bind_text(":phase", sample.phase);
  insert.bind_text(":plan", sample.plan);
  insert.bind_text(":hash", sample.prompt_hash);
  insert.bind_int(":ptok", sample.prompt_tokens);
  insert.bind_int(":ctok", sample.completion_tokens);
  insert.bind_double(":latency", sample.latency_s);
  insert.bind_text(":status", sample.status);
  insert.bind_text(":error", sample.error);
  insert.bind_double(":speedup", sample.speedup);
  insert.bind_text(":verdict", sample.speedup_verdict);
  insert.bind_double(":roofline", sample.pct_roofline);
  if (sample.result_id) {
    insert.bind_int(":result", *sample.result_id);
  } else {
    insert.bind_null(":result");
  }
  insert.bind_text(":reply", sample.reply);
  insert.bind_text(":code", sample.code);
  insert.bind_text(":created_at", sample.created_at);
  insert.run();
  const std::int64_t id = sqlite3_last_insert_rowid(db);
  txn.commit();
  return id;
}

std::vector<agents::AgentSample> ResultStore::agent_samples(
    const std::vector<std::int64_t>& run_ids) const {
  sqlite3* db = handle();
  Transaction snapshot(db, "BEGIN");
  // json_each over the id list keeps the statement fixed however many runs are asked for.
  Statement rows(db,
                 "SELECT run_id, method, workload, size, model, idx, round, parent_idx, phase, "
                 "plan, prompt_hash, prompt_tokens, completion_tokens, latency_s, status, error, "
                 "speedup, speedup_verdict, pct_roofline, result_id, reply, code, created_at "
                 "FROM agent_samples WHERE :all OR run_id IN (SELECT value FROM json_each(:ids)) "
                 "ORDER BY run_id, workload, idx");
  rows.bind_int(":all", run_ids.empty() ? 1 : 0);
  rows.bind_text(":ids", json(run_ids).dump());
  std::vector<agents::AgentSample> samples;
  while (rows.step()) {
    agents::AgentSample s;
    s.run_id = rows.column_int(0);
    s.method = rows.column_text(1);
    s.workload = rows.column_text(2);
    s.size = rows.column_text(3);
    s.model = rows.column_text(4);
    s.index = static_cast<int>(rows.column_int(5));
    s.round = static_cast<int>(rows.column_int(6));
    if (!rows.column_is_null(7)) s.parent = static_cast<int>(rows.column_int(7));
    s.phase = rows.column_text(8);
    s.plan = rows.column_text(9);
    s.prompt_hash = rows.column_text(10);
    s.prompt_tokens = static_cast<int>(rows.column_int(11));
    s.completion_tokens = static_cast<int>(rows.column_int(12));
    s.latency_s = rows.column_is_null(13) ? 0 : rows.column_double(13);
    s.status = rows.column_text(14);
    s.error = rows.column_text(15);
    if (!rows.column_is_null(16)) s.speedup = rows.column_double(16);
    s.speedup_verdict = rows.column_text(17);
    if (!rows.column_is_null(18)) s.pct_roofline = rows.column_double(18);
    if (!rows.column_is_null(19)) s.result_id = rows.column_int(19);
    s.reply = rows.column_text(20);
    s.code = rows.column_text(21);
    s.created_at = rows.column_text(22);
    samples.push_back(std::move(s));
  }
  snapshot.commit();
  return samples;
}

std::vector<EvalResult> ResultStore::recent(int limit, std::optional<std::string> workload,
                                            std::optional<std::string> kind) const {
  sqlite3* db = handle();
  // One read snapshot for the rows and their samples, so a concurrent writer cannot interleave.
  Transaction snapshot(db, "BEGIN");
  Statement rows(
      db,
      "SELECT id, full_json, candidate_source FROM results "
      "WHERE (:workload IS NULL OR workload = :workload) AND (:kind IS NULL OR kind = :kind) "
      "ORDER BY id DESC LIMIT :limit");
  if (workload) {
    rows.bind_text(":workload", *workload);
  } else {
    rows.bind_null(":workload");
  }
  if (kind) {
    rows.bind_text(":kind", *kind);
  } else {
    rows.bind_null(":kind");
  }
  rows.bind_int(":limit", limit < 0 ? -1 : limit);  // SQLite reads LIMIT -1 as "no limit"
  std::vector<EvalResult> results = read_results(db, path_, rows);
  snapshot.commit();
  return results;
}

ResultStore::RunStart ResultStore::begin_or_resume_run(const std::string& key,
                                                       const std::string& command) {
  sqlite3* db = handle();
  // The write lock from the start: two processes starting the same command at once must not both
  // see "no open run" and create two.
  Transaction txn(db, "BEGIN IMMEDIATE");
  Statement open_run(db,
                     "SELECT id FROM runs WHERE key = :key AND completed_at IS NULL "
                     "ORDER BY id DESC LIMIT 1");
  open_run.bind_text(":key", key);
  RunStart start;
  if (open_run.step()) {
    start = {.id = open_run.column_int(0), .resumed = true};
  } else {
    Statement insert(db,
                     "INSERT INTO runs (key, command, created_at) VALUES (:key, :command, :now)");
    insert.bind_text(":key", key);
    insert.bind_text(":command", command);
    insert.bind_text(":now", utc_now_iso8601());
    insert.run();
    start = {.id = sqlite3_last_insert_rowid(db), .resumed = false};
  }
  txn.commit();
  return start;
}

std::vector<EvalResult> ResultStore::results_of_run(std::int64_t run_id) const {
  sqlite3* db = handle();
  Transaction snapshot(db, "BEGIN");
  Statement rows(db,
                 "SELECT id, full_json, candidate_source FROM results WHERE run_id = :run_id "
                 "ORDER BY id");
  rows.bind_int(":run_id", run_id);
  std::vector<EvalResult> results = read_results(db, path_, rows);
  snapshot.commit();
  return results;
}

void ResultStore::complete_run(std::int64_t run_id) {
  sqlite3* db = handle();
  // COALESCE keeps the first completion time and still counts the row as changed.
  Statement update(db,
                   "UPDATE runs SET completed_at = COALESCE(completed_at, :now) WHERE id = :id");
  update.bind_text(":now", utc_now_iso8601());
  update.bind_int(":id", run_id);
  update.run();
  if (sqlite3_changes(db) == 0) {
    throw StoreError("database '" + db_label(db) + "': run " + std::to_string(run_id) +
                     " does not exist");
  }
}

std::optional<std::string> ResultStore::cache_get(const std::string& key) const {
  Statement query(handle(), "SELECT value FROM cache WHERE key = :key");
  query.bind_text(":key", key);
  if (!query.step()) return std::nullopt;
  return query.column_text(0);
}

void ResultStore::cache_put(const std::string& key, const std::string& value) {
  Statement upsert(
      handle(),
      "INSERT INTO cache (key, value, updated_at) VALUES (:key, :value, :now) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at");
  upsert.bind_text(":key", key);
  upsert.bind_text(":value", value);
  upsert.bind_text(":now", utc_now_iso8601());
  upsert.run();
}

}  // namespace kbench
