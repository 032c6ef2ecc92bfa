// `kbench merge`: shards of a sweep into one database with new ids, complete runs only, nothing
// copied twice, and nothing written when a shard is refused.
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"
#include "store/store.h"

namespace kbench {
namespace {

namespace fs = std::filesystem;
using testing::run_kbench;

Environment host(const std::string& name) {
  Environment env;
  env.cpu_model = "Test CPU";
  env.cpu_flags = "avx2 fma";
  env.logical_cpus = 2;
  env.hostname = name;
  env.compiler = "g++ 12";
  env.kbench_commit = "abc123";
  return env;
}

EvalResult result_for(const std::string& workload, double candidate_ms) {
  EvalResult r;
  r.kind = "run";
  r.workload = workload;
  r.size = "smoke";
  r.status = Status::kCorrect;
  r.created_at = "2026-12-03T10:00:00Z";
  r.candidate_source = "// " + workload;
  r.candidate = TimingSummary{candidate_ms,
                              candidate_ms,
                              candidate_ms,
                              candidate_ms,
                              candidate_ms,
                              3,
                              {candidate_ms, candidate_ms + 1, candidate_ms + 2}};
  return r;
}

std::int64_t count(const std::string& db, const std::string& sql) {
  sqlite3* raw = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(raw, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  const std::int64_t n = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1;
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
  return n;
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kbench-merge-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // Shard a (node a): a complete suite run of two workloads, a complete agent run of two samples
    // (one evaluated), and a result outside any run.
    ResultStore a = ResultStore::open(path("a.db"));
    const auto suite = a.begin_or_resume_run("run suite host=a", "kbench run --suite x");
    a.record(result_for("8p_GEMM", 1.0), host("a"), suite.id);
    a.record(result_for("12p_RMSNorm", 2.0), host("a"), suite.id);
    a.complete_run(suite.id);
    const auto agent = a.begin_or_resume_run("agent host=a", "kbench agent --method best-of-n");
    for (int i = 0; i < 2; ++i) {
      AgentSample s;
      s.run_id = agent.id;
      s.method = "best-of-n";
      s.workload = "12p_RMSNorm";
      s.size = "smoke";
      s.model = "scripted";
      s.index = i;
      s.status = i == 0 ? "correct" : "no_code";
      const EvalResult evaluation = result_for("12p_RMSNorm", 3.0);
      a.record_agent_sample(s, i == 0 ? &evaluation : nullptr, host("a"));
    }
    a.complete_run(agent.id);
    a.record(result_for("1p_Flash_Attention", 4.0), host("a"));
    // Shard b (node b): a complete run of one workload, and a run killed after one.
    ResultStore b = ResultStore::open(path("b.db"));
    const auto done = b.begin_or_resume_run("run suite host=b", "kbench run --suite y");
    b.record(result_for("9p_SwiGLU_MLP", 5.0), host("b"), done.id);
    b.complete_run(done.id);
    const auto killed = b.begin_or_resume_run("run suite host=b size=cpu", "kbench run --suite z");
    b.record(result_for("2p_GQA_Attention", 6.0), host("b"), killed.id);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(MergeTest, CompleteRunsResultsAndAgentSamplesArriveWithNewIds) {
  ResultStore out = ResultStore::open(path("out.db"));
  // An existing record keeps its id; the merged ones are numbered after it.
  out.record(result_for("3p_MLA_Attention", 9.0), host("c"));
  const ResultStore::ShardMerge a = out.merge_shard(path("a.db"));
  EXPECT_EQ(a.runs_added, 2);
  EXPECT_EQ(a.results_added, 4);  // two of the suite, one agent evaluation, one outside runs
  EXPECT_EQ(a.agent_samples_added, 2);
  EXPECT_TRUE(a.incomplete.empty());
  const ResultStore::ShardMerge b = out.merge_shard(path("b.db"));
  EXPECT_EQ(b.runs_added, 1);
  EXPECT_EQ(b.results_added, 1);
  ASSERT_EQ(b.incomplete.size(), 1u);
  EXPECT_NE(b.incomplete[0].find("kbench run --suite z): 1 results"), std::string::npos)
      << b.incomplete[0];

  const std::string db = path("out.db");
  EXPECT_EQ(count(db, "SELECT count(*) FROM results"), 6);
  EXPECT_EQ(count(db, "SELECT count(*) FROM results WHERE workload = '2p_GQA_Attention'"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM runs"), 3);
  EXPECT_EQ(count(db, "SELECT count(*) FROM runs WHERE completed_at IS NULL"), 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM environments"), 3);  // hosts a, b, c once each
  EXPECT_EQ(count(db, "SELECT min(id) FROM results WHERE workload = '8p_GEMM'"), 2);
  // Every timing sample came along, attached to its new result.
  EXPECT_EQ(count(db, "SELECT count(*) FROM samples"), 3 * 6);
  const auto suite =
      out.results_of_run(count(db, "SELECT id FROM runs WHERE key = 'run suite host=a'"));
  ASSERT_EQ(suite.size(), 2u);
  EXPECT_EQ(suite[1].workload, "12p_RMSNorm");
  ASSERT_TRUE(suite[1].candidate.has_value());
  EXPECT_EQ(suite[1].candidate->samples_ms, (std::vector<double>{2.0, 3.0, 4.0}));
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM results r JOIN environments e ON r.env_id = e.id "
                  "WHERE e.hostname = 'b'"),
            1);
  // The agent samples point at their new run and their evaluation's new row.
  const std::vector<AgentSample> samples = out.agent_samples({});
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].run_id, count(db, "SELECT id FROM runs WHERE key = 'agent host=a'"));
  ASSERT_TRUE(samples[0].result_id.has_value());
  const auto evaluation = out.result_by_id(*samples[0].result_id);
  ASSERT_TRUE(evaluation.has_value());
  EXPECT_EQ(evaluation->candidate->median_ms, 3.0);
  EXPECT_FALSE(samples[1].result_id.has_value());
}

TEST_F(MergeTest, MergingAShardAgainAddsNothing) {
  ResultStore out = ResultStore::open(path("out.db"));
  out.merge_shard(path("a.db"));
  out.merge_shard(path("b.db"));
  const std::int64_t results = count(path("out.db"), "SELECT count(*) FROM results");
  const ResultStore::ShardMerge again = out.merge_shard(path("a.db"));
  EXPECT_EQ(again.runs_added, 0);
  EXPECT_EQ(again.runs_present, 2);
  EXPECT_EQ(again.results_added, 0);
  EXPECT_EQ(again.results_present, 1);
  EXPECT_EQ(again.agent_samples_added, 0);
  EXPECT_EQ(count(path("out.db"), "SELECT count(*) FROM results"), results);
  // A killed run that completes later (its task requeued) is merged then.
  {
    ResultStore b = ResultStore::open(path("b.db"));
    b.complete_run(count(path("b.db"), "SELECT id FROM runs WHERE completed_at IS NULL"));
  }
  const ResultStore::ShardMerge completed = out.merge_shard(path("b.db"));
  EXPECT_EQ(completed.runs_added, 1);
  EXPECT_EQ(completed.runs_present, 1);
  EXPECT_EQ(count(path("out.db"), "SELECT count(*) FROM results"), results + 1);
}

TEST_F(MergeTest, ARefusedShardLeavesTheDestinationUntouched) {
  // An older schema, a file that is no database, a missing file, the destination itself.
  fs::copy_file(path("b.db"), path("old.db"));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path("old.db").c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 3", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  std::ofstream(path("junk.db")) << "not a database, just text long enough to be read as one";

  EXPECT_THROW(ResultStore::check_shard(path("old.db")), StoreError);
  EXPECT_THROW(ResultStore::check_shard(path("junk.db")), StoreError);
  EXPECT_THROW(ResultStore::check_shard(path("missing.db")), StoreError);
  EXPECT_NO_THROW(ResultStore::check_shard(path("a.db")));

  for (const std::string bad : {"old.db", "junk.db", "missing.db", "."}) {
    SCOPED_TRACE(bad);
    const auto r =
        run_kbench("merge " + path("out.db") + " " + path("a.db") + " " + path(bad) + " 2>&1");
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("nothing was merged"), std::string::npos) << r.out;
    if (bad == ".") {
      EXPECT_NE(r.out.find("': it is a directory;"), std::string::npos) << r.out;
    }
    EXPECT_FALSE(fs::exists(path("out.db")));
  }
  {
    ResultStore out = ResultStore::open(path("out.db"));
    EXPECT_THROW(out.merge_shard(path("out.db")), StoreError);
  }
  EXPECT_EQ(count(path("out.db"), "SELECT count(*) FROM results"), 0);
}

TEST_F(MergeTest, TheCommandSaysWhatEachShardAddedAndWhatItLeftOut) {
  const auto r = run_kbench("merge " + path("out.db") + " " + path("a.db") + " " + path("b.db"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("a.db: 2 runs added (0 already merged), 4 results, 2 agent samples"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("left out, never completed: run 2 (kbench run --suite z)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("3 runs, 5 results, 2 agent samples added from 2 shards"), std::string::npos)
      << r.out;
  const auto report = run_kbench("agent report --db " + path("out.db") + " --format json");
  EXPECT_EQ(report.exit_code, 0) << report.out;
  EXPECT_NE(report.out.find("\"best-of-n\""), std::string::npos) << report.out;
}

}  // namespace
}  // namespace kbench
