// The agents' samples in the store: each written with its evaluation in one transaction, and read
// back by run.
#include <nlohmann/json.hpp>

#include "core/environment.h"
#include "store/runs.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace kbench {

using sqlite::Statement;
using sqlite::Transaction;

std::int64_t ResultStore::record_agent_sample(AgentSample& sample, const EvalResult* evaluation,
                                              const Environment& env) {
  sqlite3* db = handle();
  Transaction txn(db, "BEGIN IMMEDIATE");
  require_open_run(db, sample.run_id);
  Statement existing(db,
                     "SELECT id FROM agent_samples WHERE run_id = :run AND workload = :workload "
                     "AND idx = :idx");
  existing.bind_int(":run", sample.run_id);
  existing.bind_text(":workload", sample.workload);
  existing.bind_int(":idx", sample.index);
  if (existing.step()) {
    refuse_run(db, sample.run_id,
               "already has sample " + std::to_string(sample.index) + " of " + sample.workload +
                   " (is another kbench resuming the same agent run?)");
  }
  if (evaluation) sample.result_id = insert_result(*evaluation, env, std::nullopt);
  if (sample.created_at.empty()) sample.created_at = utc_now_iso8601();
  sqlite::Row row;
  row.integer("run_id", sample.run_id)
      .text("method", sample.method)
      .text("workload", sample.workload)
      .text("size", sample.size)
      .text("model", sample.model)
      .integer("idx", sample.index)
      .integer("round", sample.round)
      .integer("parent_idx",
               sample.parent ? std::optional<std::int64_t>(*sample.parent) : std::nullopt)
      .text("phase", sample.phase)
      .text("plan", sample.plan)
      .text("prompt_hash", sample.prompt_hash)
      .integer("prompt_tokens", sample.prompt_tokens)
      .integer("completion_tokens", sample.completion_tokens)
      .real("latency_s", sample.latency_s)
      .text("status", sample.status)
      .text("error", sample.error)
      .real("speedup", sample.speedup)
      .text("speedup_verdict", sample.speedup_verdict)
      .real("pct_roofline", sample.pct_roofline)
      .integer("result_id", sample.result_id)
      .text("reply", sample.reply)
      .text("code", sample.code)
      .text("created_at", sample.created_at);
  const std::int64_t id = row.insert_into(db, "agent_samples");
  txn.commit();
  return id;
}

std::vector<AgentSample> ResultStore::agent_samples(
    const std::vector<std::int64_t>& run_ids) const {
  sqlite3* db = handle();
  Transaction snapshot(db, "BEGIN");
  // json_each over the id list keeps the statement fixed however many runs are asked for.
  Statement rows(db,
                 "SELECT s.run_id, s.method, s.workload, s.size, s.model, s.idx, s.round, "
                 "s.parent_idx, s.phase, s.plan, s.prompt_hash, s.prompt_tokens, "
                 "s.completion_tokens, s.latency_s, s.status, s.error, s.speedup, "
                 "s.speedup_verdict, s.pct_roofline, s.result_id, s.reply, s.code, s.created_at, "
                 "e.hostname || ' (' || e.cpu_model || ')' "
                 "FROM agent_samples s LEFT JOIN results r ON r.id = s.result_id "
                 "LEFT JOIN environments e ON e.id = r.env_id "
                 "WHERE :all OR s.run_id IN (SELECT value FROM json_each(:ids)) "
                 "ORDER BY s.run_id, s.workload, s.idx");
  rows.bind_int(":all", run_ids.empty() ? 1 : 0);
  rows.bind_text(":ids", nlohmann::json(run_ids).dump());
  std::vector<AgentSample> samples;
  while (rows.step()) {
    AgentSample s;
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
    if (!rows.column_is_null(23)) s.machine = rows.column_text(23);
    samples.push_back(std::move(s));
  }
  snapshot.commit();
  return samples;
}

}  // namespace kbench
