// ResultStore: opening (read-write with migrations, or read-only), the one-transaction record()
// that keeps a killed process from leaving half a result behind, runs, results and the cache.
// The SQLite wrapper is store/sqlite.h, the tables store/schema.cc, agent samples
// store/agent_samples.cc.
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
#include "store/runs.h"
#include "store/schema.h"
#include "store/sqlite.h"

namespace kbench {
namespace {

using nlohmann::json;
using schema::migrate;
using schema::user_version;
using sqlite::db_label;
using sqlite::exec;
using sqlite::Statement;
using sqlite::Transaction;

// Long enough to queue behind another process's record() (milliseconds of inserts) or a WAL
// checkpoint, short enough that a wedged writer surfaces as an error instead of a hang.
constexpr int kBusyTimeoutMs = 5000;

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

void add_timing(sqlite::Row& row, const std::string& side,
                const std::optional<TimingSummary>& timing) {
  const auto column = [&](const char* field) { return side + "_" + field; };
  const std::string median = column("median_ms"), p25 = column("p25_ms"), p75 = column("p75_ms"),
                    iters = column("iters");
  if (timing) {
    row.real(median.c_str(), timing->median_ms)
        .real(p25.c_str(), timing->p25_ms)
        .real(p75.c_str(), timing->p75_ms)
        .integer(iters.c_str(), timing->iters);
  } else {
    for (const std::string* name : {&median, &p25, &p75, &iters}) row.null(name->c_str());
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

// read_results over the rows `sql` selects once `bind_parameters` has bound them, in one read
// snapshot of its own.
template <typename BindParameters>
std::vector<EvalResult> read_results_in_snapshot(sqlite3* db, const std::string& path,
                                                 const char* sql, BindParameters bind_parameters) {
  Transaction snapshot(db, "BEGIN");
  Statement rows(db, sql);
  bind_parameters(rows);
  std::vector<EvalResult> results = read_results(db, path, rows);
  snapshot.commit();
  return results;
}

// Inside record()'s transaction: a result may join only an open run, and only once per workload.
void check_run_accepts(sqlite3* db, std::int64_t run_id, const std::string& workload) {
  require_open_run(db, run_id);
  Statement existing(db, "SELECT id FROM results WHERE run_id = :id AND workload = :workload");
  existing.bind_int(":id", run_id);
  existing.bind_text(":workload", workload);
  if (existing.step()) {
    refuse_run(db, run_id,
               "already has result " + std::to_string(existing.column_int(0)) + " for " + workload +
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
  if (!std::filesystem::exists(path, ec)) {
    // Empty, in memory; but a message about what it lacks names the file the user gave.
    ResultStore empty = open(":memory:");
    empty.path_ = path;
    return empty;
  }

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

  const CorrectnessReport& correctness = result.correctness;
  const std::optional<Utilization>& util = result.utilization;
  const auto from_util = [&util](double Utilization::*field) {
    return util ? std::optional(util.value().*field) : std::nullopt;
  };
  sqlite::Row row;
  row.text("created_at", created_at)
      .text("kind", result.kind)
      .text("workload", result.workload)
      .text("size", result.size)
      .integer("threads", result.threads)
      .text("status", status_name(result.status))
      .text("error", result.error)
      .text("diagnostics", result.diagnostics)
      .text("candidate_path", result.candidate_path)
      .text("candidate_hash", result.candidate_hash)
      .text("candidate_source", result.candidate_source)
      .integer("passed", correctness.passed ? 1 : 0)
      .integer("trials", correctness.trials)
      .text("seeds", json(correctness.seeds).dump())
      .real("max_abs_err", correctness.measured(&CorrectnessReport::max_abs_err))
      .real("max_rel_err", correctness.measured(&CorrectnessReport::max_rel_err))
      .real("rel_l2_err", correctness.measured(&CorrectnessReport::rel_l2_err))
      .text("correctness_detail", correctness.detail);
  add_timing(row, "candidate", result.candidate);
  add_timing(row, "baseline", result.baseline);
  row.real("speedup", result.speedup)
      .real("speedup_ci_lo",
            result.speedup_ci95 ? std::optional(result.speedup_ci95->first) : std::nullopt)
      .real("speedup_ci_hi",
            result.speedup_ci95 ? std::optional(result.speedup_ci95->second) : std::nullopt)
      .real("gflops", from_util(&Utilization::gflops))
      .real("pct_peak_flops", from_util(&Utilization::pct_peak_flops))
      .real("gbps", from_util(&Utilization::gbps))
      .real("pct_peak_bw", from_util(&Utilization::pct_peak_bw))
      .integer("warmup", result.warmup)
      .real("wall_s", result.wall_s)
      .integer("env_id", env_id)
      .text("full_json", dump_json(full));
  if (result.speedup_verdict.empty())
    row.null("speedup_verdict");
  else
    row.text("speedup_verdict", result.speedup_verdict);
  if (const std::optional<NoiseReport>& noise = result.noise) {
    row.integer("stable", noise->stable ? 1 : 0)
        .real("steal_pct", noise->steal_pct)
        .integer("disturbed_calls", noise->disturbed_calls)
        .text("stop_reason", noise->stop_reason);
  } else {
    for (const char* column : {"stable", "steal_pct", "disturbed_calls", "stop_reason"})
      row.null(column);
  }
  if (util && !util->bound.empty())
    row.real("pct_roofline", util->pct_roofline).text("bound", util->bound);
  else
    row.null("pct_roofline").null("bound");
  row.text("baseline_gemm_plan", result.baseline_library_plan).integer("run_id", run_id);
  const std::int64_t id = row.insert_into(db, "results");

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
  std::vector<EvalResult> results = read_results_in_snapshot(
      handle(), path_, "SELECT id, full_json, candidate_source FROM results WHERE id = :id",
      [id](Statement& rows) { rows.bind_int(":id", id); });
  if (results.empty()) return std::nullopt;
  return std::move(results.front());
}

std::vector<EvalResult> ResultStore::recent(int limit, const Filter& filter) const {
  return read_results_in_snapshot(
      handle(), path_,
      "SELECT id, full_json, candidate_source FROM results "
      "WHERE (:workload IS NULL OR workload = :workload) AND (:kind IS NULL OR kind = :kind) "
      "AND (:status IS NULL OR status = :status) ORDER BY id DESC LIMIT :limit",
      [&](Statement& rows) {
        rows.bind_text_or_null(":workload", filter.workload);
        rows.bind_text_or_null(":kind", filter.kind);
        rows.bind_text_or_null(":status", filter.status);
        rows.bind_int(":limit", limit < 0 ? -1 : limit);  // SQLite reads LIMIT -1 as "no limit"
      });
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
  return read_results_in_snapshot(
      handle(), path_,
      "SELECT id, full_json, candidate_source FROM results WHERE run_id = :run_id ORDER BY id",
      [run_id](Statement& rows) { rows.bind_int(":run_id", run_id); });
}

std::optional<ResultStore::Run> ResultStore::run_by_id(std::int64_t run_id) const {
  Statement query(handle(),
                  "SELECT key, command, completed_at IS NOT NULL FROM runs WHERE id = :id");
  query.bind_int(":id", run_id);
  if (!query.step()) return std::nullopt;
  return Run{.id = run_id,
             .key = query.column_text(0),
             .command = query.column_text(1),
             .complete = query.column_int(2) != 0};
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
