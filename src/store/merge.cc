// `kbench merge`: the shard databases of a sweep copied into one, row by row with new ids, each
// shard in one transaction. A complete run, a result outside any run and an environment that the
// destination already holds are recognised by their content and not copied again, so merging a
// shard twice adds nothing.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/readable_file.h"
#include "store/schema.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace kbench {
namespace {

using sqlite::Statement;
using sqlite::Transaction;
using Overrides = std::map<std::string, std::optional<std::int64_t>>;

// The columns of `table` in this kbench's schema, but `id` and those in `except`. Names come from
// the destination, which this kbench created: never from the shard.
std::vector<std::string> columns_of(sqlite3* db, const std::string& table,
                                    const std::vector<std::string>& except = {}) {
  Statement info(db, ("PRAGMA table_info(" + table + ")").c_str());
  std::vector<std::string> columns;
  while (info.step()) {
    const std::string name = info.column_text(1);
    if (name != "id" && std::find(except.begin(), except.end(), name) == except.end())
      columns.push_back(name);
  }
  return columns;
}

// "a IS ?1 AND b IS ?2": each name, `suffix` and its parameter number, `separator` between.
std::string numbered(const std::vector<std::string>& names, const std::string& separator,
                     const std::string& suffix) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text.append(separator);
    text.append(names[i]).append(suffix).append(std::to_string(i + 1));
  }
  return text;
}

std::string column_list(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) {
    if (!text.empty()) text.append(", ");
    text.append(n);
  }
  return text;
}

// The order rows of `table` were written in: timing samples have no id of their own.
std::string row_order(const std::string& table) {
  return table == "samples" ? "side, iter" : "id";
}

// Copies every row of the shard's `table` whose `key_column` is `key` (its id, or a timing
// sample's result_id) into the destination with new ids, `overrides` (column -> value, NULL where
// empty) replacing the shard's values. Returns the new ids (0 for tables without one), in the
// shard's row order.
std::vector<std::int64_t> copy_rows(sqlite3* from, sqlite3* to, const std::string& table,
                                    const std::string& key_column, std::int64_t key,
                                    const Overrides& overrides = {}) {
  const std::vector<std::string> columns = columns_of(to, table);
  Statement read(from, ("SELECT " + column_list(columns) + " FROM " + table + " WHERE " +
                        key_column + " = :key ORDER BY " + row_order(table))
                           .c_str());
  read.bind_int(":key", key);
  const std::vector<std::string> unnamed(columns.size());
  Statement write(to, ("INSERT INTO " + table + " (" + column_list(columns) + ") VALUES (" +
                       numbered(unnamed, ", ", "?") + ")")
                          .c_str());
  std::vector<std::int64_t> ids;
  while (read.step()) {
    write.reset();
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string parameter = std::string("?").append(std::to_string(i + 1));
      const auto replaced = overrides.find(columns[i]);
      if (replaced == overrides.end())
        write.bind_value(static_cast<int>(i + 1), read.column_value(static_cast<int>(i)));
      else if (replaced->second)
        write.bind_int(parameter.c_str(), *replaced->second);
      else
        write.bind_null(parameter.c_str());
    }
    write.run();
    ids.push_back(sqlite3_last_insert_rowid(to));
  }
  return ids;
}

// The destination's row of `table` whose `columns` hold the shard row `old_id`'s values (NULL
// matching NULL), if any.
std::optional<std::int64_t> matching_row(sqlite3* from, sqlite3* to, const std::string& table,
                                         std::int64_t old_id,
                                         const std::vector<std::string>& columns,
                                         const std::string& extra_condition = "") {
  Statement read(from,
                 ("SELECT " + column_list(columns) + " FROM " + table + " WHERE id = :id").c_str());
  read.bind_int(":id", old_id);
  if (!read.step()) return std::nullopt;
  Statement find(to, ("SELECT id FROM " + table + " WHERE " + numbered(columns, " AND ", " IS ?") +
                      extra_condition + " LIMIT 1")
                         .c_str());
  for (std::size_t i = 0; i < columns.size(); ++i)
    find.bind_value(static_cast<int>(i + 1), read.column_value(static_cast<int>(i)));
  if (!find.step()) return std::nullopt;
  return find.column_int(0);
}

std::vector<std::int64_t> ids_of(sqlite3* db, const char* sql) {
  Statement rows(db, sql);
  std::vector<std::int64_t> ids;
  while (rows.step()) ids.push_back(rows.column_int(0));
  return ids;
}

// One shard into the destination, inside the caller's transactions on both.
class ShardCopy {
 public:
  ShardCopy(sqlite3* from, sqlite3* to) : from_(from), to_(to) {}

  ResultStore::ShardMerge run() {
    for (const std::int64_t run : ids_of(from_, "SELECT id FROM runs ORDER BY id")) copy_run(run);
    // Results outside runs; an agent sample's evaluation goes with its run.
    for (const std::int64_t id :
         ids_of(from_,
                "SELECT id FROM results WHERE run_id IS NULL AND id NOT IN (SELECT result_id "
                "FROM agent_samples WHERE result_id IS NOT NULL) ORDER BY id")) {
      const std::vector<std::string> record = {"created_at", "workload", "kind", "full_json",
                                               "candidate_source"};
      if (matching_row(from_, to_, "results", id, record, " AND run_id IS NULL")) {
        ++merge_.results_present;
        continue;
      }
      copy_result(id, std::nullopt);
    }
    return merge_;
  }

 private:
  void copy_run(std::int64_t run) {
    Statement describe(from_,
                       "SELECT command, completed_at IS NULL, (SELECT count(*) FROM results "
                       "WHERE run_id = :run), (SELECT count(*) FROM agent_samples WHERE run_id = "
                       ":run) FROM runs WHERE id = :run");
    describe.bind_int(":run", run);
    describe.step();
    if (describe.column_int(1) != 0) {
      merge_.incomplete.push_back("run " + std::to_string(run) + " (" + describe.column_text(0) +
                                  "): " + std::to_string(describe.column_int(2)) + " results, " +
                                  std::to_string(describe.column_int(3)) + " agent samples");
      return;
    }
    if (matching_row(from_, to_, "runs", run, {"key", "created_at"})) {
      ++merge_.runs_present;
      return;
    }
    const std::int64_t new_run = copy_rows(from_, to_, "runs", "id", run).front();
    ++merge_.runs_added;
    Statement results(from_, "SELECT id FROM results WHERE run_id = :run ORDER BY id");
    results.bind_int(":run", run);
    while (results.step()) copy_result(results.column_int(0), new_run);
    // Each agent sample with its evaluation, which the store keeps outside the run.
    Statement samples(from_,
                      "SELECT id, result_id FROM agent_samples WHERE run_id = :run "
                      "ORDER BY id");
    samples.bind_int(":run", run);
    while (samples.step()) {
      std::optional<std::int64_t> evaluation;
      if (!samples.column_is_null(1)) evaluation = copy_result(samples.column_int(1), std::nullopt);
      copy_rows(from_, to_, "agent_samples", "id", samples.column_int(0),
                {{"run_id", new_run}, {"result_id", evaluation}});
      ++merge_.agent_samples_added;
    }
  }

  std::int64_t copy_result(std::int64_t id, std::optional<std::int64_t> new_run) {
    Statement env(from_, "SELECT env_id FROM results WHERE id = :id");
    env.bind_int(":id", id);
    env.step();
    const std::int64_t new_id =
        copy_rows(from_, to_, "results", "id", id,
                  {{"env_id", environment(env.column_int(0))}, {"run_id", new_run}})
            .front();
    copy_rows(from_, to_, "samples", "result_id", id, {{"result_id", new_id}});
    ++merge_.results_added;
    return new_id;
  }

  // The destination's id for the shard's environment `old_id`: the same content, or a copy.
  std::int64_t environment(std::int64_t old_id) {
    if (const auto known = environments_.find(old_id); known != environments_.end())
      return known->second;
    const std::vector<std::string> content =
        columns_of(to_, "environments", {"first_seen", "last_seen"});
    const std::optional<std::int64_t> same =
        matching_row(from_, to_, "environments", old_id, content);
    const std::int64_t id =
        same ? *same : copy_rows(from_, to_, "environments", "id", old_id).front();
    environments_[old_id] = id;
    return id;
  }

  sqlite3* from_;
  sqlite3* to_;
  std::map<std::int64_t, std::int64_t> environments_;
  ResultStore::ShardMerge merge_;
};

}  // namespace

void ResultStore::check_shard(const std::string& shard) {
  const auto refuse = [&](const std::string& why) {
    throw StoreError("shard '" + shard + "': " + why);
  };
  if (const std::string problem = why_not_readable_file(shard); !problem.empty()) refuse(problem);
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(shard.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  const auto close = [&raw] { sqlite3_close(raw); };
  if (rc != SQLITE_OK) {
    const std::string message = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    close();
    refuse("cannot open: " + message);
  }
  int version = 0, tables = 0;
  std::string problem;
  try {
    version = schema::user_version(raw);
    Statement count(raw,
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                    "('environments', 'results', 'samples', 'runs', 'agent_samples')");
    count.step();
    tables = static_cast<int>(count.column_int(0));
  } catch (const StoreError& e) {
    problem = e.what();
  }
  close();
  if (!problem.empty()) refuse("not a kbench database: " + problem);
  if (version != kSchemaVersion)
    refuse("schema version " + std::to_string(version) + ", this kbench merges version " +
           std::to_string(kSchemaVersion) +
           (version < kSchemaVersion && version > 0
                ? " (`kbench results --db FILE` with this kbench upgrades it)"
                : ""));
  if (tables != 5) refuse("not a kbench database (its tables are missing)");
}

ResultStore::ShardMerge ResultStore::merge_shard(const std::string& shard) {
  std::error_code ec;
  if (path_ != ":memory:" && std::filesystem::equivalent(shard, path_, ec))
    throw StoreError("shard '" + shard + "' is the database merged into");
  check_shard(shard);
  ResultStore from = open_read_only(shard);
  sqlite3* to = handle();
  Transaction write(to, "BEGIN IMMEDIATE");
  Transaction snapshot(from.handle(), "BEGIN");  // one consistent view of a shard still written
  ShardMerge merge = ShardCopy(from.handle(), to).run();
  snapshot.commit();
  write.commit();
  return merge;
}

}  // namespace kbench
