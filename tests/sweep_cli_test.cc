// `kbench sweep` with the local executor, end to end: cells run into shards, a resubmission runs
// only what is not done, a failing cell is tried again from its last attempt's database and, after
// --max-attempts failures, reported and not run again; a SIGTERM stops the sweep between cells and
// the same command finishes it. (On Slurm: tests/slurm/sweep_slurm_test.sh.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace kbench::testing {
namespace {

class SweepCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("kbench-sweep-cli-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  nlohmann::json status() {
    const CliRun r = run_kbench("sweep status " + dir_ + " --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
  std::string log_of(int index) {
    std::ifstream in(dir_ + "/logs/" + std::to_string(index) + ".log");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::string dir_;
};

TEST_F(SweepCli, CellsRunIntoShardsAndAResubmissionRunsNothingAgain) {
  const std::string sweep = "sweep -w 12p -w 19k --size smoke --no-experts --out " + dir_;
  CliRun r = run_kbench(sweep);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json s = status();
  EXPECT_EQ(s["done"], 2);
  for (const char* shard :
       {"/shards/run-12p_RMSNorm.db", "/shards/run-19k_Matmul_Subtract_Multiply_ReLU.db"})
    EXPECT_TRUE(std::filesystem::is_regular_file(dir_ + shard)) << shard;

  // The directory by position, or as --out after `status` or before it, as the sweep took it.
  for (const std::string& command :
       {"sweep status " + dir_, "sweep status --out " + dir_, "sweep --out " + dir_ + " status"}) {
    r = run_kbench(command);
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("sweep " + dir_ + ": 2 cells: 2 done, 0 running", 0), 0u) << r.out;
  }

  r = run_kbench_stderr(sweep);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("2 done, 0 running, 0 failed, 0 to run"), std::string::npos) << r.out;

  // Another matrix into the same directory would mix two sweeps' shards.
  r = run_kbench_stderr("sweep -w 12p --size smoke --out " + dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("holds another sweep"), std::string::npos) << r.out;

  const std::string merged = temp_db("sweep-merged");
  std::filesystem::remove(merged);
  r = run_kbench("merge " + merged + " " + dir_ + "/shards/*.db");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find(": 2 runs, 2 results"), std::string::npos) << r.out;
  std::filesystem::remove(merged);
}

TEST_F(SweepCli, AFailingCellResumesFromItsLastAttemptAndIsReportedAfterMaxAttempts) {
  const std::string sweep = "sweep -w 12p --size smoke --no-experts --max-attempts 2 --out " + dir_;
  // No worker can start: the cell's run fails, its attempt's database (an open run) is kept.
  CliRun r = run_shell("KBENCH_WORKER=/nonexistent " + kbench_exe() + " " + sweep);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
  EXPECT_EQ(status()["pending"], 1);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir_ + "/cells/run-12p_RMSNorm/attempt-1.db"));

  // The second attempt starts from the first one's database and resumes its run.
  r = run_kbench(sweep);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(
      log_of(0).find("attempt 2, resumes from " + dir_ + "/cells/run-12p_RMSNorm/attempt-1.db"),
      std::string::npos)
      << log_of(0);
  EXPECT_NE(log_of(0).find("resuming run 1"), std::string::npos) << log_of(0);
  EXPECT_EQ(status()["done"], 1);

  // A cell that fails --max-attempts times is reported with its failure's line, not run again.
  std::filesystem::remove_all(dir_);
  for (int i = 0; i < 2; ++i) run_shell("KBENCH_WORKER=/nonexistent " + kbench_exe() + " " + sweep);
  nlohmann::json s = status();
  EXPECT_EQ(s["failed"], 1);
  EXPECT_NE(s["per_cell"][0]["line"].get<std::string>().find("worker"), std::string::npos) << s;
  r = run_kbench_stderr(sweep);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("failed 2 times, not run again"), std::string::npos) << r.out;
  EXPECT_EQ(status()["per_cell"][0]["attempts"], 2);
  r = run_kbench_stderr("sweep cell " + dir_ + " 0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("is not run again"), std::string::npos) << r.out;
}

TEST_F(SweepCli, ACellKilledOutrightIsResumedFromItsWorkingDatabaseOnTheSameNode) {
  const std::string sweep = "sweep -w 12p --size cpu --no-experts --out " + dir_;
  const pid_t executor = fork();
  if (executor == 0) {
    freopen("/dev/null", "w", stdout);
    execl("/bin/sh", "sh", "-c", ("exec " + kbench_exe() + " " + sweep).c_str(), nullptr);
    _exit(127);
  }
  // Once the cell's run is timing (its attempt recorded, its working database open), kill -9 the
  // cell's process: it can neither record how it ended nor copy its database to the sweep.
  const std::string attempt = dir_ + "/cells/run-12p_RMSNorm/attempt-1.json";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  long cell_pid = 0;
  while (cell_pid == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(attempt);
    try {
      cell_pid = nlohmann::json::parse(in).value("pid", 0L);
    } catch (const nlohmann::json::exception&) {
    }
  }
  ASSERT_GT(cell_pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(static_cast<pid_t>(cell_pid), SIGKILL);
  int wstatus = 0;
  waitpid(executor, &wstatus, 0);
  EXPECT_EQ(WEXITSTATUS(wstatus), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/cells/run-12p_RMSNorm/attempt-1.db"));
  nlohmann::json s = status();
  EXPECT_EQ(s["pending"], 1);
  EXPECT_NE(s["per_cell"][0]["line"].get<std::string>().find("killed by signal 9"),
            std::string::npos)
      << s;

  const CliRun r = run_kbench(sweep);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(log_of(0).find("attempt 2, resumes from "), std::string::npos) << log_of(0);
  EXPECT_NE(log_of(0).find("-attempt-1.db"), std::string::npos) << log_of(0);
  EXPECT_NE(log_of(0).find("resuming run 1"), std::string::npos) << log_of(0);
  EXPECT_EQ(status()["done"], 1);
  // The killed attempt's working database went with the cell's completion.
  const std::string log = log_of(0);
  const std::size_t from = log.find("resumes from ") + std::strlen("resumes from ");
  const std::string working = log.substr(from, log.find('\n', from) - from);
  EXPECT_FALSE(std::filesystem::exists(working)) << working;
}

TEST_F(SweepCli, SigtermStopsBetweenCellsAndTheSameCommandFinishes) {
  const std::string sweep =
      "sweep -w 12p -w 19k -w 9p -w 18k --size smoke --no-experts --out " + dir_;
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string log = dir_ + ".out";
    freopen(log.c_str(), "w", stdout);
    execl("/bin/sh", "sh", "-c", ("exec " + kbench_exe() + " " + sweep).c_str(), nullptr);
    _exit(127);
  }
  // As soon as the first cell is done, while later ones wait or run.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::filesystem::exists(dir_ + "/shards/run-12p_RMSNorm.db") &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  kill(pid, SIGTERM);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  std::filesystem::remove(dir_ + ".out");
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 143);
  nlohmann::json s = status();
  EXPECT_GE(s["done"].get<int>(), 1);
  EXPECT_LT(s["done"].get<int>(), 4) << "the sweep did not stop";
  EXPECT_EQ(s["running"], 0);
  EXPECT_EQ(s["failed"], 0);

  const CliRun r = run_kbench(sweep);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(status()["done"], 4);
}

TEST_F(SweepCli, BadInputIsAUsageError) {
  EXPECT_EQ(run_kbench_stderr("sweep -w 12p --size smoke").exit_code, 2);  // no --out
  EXPECT_EQ(run_kbench_stderr("sweep -w 12p --out " + dir_ + " --executor pbs").exit_code, 2);
  EXPECT_EQ(run_kbench_stderr("sweep -w nope --out " + dir_).exit_code, 2);
  EXPECT_EQ(run_kbench_stderr("sweep -w 12p --agent --out " + dir_).exit_code, 2);  // no --method
  EXPECT_EQ(run_kbench_stderr("sweep -w 12p --agent --method beam --model m --base-url host/v1 "
                              "--out " +
                              dir_)
                .out,
            "kbench: --base-url 'host/v1' is not an http:// or https:// URL with a host\n");
  EXPECT_EQ(
      run_kbench_stderr("sweep -w 12p --executor slurm --cpus-per-task 0 --out " + dir_).exit_code,
      2);
  EXPECT_EQ(run_kbench_stderr("sweep -w 12p --time-budget-s nan --out " + dir_).exit_code, 2);
  const CliRun r = run_kbench_stderr("sweep status " + dir_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("not a sweep directory"), std::string::npos) << r.out;
  EXPECT_EQ(run_kbench_stderr("sweep status").out,
            "kbench: give the sweep's directory: kbench sweep status DIR\n");
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

}  // namespace
}  // namespace kbench::testing
