// The sweep's files (sweep/plan.h, sweep/cell_files.h) and the Slurm executor's batch script
// (sweep/slurm.h): what every executor and `kbench sweep status` rely on, without running a cell.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "store/snapshot.h"
#include "store/store.h"
#include "store/store_error.h"
#include "sweep/cell_files.h"
#include "sweep/plan.h"
#include "sweep/slurm.h"

namespace kbench::sweep {
namespace {

// Claims an attempt of `cell` from a child process that then exits: an attempt whose process is
// gone, as a killed one's is.
void claim_in_a_child(const std::filesystem::path& dir, const Cell& cell) {
  const pid_t child = fork();
  if (child == 0) {
    CellFiles(dir, cell).claim_attempt();
    _exit(0);
  }
  waitpid(child, nullptr, 0);
}

class SweepFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kbench-sweep-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  const Cell cell_{"run-12p_RMSNorm", {"run", "-w", "12p_RMSNorm", "--size", "smoke"}};
};

TEST_F(SweepFiles, PlanRoundTripsAndComparesByCells) {
  Plan plan{.cells = {cell_, {"run-8p_GEMM", {"run", "-w", "8p_GEMM"}}}, .max_attempts = 2};
  write_plan(dir_, plan);
  const Plan read = read_plan(dir_);
  EXPECT_TRUE(same_cells(plan, read));
  EXPECT_EQ(read.max_attempts, 2);
  Plan other = plan;
  other.cells[1].args.push_back("--no-experts");
  EXPECT_FALSE(same_cells(plan, other));
}

TEST_F(SweepFiles, ADirectoryWithoutAPlanOrWithAForeignOneIsRefused) {
  EXPECT_THROW(read_plan(dir_), SweepError);
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "sweep.json") << "{\"cells\": 3}";
  EXPECT_THROW(read_plan(dir_), SweepError);
}

TEST_F(SweepFiles, AttemptsAreNumberedInTurnAndNeverShared) {
  CellFiles files(dir_, cell_);
  EXPECT_EQ(files.claim_attempt().number, 1);
  EXPECT_EQ(files.claim_attempt().number, 2);
  // Processes claiming at once (a requeued task beside its stale copy) get different numbers.
  std::vector<std::thread> claimants;
  for (int i = 0; i < 6; ++i) claimants.emplace_back([&] { claim_in_a_child(dir_, cell_); });
  for (std::thread& t : claimants) t.join();
  std::set<int> numbers;
  for (const Attempt& a : files.attempts()) numbers.insert(a.number);
  EXPECT_EQ(numbers.size(), 8u);
  EXPECT_EQ(*numbers.rbegin(), 8);
}

TEST_F(SweepFiles, StatusFollowsTheAttempts) {
  CellFiles files(dir_, cell_);
  EXPECT_EQ(cell_status(files, 3).state, CellState::kPending);

  Attempt running = files.claim_attempt();  // this process: alive
  EXPECT_EQ(cell_status(files, 3).state, CellState::kRunning);

  running.outcome = Outcome::kFailed;
  running.message = "baseline worker failed to start";
  files.end_attempt(running);
  CellStatus s = cell_status(files, 3);
  EXPECT_EQ(s.state, CellState::kPending);
  EXPECT_EQ(s.failures, 1);
  EXPECT_NE(s.line.find("baseline worker failed to start"), std::string::npos) << s.line;

  // A stop (SIGTERM between units) is not a failure.
  Attempt stopped = files.claim_attempt();
  stopped.outcome = Outcome::kStopped;
  stopped.message = "stopped by SIGTERM";
  files.end_attempt(stopped);
  EXPECT_EQ(cell_status(files, 3).failures, 1);

  // An attempt on this host whose process is gone, without an outcome, vanished: a failure.
  claim_in_a_child(dir_, cell_);
  s = cell_status(files, 3);
  EXPECT_EQ(s.state, CellState::kPending);
  EXPECT_EQ(s.failures, 2);
  EXPECT_NE(s.line.find("ended without a word"), std::string::npos) << s.line;

  Attempt third = files.claim_attempt();
  third.outcome = Outcome::kFailed;
  third.message = "exit status 1";
  files.end_attempt(third);
  s = cell_status(files, 3);
  EXPECT_EQ(s.state, CellState::kFailed);
  EXPECT_EQ(s.failures, 3);
  EXPECT_EQ(s.attempts, 4);
}

TEST_F(SweepFiles, APublishedShardMakesTheCellDone) {
  CellFiles files(dir_, cell_);
  Attempt a = files.claim_attempt();
  const std::string db = (dir_ / "attempt.db").string();
  { const ResultStore store = ResultStore::open(db); }
  snapshot_database(db, files.attempt_db(a.number).string());
  std::filesystem::create_directories(files.shard().parent_path());
  snapshot_database(files.attempt_db(a.number).string(), files.shard().string());
  a.outcome = Outcome::kDone;
  files.end_attempt(a);
  EXPECT_EQ(cell_status(files, 3).state, CellState::kDone);
  // The copy is one file: no write-ahead log beside it to lose on the way to another disk.
  EXPECT_FALSE(std::filesystem::exists(files.shard().string() + "-wal"));
  ResultStore::check_shard(files.shard().string());
}

TEST_F(SweepFiles, ASnapshotOfAMissingDatabaseFailsAndLeavesNothing) {
  std::filesystem::create_directories(dir_);
  const std::string to = (dir_ / "copy.db").string();
  EXPECT_THROW(snapshot_database((dir_ / "missing.db").string(), to), StoreError);
  EXPECT_FALSE(std::filesystem::exists(to));
  EXPECT_FALSE(std::filesystem::exists(to + ".partial"));
}

TEST(SlurmScript, ArrayRangesJoinRuns) {
  EXPECT_EQ(array_ranges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(array_ranges({3}), "3");
  EXPECT_EQ(array_ranges({}), "");
}

TEST(SlurmScript, OneArrayTaskPerCellRunsTheCellAndRequeues) {
  SlurmOptions options{.partition = "batch",
                       .cpus_per_task = 2,
                       .exclusive = true,
                       .time = "1:00:00",
                       .max_parallel = 4};
  const std::string script =
      batch_script(options, "/scratch/it's a sweep", "/opt/kbench/bin/kbench", {0, 1, 2, 9});
  for (const char* line :
       {"#SBATCH --array=0-2,9%4\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --requeue\n",
        "#SBATCH --partition=batch\n", "#SBATCH --exclusive\n", "#SBATCH --time=1:00:00\n",
        "#SBATCH --output=/scratch/it's a sweep/logs/%a.log\n",
        "exec '/opt/kbench/bin/kbench' sweep cell '/scratch/it'\\''s a sweep' "
        "\"$SLURM_ARRAY_TASK_ID\"\n"})
    EXPECT_NE(script.find(line), std::string::npos) << line << "\nin\n" << script;
  const std::string plain = batch_script(SlurmOptions{}, "/s", "/k", {0});
  EXPECT_EQ(plain.find("--partition"), std::string::npos);
  EXPECT_EQ(plain.find("--exclusive"), std::string::npos);
  EXPECT_NE(plain.find("#SBATCH --array=0\n"), std::string::npos);
}

}  // namespace
}  // namespace kbench::sweep
