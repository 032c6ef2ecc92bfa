// Tests of ResultStore (round trips, migrations, resumable runs, atomicity under SIGKILL, errors,
// cache, ordering) and of the EvalResult JSON form it persists.
#include "store/store.h"
#include "store/machine_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/result_json.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Environment test_environment(const std::string& host = "bench-host") {
  Environment env;
  env.cpu_model = "Test CPU @ 3.0GHz";
  env.cpu_flags = "avx2 fma avx512f";
  env.logical_cpus = 2;
  env.hostname = host;
  env.compiler = "g++ (Debian 12.2.0-14) 12.2.0";
  env.libraries = "OpenBLAS 0.3.21; Highway 1.0.3; SQLite 3.40.1";
  env.kbench_commit = "abc123";
  env.build_type = "Release -march=native";
  return env;
}

// Every field set to something distinguishable, so a dropped or swapped column shows up.
EvalResult make_result(int i, const std::string& workload = "8p_GEMM",
                       const std::string& kind = "eval") {
  EvalResult r;
  r.kind = kind;
  r.workload = workload;
  r.size = "cpu";
  r.threads = 1 + i % 4;
  r.status = Status::kCorrect;
  r.diagnostics = "cand.cc:3: warning: unused variable 'x' #" + std::to_string(i);
  r.candidate_path = "/tmp/cand_" + std::to_string(i) + ".cc";
  r.candidate_source = "extern \"C\" int kb_run() { return " + std::to_string(i) + "; }\n";
  r.candidate_hash = "sha256:" + std::to_string(1000 + i);
  r.correctness.passed = true;
  r.correctness.trials = 3;
  r.correctness.seeds = {1, 42, std::numeric_limits<std::uint64_t>::max()};
  r.correctness.max_abs_err = 1e-3 * (i + 1);
  r.correctness.max_rel_err = 2.5e-3;
  r.correctness.rel_l2_err = 1.0 / 3.0;
  r.candidate = TimingSummary{1.0 + i, 0.9, 1.1, 0.8, 1.02, 5, {1.0 + i, 0.9, 1.1, 0.8, 1.3}};
  r.baseline = TimingSummary{2.0 + i, 1.9, 2.1, 1.8, 2.02, 4, {2.0, 1.9, 2.1, 1.8}};
  r.speedup = (2.0 + i) / (1.0 + i);
  r.speedup_ci95 = std::pair(1.9, 2.1);
  r.utilization = Utilization{100.5, 40.2, 20.25, 10.125, 250.0, 200.0, "fp32_fma"};
  r.utilization->math = "bf16_matmul";
  r.utilization->intensity = 170.5;
  r.utilization->balance = 30.25;
  r.utilization->bound = "compute";
  r.utilization->roofline_ms = 0.875;
  r.utilization->pct_roofline = 87.5;
  r.utilization->library_ms = 2.5;
  r.utilization->library_gflops = 180.0;
  r.utilization->library_method = "gemm 768x2688x768:nn:bf16:t1 onednn_bf16";
  r.utilization->pct_library = 55.8;
  // Scheduler measurements for the candidate's calls only: the baseline's stay unmeasured (NULL).
  r.candidate->used = 5;
  r.candidate->wall_median_ms = 1.5 + i;
  r.candidate->wait_ms = {0.0, 0.5, 0.0, 0.25, 0.0};
  r.candidate->offcpu_ms = {0.0, 0.5, 0.0, 0.25, 0.125};
  r.candidate->cpu_ms = {1.0, 0.9, 1.1, 0.8, 1.2};
  r.candidate->adjusted_ms = {1.0, 0.9, 1.1, 0.8, 1.25};
  r.candidate->disturbed = {0, 1, 0, 1, 2};
  r.speedup_verdict = "faster";
  NoiseReport noise;
  noise.cv_candidate = 0.125;
  noise.cv_baseline = 0.0625;
  noise.steal_pct = 1.5;
  noise.calls = 9;
  noise.disturbed_calls = 3;
  noise.candidate_disturbed = 3;
  noise.unadjustable_calls = 1;
  noise.clean_pairs = 2;
  noise.accounted = true;
  noise.estimator = "median_pair_ratio_adjusted";
  noise.ci_half_width_pct = 5.0;
  noise.stable = i % 2 == 0;
  noise.unstable_reason = noise.stable ? "" : "CI half-width 5.0% > 5%";
  noise.stop_reason = "time_budget";
  noise.min_iters = 10;
  noise.max_iters = 500;
  noise.time_budget_s = 10;
  if (i % 2 == 0) {
    OrderEffect order;
    order.candidate_first = 2.125;
    order.candidate_first_ci95 = {2.0, 2.25};
    order.candidate_first_pairs = 3;
    order.baseline_first = 1.875;
    order.baseline_first_ci95 = {1.75, 2.0};
    order.baseline_first_pairs = 2;
    order.split = 2.125 / 1.875;
    order.carryover = 1.25;
    order.carryover_ci95 = {1.125, 1.5};
    order.couples = 2;
    noise.order_effect = order;
  }
  r.noise = noise;
  r.library_ceiling = LibraryCeiling{
      2.5, {{"gemm 768x2688x768:nn:bf16:t1", 2, 3.17e9, "onednn_bf16", 1.25}}, i % 2 == 1};
  r.baseline_library_plan = "768x2688x768:onednn_bf16";
  r.warmup = 3;
  r.wall_s = 1.25 + i;
  r.created_at =
      "2024-05-01T12:00:" + std::string(i < 10 ? "0" : "") + std::to_string(i % 60) + "Z";
  return r;
}

// NaN compares unequal to itself; a stored NaN must come back as NaN.
void expect_same_double(double expected, double actual, const char* what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(actual)) << what << " = " << actual;
  } else {
    EXPECT_EQ(expected, actual) << what;
  }
}

void expect_same_timing(const std::optional<TimingSummary>& a,
                        const std::optional<TimingSummary>& b, const char* side) {
  ASSERT_EQ(a.has_value(), b.has_value()) << side;
  if (!a) return;
  expect_same_double(a->median_ms, b->median_ms, side);
  expect_same_double(a->p25_ms, b->p25_ms, side);
  expect_same_double(a->p75_ms, b->p75_ms, side);
  expect_same_double(a->min_ms, b->min_ms, side);
  expect_same_double(a->mean_ms, b->mean_ms, side);
  EXPECT_EQ(a->iters, b->iters) << side;
  EXPECT_EQ(a->used, b->used) << side;
  expect_same_double(a->wall_median_ms, b->wall_median_ms, side);
  for (const auto field :
       {&TimingSummary::samples_ms, &TimingSummary::wait_ms, &TimingSummary::offcpu_ms,
        &TimingSummary::cpu_ms, &TimingSummary::adjusted_ms}) {
    ASSERT_EQ(((*a).*field).size(), ((*b).*field).size()) << side;
    for (std::size_t i = 0; i < ((*a).*field).size(); ++i)
      expect_same_double(((*a).*field)[i], ((*b).*field)[i], side);
  }
  EXPECT_EQ(a->disturbed, b->disturbed) << side;
}

void expect_same_noise(const std::optional<NoiseReport>& a, const std::optional<NoiseReport>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  expect_same_double(a->cv_candidate, b->cv_candidate, "cv_candidate");
  expect_same_double(a->cv_baseline, b->cv_baseline, "cv_baseline");
  expect_same_double(a->steal_pct, b->steal_pct, "steal_pct");
  EXPECT_EQ(a->calls, b->calls);
  EXPECT_EQ(a->disturbed_calls, b->disturbed_calls);
  EXPECT_EQ(a->candidate_disturbed, b->candidate_disturbed);
  EXPECT_EQ(a->baseline_disturbed, b->baseline_disturbed);
  EXPECT_EQ(a->unadjustable_calls, b->unadjustable_calls);
  EXPECT_EQ(a->clean_pairs, b->clean_pairs);
  EXPECT_EQ(a->accounted, b->accounted);
  EXPECT_EQ(a->estimator, b->estimator);
  expect_same_double(a->ci_half_width_pct, b->ci_half_width_pct, "ci_half_width_pct");
  EXPECT_EQ(a->stable, b->stable);
  EXPECT_EQ(a->unstable_reason, b->unstable_reason);
  EXPECT_EQ(a->stop_reason, b->stop_reason);
  EXPECT_EQ(a->min_iters, b->min_iters);
  EXPECT_EQ(a->max_iters, b->max_iters);
  expect_same_double(a->time_budget_s, b->time_budget_s, "time_budget_s");
  ASSERT_EQ(a->order_effect.has_value(), b->order_effect.has_value());
  if (a->order_effect) {
    const OrderEffect &x = *a->order_effect, &y = *b->order_effect;
    expect_same_double(x.candidate_first, y.candidate_first, "candidate_first");
    expect_same_double(x.candidate_first_ci95.first, y.candidate_first_ci95.first, "cf lo");
    expect_same_double(x.candidate_first_ci95.second, y.candidate_first_ci95.second, "cf hi");
    EXPECT_EQ(x.candidate_first_pairs, y.candidate_first_pairs);
    expect_same_double(x.baseline_first, y.baseline_first, "baseline_first");
    expect_same_double(x.baseline_first_ci95.first, y.baseline_first_ci95.first, "bf lo");
    expect_same_double(x.baseline_first_ci95.second, y.baseline_first_ci95.second, "bf hi");
    EXPECT_EQ(x.baseline_first_pairs, y.baseline_first_pairs);
    expect_same_double(x.split, y.split, "split");
    expect_same_double(x.carryover, y.carryover, "carryover");
    expect_same_double(x.carryover_ci95.first, y.carryover_ci95.first, "carry lo");
    expect_same_double(x.carryover_ci95.second, y.carryover_ci95.second, "carry hi");
    EXPECT_EQ(x.couples, y.couples);
  }
}

void expect_same(const EvalResult& a, const EvalResult& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.diagnostics, b.diagnostics);
  EXPECT_EQ(a.candidate_path, b.candidate_path);
  EXPECT_EQ(a.candidate_source, b.candidate_source);
  EXPECT_EQ(a.candidate_hash, b.candidate_hash);
  EXPECT_EQ(a.correctness.passed, b.correctness.passed);
  EXPECT_EQ(a.correctness.trials, b.correctness.trials);
  EXPECT_EQ(a.correctness.seeds, b.correctness.seeds);
  expect_same_double(a.correctness.max_abs_err, b.correctness.max_abs_err, "max_abs_err");
  expect_same_double(a.correctness.max_rel_err, b.correctness.max_rel_err, "max_rel_err");
  expect_same_double(a.correctness.rel_l2_err, b.correctness.rel_l2_err, "rel_l2_err");
  EXPECT_EQ(a.correctness.detail, b.correctness.detail);
  expect_same_timing(a.candidate, b.candidate, "candidate");
  expect_same_timing(a.baseline, b.baseline, "baseline");
  ASSERT_EQ(a.speedup.has_value(), b.speedup.has_value());
  if (a.speedup) expect_same_double(*a.speedup, *b.speedup, "speedup");
  ASSERT_EQ(a.speedup_ci95.has_value(), b.speedup_ci95.has_value());
  if (a.speedup_ci95) {
    expect_same_double(a.speedup_ci95->first, b.speedup_ci95->first, "ci lo");
    expect_same_double(a.speedup_ci95->second, b.speedup_ci95->second, "ci hi");
  }
  ASSERT_EQ(a.utilization.has_value(), b.utilization.has_value());
  if (a.utilization) {
    expect_same_double(a.utilization->gflops, b.utilization->gflops, "gflops");
    expect_same_double(a.utilization->pct_peak_flops, b.utilization->pct_peak_flops,
                       "pct_peak_flops");
    expect_same_double(a.utilization->gbps, b.utilization->gbps, "gbps");
    expect_same_double(a.utilization->pct_peak_bw, b.utilization->pct_peak_bw, "pct_peak_bw");
    expect_same_double(a.utilization->peak_gflops, b.utilization->peak_gflops, "peak_gflops");
    expect_same_double(a.utilization->peak_gbps, b.utilization->peak_gbps, "peak_gbps");
    EXPECT_EQ(a.utilization->peak_flops_kind, b.utilization->peak_flops_kind);
    EXPECT_EQ(a.utilization->math, b.utilization->math);
    expect_same_double(a.utilization->intensity, b.utilization->intensity, "intensity");
    expect_same_double(a.utilization->balance, b.utilization->balance, "balance");
    EXPECT_EQ(a.utilization->bound, b.utilization->bound);
    expect_same_double(a.utilization->roofline_ms, b.utilization->roofline_ms, "roofline_ms");
    expect_same_double(a.utilization->pct_roofline, b.utilization->pct_roofline, "pct_roofline");
    expect_same_double(a.utilization->library_ms, b.utilization->library_ms, "library_ms");
    expect_same_double(a.utilization->library_gflops, b.utilization->library_gflops, "library");
    EXPECT_EQ(a.utilization->library_method, b.utilization->library_method);
    expect_same_double(a.utilization->pct_library, b.utilization->pct_library, "pct_library");
  }
  EXPECT_EQ(a.speedup_verdict, b.speedup_verdict);
  expect_same_noise(a.noise, b.noise);
  ASSERT_EQ(a.library_ceiling.has_value(), b.library_ceiling.has_value());
  if (a.library_ceiling) {
    expect_same_double(a.library_ceiling->ms, b.library_ceiling->ms, "ceiling ms");
    EXPECT_EQ(a.library_ceiling->retimed, b.library_ceiling->retimed);
    ASSERT_EQ(a.library_ceiling->parts.size(), b.library_ceiling->parts.size());
    for (std::size_t i = 0; i < a.library_ceiling->parts.size(); ++i) {
      const LibraryCeilingPart &x = a.library_ceiling->parts[i], &y = b.library_ceiling->parts[i];
      EXPECT_EQ(x.call, y.call);
      EXPECT_EQ(x.count, y.count);
      expect_same_double(x.flops, y.flops, "part flops");
      EXPECT_EQ(x.path, y.path);
      expect_same_double(x.best_ms, y.best_ms, "part best_ms");
    }
  }
  EXPECT_EQ(a.baseline_library_plan, b.baseline_library_plan);
  EXPECT_EQ(a.warmup, b.warmup);
  expect_same_double(a.wall_s, b.wall_s, "wall_s");
  EXPECT_EQ(a.created_at, b.created_at);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "kbench_store_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_path_ = (dir_ / "nested" / "results.db").string();  // open() must create "nested"
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Reads one integer or text value with a raw connection, independent of the code under test.
  std::string query(const std::string& sql) const {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    std::string value;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      value = text ? text : "NULL";
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return value;
  }
  std::int64_t count(const std::string& table) const {
    return std::stoll(query("SELECT count(*) FROM " + table));
  }

  fs::path dir_;
  std::string db_path_;
};

TEST_F(StoreTest, RecordThenRecentPreservesEveryFieldAndSample) {
  ResultStore store = ResultStore::open(db_path_);
  const EvalResult original = make_result(7);
  const std::int64_t id = store.record(original, test_environment());
  EXPECT_GT(id, 0);

  const std::vector<EvalResult> back = store.recent(10);
  ASSERT_EQ(back.size(), 1u);
  expect_same(original, back[0]);

  EXPECT_EQ(count("samples"), 9);  // 5 candidate + 4 baseline
  EXPECT_EQ(query("SELECT group_concat(ms) FROM (SELECT ms FROM samples WHERE side = 'baseline' "
                  "ORDER BY iter)"),
            "2.0,1.9,2.1,1.8");
  EXPECT_EQ(query("SELECT status || ' ' || workload || ' ' || speedup_ci_hi FROM results"),
            "correct 8p_GEMM 2.1");
  EXPECT_EQ(query("SELECT seeds FROM results"), "[1,42,18446744073709551615]");
  EXPECT_EQ(query("SELECT json_extract(full_json, '$.candidate.median_ms') FROM results"), "8.0");
}

TEST_F(StoreTest, NonFiniteAndAbsentValuesRoundTrip) {
  ResultStore store = ResultStore::open(db_path_);
  EvalResult r = make_result(1);
  r.status = Status::kIncorrect;
  r.error = "output 'c' has NaN at (0,3)";
  r.correctness.passed = false;
  r.correctness.max_abs_err = kNaN;
  r.correctness.max_rel_err = kInf;
  r.correctness.rel_l2_err = -kInf;
  r.correctness.detail = "c[0,3] = nan, expected 1.5";
  r.candidate.reset();
  r.speedup.reset();
  r.speedup_ci95.reset();
  r.utilization.reset();
  store.record(r, test_environment());

  const std::vector<EvalResult> back = store.recent(1);
  ASSERT_EQ(back.size(), 1u);
  expect_same(r, back[0]);
  // SQLite has no NaN: the column is NULL while full_json keeps the value.
  EXPECT_EQ(query("SELECT max_abs_err FROM results"), "NULL");
  EXPECT_EQ(query("SELECT candidate_median_ms FROM results"), "NULL");
  EXPECT_EQ(query("SELECT json_extract(full_json, '$.correctness.max_abs_err') FROM results"),
            "nan");
}

TEST_F(StoreTest, Schema2ColumnsHoldNoiseRooflineAndPerCallMeasurements) {
  ResultStore store = ResultStore::open(db_path_);
  store.record(make_result(2), test_environment());
  EXPECT_EQ(query("SELECT stable || ' ' || stop_reason || ' ' || disturbed_calls || ' ' || "
                  "steal_pct || ' ' || speedup_verdict FROM results"),
            "1 time_budget 3 1.5 faster");
  EXPECT_EQ(query("SELECT bound || ' ' || pct_roofline || ' ' || baseline_gemm_plan FROM results"),
            "compute 87.5 768x2688x768:onednn_bf16");
  EXPECT_EQ(query("SELECT group_concat(disturbed) FROM (SELECT disturbed FROM samples WHERE "
                  "side = 'candidate' ORDER BY iter)"),
            "0,1,0,1,2");
  EXPECT_EQ(query("SELECT count(*) FROM samples WHERE side = 'baseline' AND wait_ms IS NULL"), "4");
  EXPECT_EQ(query("SELECT json_extract(full_json, '$.noise.estimator') FROM results"),
            "median_pair_ratio_adjusted");
}

// A damaged samples row is refused with a message naming the result, never wrapped into a flag.
TEST_F(StoreTest, ADisturbedFlagOutOfRangeIsRefusedNotWrapped) {
  ResultStore store = ResultStore::open(db_path_);
  store.record(make_result(1), test_environment());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE samples SET disturbed = 300 WHERE disturbed IS NOT NULL",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const int changed = sqlite3_changes(db);
  sqlite3_close(db);
  ASSERT_GT(changed, 0) << "the record has no per-call scheduler samples to damage";
  try {
    store.recent(-1);
    FAIL() << "a disturbed flag of 300 was read";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("disturbed = 300"), std::string::npos) << e.what();
  }
}

// Turns the current file back into what a kbench of schema 3 wrote: no agent_samples.
void downgrade_to_schema3(sqlite3* db) {
  for (const char* sql : {
           "DROP TABLE agent_samples",
           "DELETE FROM sqlite_sequence WHERE name = 'agent_samples'",
           "PRAGMA user_version = 3",
       }) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db);
  }
}

// Turns the current file back into what a kbench of schema 2 wrote: no runs table, no run_id.
void downgrade_to_schema2(sqlite3* db) {
  downgrade_to_schema3(db);
  for (const char* sql : {
           "DROP INDEX results_once_per_run",
           "ALTER TABLE results DROP COLUMN run_id",
           "DROP TABLE runs",
           "DELETE FROM sqlite_sequence WHERE name = 'runs'",
           "PRAGMA user_version = 2",
       }) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db);
  }
}

// A file written by a kbench of schema 1: the v2 and v3 columns dropped again and the v2 keys
// removed from full_json, as the older version wrote it.
TEST_F(StoreTest, Schema1FileIsMigratedInPlaceAndItsRecordsStillRead) {
  EvalResult old_record = make_result(1);
  { ResultStore::open(db_path_).record(old_record, test_environment()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  downgrade_to_schema2(db);
  for (const char* sql : {
           "ALTER TABLE results DROP COLUMN speedup_verdict",
           "ALTER TABLE results DROP COLUMN stable",
           "ALTER TABLE results DROP COLUMN steal_pct",
           "ALTER TABLE results DROP COLUMN disturbed_calls",
           "ALTER TABLE results DROP COLUMN stop_reason",
           "ALTER TABLE results DROP COLUMN pct_roofline",
           "ALTER TABLE results DROP COLUMN bound",
           "ALTER TABLE results DROP COLUMN baseline_gemm_plan",
           "ALTER TABLE samples DROP COLUMN wait_ms",
           "ALTER TABLE samples DROP COLUMN offcpu_ms",
           "ALTER TABLE samples DROP COLUMN cpu_ms",
           "ALTER TABLE samples DROP COLUMN adjusted_ms",
           "ALTER TABLE samples DROP COLUMN disturbed",
           "UPDATE results SET full_json = json_remove(full_json, '$.noise', '$.speedup_verdict', "
           "'$.baseline_path', '$.candidate.used', '$.candidate.wall_median_ms', "
           "'$.baseline.used', '$.baseline.wall_median_ms', '$.math', '$.intensity', "
           "'$.balance', '$.bound', '$.roofline_ms', '$.pct_roofline', '$.library_gflops', "
           "'$.library_method', '$.pct_library')",
           "PRAGMA user_version = 1",
       }) {
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_close(db);

  ResultStore store = ResultStore::open(db_path_);
  EXPECT_EQ(query("PRAGMA user_version"), std::to_string(ResultStore::kSchemaVersion));
  store.record(make_result(2), test_environment());
  const std::vector<EvalResult> back = store.recent(-1);
  ASSERT_EQ(back.size(), 2u);
  expect_same(make_result(2), back[0]);
  // The old record: what schema 1 knew, unchanged; the rest absent, not invented.
  const EvalResult& old = back[1];
  EXPECT_EQ(old.workload, old_record.workload);
  EXPECT_FALSE(old.noise.has_value());
  EXPECT_TRUE(old.speedup_verdict.empty());
  EXPECT_TRUE(old.baseline_library_plan.empty());
  ASSERT_TRUE(old.candidate && old.utilization);
  EXPECT_EQ(old.candidate->samples_ms, old_record.candidate->samples_ms);
  EXPECT_TRUE(old.candidate->wait_ms.empty());
  EXPECT_EQ(old.candidate->used, old.candidate->iters);
  EXPECT_EQ(old.utilization->bound, "");
  EXPECT_DOUBLE_EQ(old.utilization->gflops, old_record.utilization->gflops);
}

TEST_F(StoreTest, Schema2FileIsMigratedInPlaceAndKeepsItsRows) {
  {
    ResultStore store = ResultStore::open(db_path_);
    store.record(make_result(1), test_environment());
    store.record(make_result(2), test_environment());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  downgrade_to_schema2(db);
  sqlite3_close(db);
  const std::string rows_before =
      query("SELECT group_concat(id || ' ' || created_at || ' ' || full_json, '|') FROM results");

  ResultStore store = ResultStore::open(db_path_);
  EXPECT_EQ(query("PRAGMA user_version"), std::to_string(ResultStore::kSchemaVersion));
  EXPECT_EQ(query("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(query("SELECT group_concat(id || ' ' || created_at || ' ' || full_json, '|') FROM "
                  "results"),
            rows_before);
  EXPECT_EQ(count("results WHERE run_id IS NULL"), 2);
  EXPECT_EQ(count("runs"), 0);
  const std::vector<EvalResult> back = store.recent(-1);
  ASSERT_EQ(back.size(), 2u);
  expect_same(make_result(2), back[0]);
  expect_same(make_result(1), back[1]);
  // The new parts work on the migrated file.
  const ResultStore::RunStart run = store.begin_or_resume_run("k", "kbench run");
  store.record(make_result(3, "12p_RMSNorm", "run"), test_environment(), run.id);
  EXPECT_EQ(store.results_of_run(run.id).size(), 1u);
}

TEST_F(StoreTest, AnIncompleteRunIsResumedByKeyAndACompletedOneNever) {
  ResultStore store = ResultStore::open(db_path_);
  const ResultStore::RunStart first = store.begin_or_resume_run("suite a", "kbench run -w 8p");
  EXPECT_FALSE(first.resumed);
  EXPECT_GT(first.id, 0);
  EXPECT_EQ(query("SELECT key || '|' || command || '|' || (completed_at IS NULL) FROM runs"),
            "suite a|kbench run -w 8p|1");

  const ResultStore::RunStart again = store.begin_or_resume_run("suite a", "ignored");
  EXPECT_TRUE(again.resumed);
  EXPECT_EQ(again.id, first.id);
  EXPECT_EQ(query("SELECT command FROM runs"), "kbench run -w 8p");  // the first attempt's

  const ResultStore::RunStart other = store.begin_or_resume_run("suite b", "kbench run -w 12p");
  EXPECT_FALSE(other.resumed);
  EXPECT_NE(other.id, first.id);

  store.complete_run(first.id);
  const std::string completed_at = query("SELECT completed_at FROM runs WHERE key = 'suite a'");
  EXPECT_EQ(completed_at.size(), 20u) << completed_at;
  store.complete_run(first.id);  // a no-op that keeps the first completion time
  EXPECT_EQ(query("SELECT completed_at FROM runs WHERE key = 'suite a'"), completed_at);
  const ResultStore::RunStart fresh = store.begin_or_resume_run("suite a", "kbench run -w 8p");
  EXPECT_FALSE(fresh.resumed);
  EXPECT_GT(fresh.id, other.id);
  EXPECT_TRUE(store.begin_or_resume_run("suite a", "").resumed);
  EXPECT_EQ(store.begin_or_resume_run("suite a", "").id, fresh.id);
  EXPECT_THROW(store.complete_run(fresh.id + 100), StoreError);

  const std::optional<ResultStore::Run> read = store.run_by_id(first.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->id, first.id);
  EXPECT_EQ(read->key, "suite a");
  EXPECT_EQ(read->command, "kbench run -w 8p");
  EXPECT_TRUE(read->complete);
  EXPECT_FALSE(store.run_by_id(fresh.id)->complete);
  EXPECT_FALSE(store.run_by_id(fresh.id + 100));
}

TEST_F(StoreTest, TheNewestIncompleteRunOfAKeyIsResumed) {
  ResultStore store = ResultStore::open(db_path_);
  const std::int64_t older = store.begin_or_resume_run("k", "c").id;
  // Two open runs of one key only arise from files written by hand or a future kbench; the newest
  // is the one a person most likely means.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO runs (key, command, created_at) VALUES ('k', 'c', 'x')",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  const std::int64_t newer = sqlite3_last_insert_rowid(db);
  sqlite3_close(db);
  ASSERT_GT(newer, older);
  const ResultStore::RunStart run = store.begin_or_resume_run("k", "c");
  EXPECT_TRUE(run.resumed);
  EXPECT_EQ(run.id, newer);
}

TEST_F(StoreTest, ResultsOfRunAreItsOwnOldestFirstWithSamples) {
  ResultStore store = ResultStore::open(db_path_);
  const std::int64_t a = store.begin_or_resume_run("a", "").id;
  const std::int64_t b = store.begin_or_resume_run("b", "").id;
  const EvalResult a1 = make_result(1, "12p_RMSNorm", "run");
  const EvalResult b1 = make_result(2, "12p_RMSNorm", "run");
  const EvalResult outside = make_result(3, "8p_GEMM", "run");
  const EvalResult a2 = make_result(4, "8p_GEMM", "run");
  store.record(a1, test_environment(), a);
  store.record(b1, test_environment(), b);
  store.record(outside, test_environment());
  store.record(a2, test_environment(), a);

  const std::vector<EvalResult> of_a = store.results_of_run(a);
  ASSERT_EQ(of_a.size(), 2u);
  expect_same(a1, of_a[0]);
  expect_same(a2, of_a[1]);
  const std::vector<EvalResult> of_b = store.results_of_run(b);
  ASSERT_EQ(of_b.size(), 1u);
  expect_same(b1, of_b[0]);
  EXPECT_TRUE(store.results_of_run(b + 100).empty());
  EXPECT_EQ(count("results WHERE run_id IS NULL"), 1);
  EXPECT_EQ(store.recent(-1).size(), 4u);
}

TEST_F(StoreTest, RecordRefusesUnknownCompletedAndRepeatedRunMembership) {
  ResultStore store = ResultStore::open(db_path_);
  const std::int64_t run = store.begin_or_resume_run("k", "").id;
  store.record(make_result(1, "8p_GEMM", "run"), test_environment(), run);
  const auto refused = [&](std::int64_t run_id, const std::string& workload,
                           const std::string& why) {
    try {
      store.record(make_result(2, workload, "run"), test_environment("refused-host"), run_id);
      ADD_FAILURE() << "recorded " << workload << " into run " << run_id;
    } catch (const StoreError& e) {
      EXPECT_TRUE(contains(e.what(), why)) << e.what();
      EXPECT_TRUE(contains(e.what(), db_path_)) << e.what();
    }
  };
  refused(run, "8p_GEMM", "already has result");
  refused(run + 1, "12p_RMSNorm", "does not exist");
  store.complete_run(run);
  refused(run, "12p_RMSNorm", "already complete");
  // Nothing of the refused records was written, environment included.
  EXPECT_EQ(count("results"), 1);
  EXPECT_EQ(count("samples"), 9);
  EXPECT_EQ(count("environments WHERE hostname = 'refused-host'"), 0);

  // The file itself refuses a second result per workload and run, whatever the writer.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  const std::string copy =
      "INSERT INTO results (created_at, kind, workload, size, threads, status, error, "
      "diagnostics, candidate_path, candidate_hash, candidate_source, passed, trials, seeds, "
      "correctness_detail, warmup, env_id, full_json, run_id) SELECT created_at, kind, workload, "
      "size, threads, status, error, diagnostics, candidate_path, candidate_hash, "
      "candidate_source, passed, trials, seeds, correctness_detail, warmup, env_id, full_json, "
      "run_id FROM results";
  EXPECT_EQ(sqlite3_exec(db, copy.c_str(), nullptr, nullptr, nullptr), SQLITE_CONSTRAINT);
  sqlite3_close(db);
  EXPECT_EQ(count("results"), 1);
}

TEST_F(StoreTest, KilledWriterLeavesNoPartialRecordInItsRun) {
  std::int64_t run = 0;
  {
    ResultStore store = ResultStore::open(db_path_);
    run = store.begin_or_resume_run("k", "").id;
    store.record(make_result(1, "12p_RMSNorm", "run"), test_environment(), run);
  }  // closed before fork: an SQLite connection must not cross fork()

  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    try {
      ResultStore store = ResultStore::open(db_path_);
      store.set_after_insert_hook([] { raise(SIGKILL); });
      store.record(make_result(2, "8p_GEMM", "run"), test_environment("killed-host"), run);
    } catch (...) {
    }
    _exit(3);  // only reached when the hook never ran
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);

  ResultStore store = ResultStore::open(db_path_);
  EXPECT_EQ(query("PRAGMA integrity_check"), "ok");
  const std::vector<EvalResult> kept = store.results_of_run(run);
  ASSERT_EQ(kept.size(), 1u);
  expect_same(make_result(1, "12p_RMSNorm", "run"), kept[0]);
  EXPECT_EQ(count("samples"), 9);
  EXPECT_EQ(query("SELECT completed_at IS NULL FROM runs"), "1");
  // The resumed run takes the killed workload's result once, as if the kill never happened.
  const ResultStore::RunStart resumed = store.begin_or_resume_run("k", "");
  ASSERT_TRUE(resumed.resumed);
  ASSERT_EQ(resumed.id, run);
  store.record(make_result(2, "8p_GEMM", "run"), test_environment(), run);
  store.complete_run(run);
  EXPECT_EQ(store.results_of_run(run).size(), 2u);
}

AgentSample make_agent_sample(std::int64_t run, const std::string& workload, int index) {
  AgentSample s;
  s.run_id = run;
  s.method = "iterative";
  s.workload = workload;
  s.size = "smoke";
  s.model = "model";  // not one character: GCC 12 warns about that assignment (PR 105651)
  s.index = index;
  s.round = index;
  if (index > 0) s.parent = index - 1;
  s.prompt_hash = std::to_string(index);
  s.prompt_hash += 'h';
  s.prompt_tokens = 100 + index;
  s.completion_tokens = 50;
  s.latency_s = 1.5;
  s.status = index == 0 ? "no_code" : "correct";
  s.error = index == 0 ? "the reply holds no code block" : "";
  s.reply = "reply \x01 '\"; DROP TABLE results; --";
  return s;
}

TEST_F(StoreTest, AgentSamplesRoundTripWithTheirEvaluations) {
  ResultStore store = ResultStore::open(db_path_);
  const std::int64_t run = store.begin_or_resume_run("agent-key", "kbench agent ...").id;
  AgentSample no_code = make_agent_sample(run, "8p_GEMM", 0);
  store.record_agent_sample(no_code, nullptr, test_environment());
  EXPECT_FALSE(no_code.result_id.has_value());
  AgentSample evaluated = make_agent_sample(run, "8p_GEMM", 1);
  evaluated.speedup = 1.25;
  evaluated.pct_roofline = 40;
  const EvalResult evaluation = make_result(7);
  store.record_agent_sample(evaluated, &evaluation, test_environment());
  ASSERT_TRUE(evaluated.result_id.has_value());

  const std::vector<AgentSample> back = store.agent_samples({run});
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].status, "no_code");
  EXPECT_EQ(back[0].reply, no_code.reply);
  EXPECT_FALSE(back[0].parent.has_value());
  EXPECT_EQ(back[1].parent, 0);
  EXPECT_EQ(back[1].speedup, 1.25);
  EXPECT_EQ(back[1].prompt_tokens, 101);
  EXPECT_EQ(back[1].result_id, evaluated.result_id);
  // The machine is its evaluation's; a sample never evaluated has none.
  EXPECT_EQ(back[1].machine, "bench-host (Test CPU @ 3.0GHz)");
  EXPECT_EQ(back[0].machine, "");
  const std::optional<EvalResult> stored = store.result_by_id(*evaluated.result_id);
  ASSERT_TRUE(stored.has_value());
  expect_same(evaluation, *stored);
  EXPECT_FALSE(store.result_by_id(*evaluated.result_id + 100).has_value());
  // Every run when none is named; none of another run's.
  const std::int64_t other = store.begin_or_resume_run("other", "kbench agent ...").id;
  AgentSample elsewhere = make_agent_sample(other, "12p_RMSNorm", 0);
  store.record_agent_sample(elsewhere, nullptr, test_environment());
  EXPECT_EQ(store.agent_samples({}).size(), 3u);
  EXPECT_EQ(store.agent_samples({other}).size(), 1u);
  EXPECT_EQ(store.agent_samples({run, other}).size(), 3u);
}

TEST_F(StoreTest, Schema3FileGainsAgentSamplesAndKeepsItsRuns) {
  std::int64_t run = 0;
  {
    ResultStore store = ResultStore::open(db_path_);
    run = store.begin_or_resume_run("suite", "kbench run").id;
    store.record(make_result(1, "8p_GEMM", "run"), test_environment(), run);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  downgrade_to_schema3(db);
  sqlite3_close(db);
  ResultStore store = ResultStore::open(db_path_);
  EXPECT_EQ(query("PRAGMA user_version"), "4");
  EXPECT_EQ(store.results_of_run(run).size(), 1u);
  AgentSample sample = make_agent_sample(run, "8p_GEMM", 0);
  store.record_agent_sample(sample, nullptr, test_environment());
  EXPECT_EQ(store.agent_samples({}).size(), 1u);
}

TEST_F(StoreTest, AgentSampleRefusesRepeatsUnknownAndCompletedRunsAndWritesNothing) {
  ResultStore store = ResultStore::open(db_path_);
  const std::int64_t run = store.begin_or_resume_run("agent-key", "kbench agent ...").id;
  AgentSample first = make_agent_sample(run, "8p_GEMM", 1);
  store.record_agent_sample(first, nullptr, test_environment());
  const EvalResult evaluation = make_result(3);
  AgentSample again = make_agent_sample(run, "8p_GEMM", 1);
  EXPECT_THROW(store.record_agent_sample(again, &evaluation, test_environment()), StoreError);
  AgentSample unknown = make_agent_sample(run + 5, "8p_GEMM", 0);
  EXPECT_THROW(store.record_agent_sample(unknown, nullptr, test_environment()), StoreError);
  store.complete_run(run);
  AgentSample late = make_agent_sample(run, "8p_GEMM", 2);
  EXPECT_THROW(store.record_agent_sample(late, &evaluation, test_environment()), StoreError);
  // The refused evaluations left no results row behind.
  EXPECT_TRUE(store.recent(-1).empty());
  EXPECT_EQ(store.agent_samples({run}).size(), 1u);
}

TEST_F(StoreTest, EnvironmentsAreDeduplicatedByContent) {
  ResultStore store = ResultStore::open(db_path_);
  store.record(make_result(1), test_environment());
  store.record(make_result(2), test_environment());
  EXPECT_EQ(count("environments"), 1);
  store.record(make_result(3), test_environment("other-host"));
  EXPECT_EQ(count("environments"), 2);
  EXPECT_EQ(query("SELECT count(DISTINCT env_id) FROM results"), "2");
  EXPECT_EQ(query("SELECT hostname FROM environments e JOIN results r ON r.env_id = e.id "
                  "WHERE r.candidate_hash = 'sha256:1003'"),
            "other-host");
}

TEST_F(StoreTest, KilledWriterLeavesNoPartialRecord) {
  std::vector<EvalResult> earlier = {make_result(1), make_result(2)};
  {
    ResultStore store = ResultStore::open(db_path_);
    for (const EvalResult& r : earlier) store.record(r, test_environment());
  }  // closed before fork: an SQLite connection must not cross fork()
  const std::int64_t results_before = count("results");
  const std::int64_t samples_before = count("samples");

  // Enough samples that SQLite spills uncommitted pages into the WAL file before the kill, so
  // recovery has real partial data on disk to discard, not just pages in the dead process's memory.
  EvalResult big = make_result(3);
  big.candidate->samples_ms.assign(200000, 1.5);
  big.baseline->samples_ms.assign(200000, 3.0);

  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    try {
      ResultStore store = ResultStore::open(db_path_);
      store.set_after_insert_hook([] { raise(SIGKILL); });
      store.record(big, test_environment("killed-host"));
    } catch (...) {
    }
    _exit(3);  // only reached when the hook never ran
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_GT(fs::file_size(db_path_ + "-wal"), 1u << 20)
      << "uncommitted pages never reached the WAL";

  ResultStore store = ResultStore::open(db_path_);
  EXPECT_EQ(query("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(count("results"), results_before);
  EXPECT_EQ(count("samples"), samples_before);
  EXPECT_EQ(count("environments WHERE hostname = 'killed-host'"), 0);
  const std::vector<EvalResult> back = store.recent(-1);
  ASSERT_EQ(back.size(), 2u);
  expect_same(earlier[1], back[0]);
  expect_same(earlier[0], back[1]);

  // The store stays writable, and the killed record's id was never handed out.
  const std::int64_t id = store.record(make_result(4), test_environment());
  EXPECT_EQ(id, results_before + 1);
}

TEST_F(StoreTest, ThrowingMidRecordRollsBackAndStoreStaysUsable) {
  ResultStore store = ResultStore::open(db_path_);
  store.record(make_result(1), test_environment());
  store.set_after_insert_hook([] { throw std::runtime_error("disk on fire"); });
  EXPECT_THROW(store.record(make_result(2), test_environment("rolled-back")), std::runtime_error);
  EXPECT_EQ(count("results"), 1);
  EXPECT_EQ(count("samples"), 9);
  EXPECT_EQ(count("environments"), 1);
  store.set_after_insert_hook(nullptr);
  store.record(make_result(3), test_environment());
  EXPECT_EQ(store.recent(-1).size(), 2u);
}

TEST_F(StoreTest, GarbageFileGivesClearError) {
  fs::create_directories(fs::path(db_path_).parent_path());
  {
    std::ofstream garbage(db_path_, std::ios::binary);
    for (int i = 0; i < 512; ++i) garbage << "this is a text file, not a database\n";
  }
  try {
    ResultStore::open(db_path_);
    FAIL() << "opening a text file as a store succeeded";
  } catch (const StoreError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(contains(message, db_path_)) << message;
    EXPECT_TRUE(contains(message, "not a database")) << message;
  }
}

TEST_F(StoreTest, UncreatableDirectoryGivesClearError) {
  // A regular file where a directory should be: fails even for root, unlike a permission check.
  const fs::path blocker = dir_ / "blocker";
  std::ofstream(blocker) << "x";
  const std::string path = (blocker / "results.db").string();
  try {
    ResultStore::open(path);
    FAIL() << "opened a store below a regular file";
  } catch (const StoreError& e) {
    EXPECT_TRUE(contains(e.what(), path)) << e.what();
  }
}

TEST_F(StoreTest, SchemaVersionWalAndNewerSchemaRejected) {
  { ResultStore store = ResultStore::open(db_path_); }
  EXPECT_EQ(query("PRAGMA user_version"), std::to_string(ResultStore::kSchemaVersion));
  EXPECT_EQ(query("PRAGMA journal_mode"), "wal");
  { ResultStore store = ResultStore::open(db_path_); }  // reopening a current schema is a no-op

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    ResultStore::open(db_path_);
    FAIL() << "opened a store with a newer schema";
  } catch (const StoreError& e) {
    EXPECT_TRUE(contains(e.what(), "newer")) << e.what();
  }
}

TEST_F(StoreTest, CacheGetPutOverwriteAndPersist) {
  {
    ResultStore store = ResultStore::open(db_path_);
    EXPECT_EQ(store.cache_get("probe/m1"), std::nullopt);
    store.cache_put("probe/m1", R"({"peak_gflops": 100})");
    EXPECT_EQ(store.cache_get("probe/m1"), R"({"peak_gflops": 100})");
    store.cache_put("probe/m1", "second");
    store.cache_put("probe/m2", "");
    EXPECT_EQ(store.cache_get("probe/m1"), "second");
    EXPECT_EQ(store.cache_get("probe/m2"), "");  // present but empty is not absent
  }
  ResultStore reopened = ResultStore::open(db_path_);
  EXPECT_EQ(reopened.cache_get("probe/m1"), "second");
  EXPECT_EQ(count("cache"), 2);
}

TEST_F(StoreTest, RecentIsNewestFirstLimitedAndFiltered) {
  ResultStore store = ResultStore::open(db_path_);
  for (int i = 0; i < 30; ++i) {
    EvalResult r = make_result(i, i % 3 == 0 ? "3p_Softmax" : "8p_GEMM", i % 2 ? "run" : "eval");
    if (i % 5 == 0) r.status = Status::kIncorrect;
    r.created_at = "2024-05-01T12:00:00Z";  // equal timestamps: order must come from insertion
    store.record(r, test_environment());
  }
  const std::vector<EvalResult> latest = store.recent(5);
  ASSERT_EQ(latest.size(), 5u);
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(latest[k].candidate_hash, "sha256:" + std::to_string(1029 - k));

  EXPECT_EQ(store.recent(-1).size(), 30u);
  EXPECT_EQ(store.recent(0).size(), 0u);

  const std::vector<EvalResult> softmax = store.recent(100, {.workload = "3p_Softmax"});
  ASSERT_EQ(softmax.size(), 10u);
  EXPECT_EQ(softmax.front().candidate_hash, "sha256:1027");
  EXPECT_EQ(softmax.back().candidate_hash, "sha256:1000");

  const std::vector<EvalResult> softmax_runs =
      store.recent(100, {.workload = "3p_Softmax", .kind = "run"});
  ASSERT_EQ(softmax_runs.size(), 5u);  // i = 3, 9, 15, 21, 27
  for (const EvalResult& r : softmax_runs) EXPECT_EQ(r.kind, "run");

  EXPECT_EQ(store.recent(100, {.kind = "eval"}).size(), 15u);
  EXPECT_TRUE(store.recent(100, {.workload = "no_such_workload"}).empty());

  const std::vector<EvalResult> incorrect = store.recent(100, {.status = "incorrect"});
  ASSERT_EQ(incorrect.size(), 6u);  // i = 0, 5, ..., 25
  for (const EvalResult& r : incorrect) EXPECT_EQ(r.status, Status::kIncorrect);
  EXPECT_EQ(store.recent(100, {.workload = "3p_Softmax", .status = "incorrect"}).size(),
            2u);  // i = 0, 15
  EXPECT_EQ(store.recent(100, {.status = "correct"}).size(), 24u);
}

TEST_F(StoreTest, UntrustedTextIsStoredVerbatim) {
  ResultStore store = ResultStore::open(db_path_);
  EvalResult r = make_result(1);
  r.candidate_source =
      std::string("'); DROP TABLE results; --\n\"quoted\" \\ ") + '\0' + " after NUL";
  r.workload = "x' OR '1'='1";
  r.error = "bytes \xff\xfe";
  store.record(r, test_environment());
  EXPECT_TRUE(
      store.recent(10, {.workload = "8p_GEMM"}).empty());  // the filter is bound, not spliced
  const std::vector<EvalResult> back = store.recent(10, {.workload = "x' OR '1'='1"});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].candidate_source, r.candidate_source);
  EXPECT_EQ(count("results"), 1);
}

TEST_F(StoreTest, FillsCreatedAtWhenEmpty) {
  ResultStore store = ResultStore::open(db_path_);
  EvalResult r = make_result(1);
  r.created_at.clear();
  store.record(r, test_environment());
  const std::string created_at = store.recent(1).at(0).created_at;
  ASSERT_EQ(created_at.size(), 20u) << created_at;  // 2024-05-01T12:00:00Z
  EXPECT_EQ(created_at[10], 'T');
  EXPECT_EQ(created_at.back(), 'Z');
}

TEST_F(StoreTest, MoveTransfersTheConnection) {
  ResultStore first = ResultStore::open(db_path_);
  ResultStore second = std::move(first);
  second.record(make_result(1), test_environment());
  EXPECT_THROW(first.recent(1), StoreError);  // NOLINT(bugprone-use-after-move): checks the guard
  ResultStore third = ResultStore::open(":memory:");
  third = std::move(second);
  EXPECT_EQ(third.recent(5).size(), 1u);
  EXPECT_EQ(third.path(), db_path_);
}

// A result whose outputs were never compared (a crash before the first trial) stores no errors:
// its columns are NULL, not a perfect 0.
TEST_F(StoreTest, ErrorsOfAResultThatComparedNothingAreNull) {
  ResultStore store = ResultStore::open(db_path_);
  EvalResult r = make_result(1);
  r.status = Status::kRuntimeError;
  r.correctness = {};
  r.candidate.reset();
  r.speedup.reset();
  r.speedup_ci95.reset();
  r.utilization.reset();
  store.record(r, test_environment());
  EXPECT_EQ(query("SELECT max_abs_err FROM results"), "NULL");
  EXPECT_EQ(query("SELECT rel_l2_err FROM results"), "NULL");
  expect_same(r, store.recent(1).at(0));
}

TEST(StoreInMemoryTest, WorksWithoutAFile) {
  ResultStore store = ResultStore::open(":memory:");
  store.record(make_result(1), test_environment());
  EXPECT_EQ(store.recent(5).size(), 1u);
}

// Restores an environment variable on scope exit so tests do not leak settings into each other.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DefaultDbPathTest, FollowsKbenchDbThenXdgThenHome) {
  ScopedEnv home("HOME", "/home/tester");
  {
    ScopedEnv db("KBENCH_DB", "/data/k.db");
    ScopedEnv xdg("XDG_DATA_HOME", "/xdg");
    EXPECT_EQ(default_db_path(), "/data/k.db");
  }
  {
    ScopedEnv db("KBENCH_DB", nullptr);
    ScopedEnv xdg("XDG_DATA_HOME", "/xdg");
    EXPECT_EQ(default_db_path(), "/xdg/kbench/results.db");
  }
  {
    ScopedEnv db("KBENCH_DB", "");
    ScopedEnv xdg("XDG_DATA_HOME", "relative/ignored");
    EXPECT_EQ(default_db_path(), "/home/tester/.local/share/kbench/results.db");
  }
}

TEST(ResultJsonTest, HasTheDocumentedKeys) {
  const nlohmann::json j = to_json(make_result(1));
  for (const char* key : {"workload",       "size",
                          "threads",        "status",
                          "error",          "correctness",
                          "candidate",      "baseline",
                          "speedup",        "speedup_ci95",
                          "gflops",         "pct_peak_flops",
                          "gbps",           "pct_peak_bw",
                          "kind",           "candidate_path",
                          "candidate_hash", "candidate_source",
                          "warmup",         "wall_s",
                          "created_at",     "diagnostics",
                          "peak_gflops",    "peak_gbps",
                          "noise",          "speedup_verdict",
                          "baseline_path",  "math",
                          "intensity",      "balance",
                          "bound",          "roofline_ms",
                          "pct_roofline",   "library_gflops",
                          "library_method", "pct_library"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"cv_candidate", "cv_baseline", "steal_pct", "disturbed_calls", "stable",
                          "stop_reason", "clean_pairs", "ci_half_width_pct", "estimator"}) {
    EXPECT_TRUE(j["noise"].contains(key)) << key;
  }
  for (const char* key : {"wait_ms", "offcpu_ms", "cpu_ms", "adjusted_ms", "disturbed"}) {
    EXPECT_TRUE(j["candidate"].contains(key)) << key;
    EXPECT_FALSE(j["baseline"].contains(key)) << key << ": not measured, so absent";
  }
  for (const char* key :
       {"passed", "trials", "max_abs_err", "max_rel_err", "rel_l2_err", "seeds", "detail"}) {
    EXPECT_TRUE(j["correctness"].contains(key)) << key;
  }
  for (const char* key :
       {"median_ms", "p25_ms", "p75_ms", "iters", "min_ms", "mean_ms", "samples_ms"}) {
    EXPECT_TRUE(j["candidate"].contains(key)) << key;
    EXPECT_TRUE(j["baseline"].contains(key)) << key;
  }
  EXPECT_EQ(j["status"], "correct");
  EXPECT_EQ(j["speedup_ci95"], nlohmann::json::array({1.9, 2.1}));

  const nlohmann::json lean =
      to_json(make_result(1), {.include_samples = false, .include_source = false});
  EXPECT_FALSE(lean["candidate"].contains("samples_ms"));
  EXPECT_FALSE(lean.contains("candidate_source"));
}

TEST(ResultJsonTest, AbsentPartsAreNull) {
  EvalResult r = make_result(1);
  r.candidate.reset();
  r.baseline.reset();
  r.speedup.reset();
  r.speedup_ci95.reset();
  r.utilization.reset();
  const nlohmann::json j = to_json(r);
  for (const char* key : {"candidate", "baseline", "speedup", "speedup_ci95", "gflops",
                          "pct_peak_flops", "gbps", "pct_peak_bw", "peak_gflops", "peak_gbps"}) {
    EXPECT_TRUE(j[key].is_null()) << key;
  }
  expect_same(r, eval_result_from_json(j));
}

TEST(ResultJsonTest, RoundTripsThroughTextIncludingNonFinite) {
  EvalResult r = make_result(2);
  r.status = Status::kRuntimeError;
  r.correctness.max_abs_err = kNaN;
  r.correctness.rel_l2_err = kInf;
  r.speedup = -kInf;
  r.utilization->gflops = kNaN;
  r.candidate->samples_ms.push_back(kInf);
  const std::string text = dump_json(to_json(r));
  EXPECT_FALSE(contains(text, "NaN"));
  const nlohmann::json parsed = nlohmann::json::parse(text);  // throws on invalid JSON
  EXPECT_EQ(parsed["correctness"]["max_abs_err"], "nan");
  EXPECT_EQ(parsed["speedup"], "-inf");
  expect_same(r, eval_result_from_json(parsed));
}

TEST(ResultJsonTest, ReadsNullNumbersAndRejectsBadFields) {
  nlohmann::json j = to_json(make_result(1));
  j["correctness"]["max_rel_err"] = nullptr;  // what other writers emit for NaN
  j.erase("diagnostics");                     // older records may lack keys
  const EvalResult r = eval_result_from_json(j);
  EXPECT_TRUE(std::isnan(r.correctness.max_rel_err));
  EXPECT_EQ(r.diagnostics, "");

  nlohmann::json bad_status = to_json(make_result(1));
  bad_status["status"] = "great";
  EXPECT_THROW(eval_result_from_json(bad_status), std::invalid_argument);
  nlohmann::json bad_type = to_json(make_result(1));
  bad_type["threads"] = "four";
  try {
    eval_result_from_json(bad_type);
    FAIL() << "accepted a string thread count";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "threads")) << e.what();
  }
}

// Found by tests/fuzz/result_json_fuzz: a stored 1456100090290 threads read as 106176946 (and, seen
// in the same code, a disturbed flag of 300 as 44). Such records are refused now, naming the key.
TEST(ResultJsonTest, RefusesIntegersItCannotHoldExactly) {
  const auto refused = [](const nlohmann::json& j, const std::string& key) {
    try {
      eval_result_from_json(j);
      ADD_FAILURE() << "accepted " << j.dump().substr(0, 200);
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), key)) << e.what();
    }
  };
  nlohmann::json wide = to_json(make_result(1));
  wide["threads"] = 1456100090290LL;
  refused(wide, "threads");
  nlohmann::json unsigned_wide = to_json(make_result(1));
  unsigned_wide["candidate"]["iters"] = std::numeric_limits<std::uint64_t>::max();
  refused(unsigned_wide, "iters");
  nlohmann::json negative = to_json(make_result(1));
  negative["noise"]["calls"] = std::int64_t{std::numeric_limits<int>::min()} - 1;
  refused(negative, "calls");
  for (int flag : {3, 300}) {
    nlohmann::json bad_flag = to_json(make_result(1));
    bad_flag["candidate"]["disturbed"][0] = flag;
    refused(bad_flag, "disturbed");
  }

  nlohmann::json extreme = to_json(make_result(1));
  extreme["threads"] = std::numeric_limits<int>::max();
  extreme["warmup"] = std::numeric_limits<int>::min();
  const EvalResult r = eval_result_from_json(extreme);
  EXPECT_EQ(r.threads, std::numeric_limits<int>::max());
  EXPECT_EQ(r.warmup, std::numeric_limits<int>::min());
}

TEST(ResultJsonTest, StatusNamesRoundTrip) {
  for (Status s : {Status::kCorrect, Status::kIncorrect, Status::kCompileError,
                   Status::kRuntimeError, Status::kTimeout}) {
    EXPECT_EQ(parse_status(status_name(s)), s) << status_name(s);
  }
  EXPECT_STREQ(status_name(Status::kCompileError), "compile_error");
  EXPECT_EQ(parse_status("Correct"), std::nullopt);
}

}  // namespace
}  // namespace kbench

namespace kbench {
namespace {

TEST(MachineCache, KeepsEachFactWithWhenItWasMeasured) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-machine-cache-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  MachineCache cache(dir);
  EXPECT_EQ(cache.get("probe/m1/threads=1"), std::nullopt);
  ASSERT_TRUE(cache.put("probe/m1/threads=1", R"({"fp32": 1})"));
  ASSERT_TRUE(cache.put("gemm 4x3x8:nn:bf16:t1", ""));
  const std::optional<CachedFact> fact = MachineCache(dir).get("probe/m1/threads=1");
  ASSERT_TRUE(fact);
  EXPECT_EQ(fact->value, R"({"fp32": 1})");
  EXPECT_EQ(fact->measured_at.size(), std::string("2026-12-02T07:40:00Z").size());
  EXPECT_EQ(cache.get("gemm 4x3x8:nn:bf16:t1")->value, "");  // present but empty is not absent
  ASSERT_TRUE(cache.put("probe/m1/threads=1", "second"));
  EXPECT_EQ(cache.get("probe/m1/threads=1")->value, "second");

  // Each file answers only for its own key, and a damaged one is a miss, not an error.
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ofstream(entry.path()) << R"({"key": "another", "value": "x", "measured_at": "t"})";
  }
  EXPECT_EQ(cache.get("probe/m1/threads=1"), std::nullopt);
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    std::ofstream(entry.path()) << "{not json";
  EXPECT_EQ(cache.get("gemm 4x3x8:nn:bf16:t1"), std::nullopt);
  std::filesystem::remove_all(dir);
}

// Two processes about to measure one fact take turns: the second says it waits, and gets its hold
// only when the first lets go (having stored its value), never while the first measures.
TEST(MachineCache, AHoldMakesAnotherProcessWaitForIt) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("kbench-machine-cache-hold-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  int go[2], seen_by_parent[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(seen_by_parent), 0);
  // The child is forked before the parent opens its lock file: a child sharing the parent's open
  // lock file would share its lock too.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char byte = 0;
    if (read(go[0], &byte, 1) != 1) _exit(2);
    const MachineCache::Hold mine = MachineCache(dir).hold(
        "probe/m1/threads=1", [&] { (void)!write(seen_by_parent[1], "w", 1); });
    (void)!write(seen_by_parent[1], "h", 1);
    _exit(0);
  }
  close(seen_by_parent[1]);
  MachineCache cache(dir);
  std::optional<MachineCache::Hold> held(cache.hold("probe/m1/threads=1"));
  ASSERT_EQ(write(go[1], "g", 1), 1);
  char seen = 0;
  ASSERT_EQ(read(seen_by_parent[0], &seen, 1), 1);
  EXPECT_EQ(seen, 'w');
  // Another key is not held by this one.
  { const MachineCache::Hold other = cache.hold("probe/m1/threads=2"); }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fcntl(seen_by_parent[0], F_SETFL, O_NONBLOCK);
  EXPECT_EQ(read(seen_by_parent[0], &seen, 1), -1)
      << "the second process got the hold while it was held";
  fcntl(seen_by_parent[0], F_SETFL, 0);
  held.reset();
  ASSERT_EQ(read(seen_by_parent[0], &seen, 1), 1);
  EXPECT_EQ(seen, 'h');
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  for (int fd : {go[0], go[1], seen_by_parent[0]}) close(fd);
  std::filesystem::remove_all(dir);
}

TEST(MachineCache, ADirectoryThatCannotBeMadeLosesOnlyTheReuse) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("kbench-machine-cache-file-" + std::to_string(::getpid()));
  std::ofstream(file) << "a file where the cache's parent directory would be";
  MachineCache cache(file / "machine");
  std::string why;
  EXPECT_FALSE(cache.put("k", "v", &why));
  EXPECT_NE(why.find("cannot write the machine cache in '" + (file / "machine").string() + "'"),
            std::string::npos)
      << why;
  EXPECT_EQ(cache.get("k"), std::nullopt);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace kbench
