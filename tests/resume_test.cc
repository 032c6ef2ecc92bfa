// Crash safety of `kbench run`, end to end with the real binary: killed with SIGKILL at several
// moments, or stopped by kbench's own failure, and run again it resumes, keeping every earlier
// result exactly once; a full disk and a read-only database give one clear line and a non-zero exit
// and leave nothing half-recorded.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cli_support.h"
#include "store/store.h"
#include "workloads/registry.h"

namespace kbench::testing {
namespace {

namespace fs = std::filesystem;

// Timed calls per workload: at smoke size 100 make each workload's pass take a few hundred ms, long
// enough for the poller below to kill kbench between results rather than after the last one.
constexpr int kIters = 100;

// Four workloads of different kinds (row op, GEMM, fused matmul, convolution) at smoke size.
const std::vector<std::string> kRunArgs = {"run", "-w", "12p", "-w", "8p", "-w", "30k", "-w", "18k",
                                           "--size", "smoke", "--warmup", "0", "--iters",
                                           std::to_string(kIters), "--max-iters",
                                           std::to_string(kIters), "--time-budget-s", "0",
                                           // Expert evaluations are records outside the run.
                                           "--no-experts", "--json"};

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const char* id : {"12p", "8p", "30k", "18k"}) names.emplace_back(find_workload(id)->name);
  return names;
}

std::string shell_args(const std::vector<std::string>& args) {
  std::string joined;
  for (const std::string& a : args) joined += " '" + a + "'";
  return joined;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Rows of `sql` on a read-only connection, columns joined by '|'; nullopt when the database cannot
// be read yet (not created, schema not there): the poller's "not yet".
std::optional<std::vector<std::string>> try_rows(const std::string& db_path,
                                                 const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return std::nullopt;
  }
  sqlite3_busy_timeout(db, 2000);
  sqlite3_stmt* stmt = nullptr;
  std::optional<std::vector<std::string>> rows;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
    rows.emplace();
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        if (c) row += '|';
        row += text ? text : "NULL";
      }
      rows->push_back(row);
    }
    if (rc != SQLITE_DONE) rows.reset();
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

std::vector<std::string> rows(const std::string& db_path, const std::string& sql) {
  auto result = try_rows(db_path, sql);
  EXPECT_TRUE(result.has_value()) << "cannot read '" << sql << "' from " << db_path;
  return result.value_or(std::vector<std::string>{});
}

std::string one(const std::string& db_path, const std::string& sql) {
  const std::vector<std::string> r = rows(db_path, sql);
  return r.empty() ? "" : r[0];
}

// The results recorded in runs, as the rows that must survive unchanged: id, workload, created_at
// and the whole record.
constexpr const char* kRunRows =
    "SELECT id, run_id, workload, created_at, full_json FROM results WHERE run_id IS NOT NULL "
    "ORDER BY id";

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class ResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "kbench_resume_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The command run to completion by the shell, stdout and stderr kept apart.
  // `env` is prepended to the command line ("NAME='value' ").
  Outcome run(const std::vector<std::string>& args, const std::string& db,
              const std::string& env = "") {
    const fs::path out = dir_ / "out.txt";
    const fs::path err = dir_ / "err.txt";
    const std::string command = env + kbench_exe() + shell_args(args) + " --db '" + db + "' >'" +
                                out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    Outcome o;
    o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    o.out = read_file(out);
    o.err = read_file(err);
    return o;
  }

  // A database in which this machine's peaks and the four baselines' GEMM paths are cached (what
  // the first run on a machine measures), so each kill below lands in the suite pass itself.
  std::string warm_template() {
    const std::string db = (dir_ / "template.db").string();
    std::vector<std::string> args = kRunArgs;
    args.push_back("--no-record");
    const Outcome o = run(args, db);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    EXPECT_FALSE(fs::exists(db + "-wal")) << "kbench left its WAL behind after a clean exit";
    return db;
  }

  std::string copy_of(const std::string& db, const std::string& name) {
    const fs::path copy = dir_ / name;
    fs::create_directories(copy.parent_path());
    fs::copy_file(db, copy, fs::copy_options::overwrite_existing);
    return copy.string();
  }

  // `kbench run` started in the background on `db`; stdout and stderr to files.
  pid_t spawn(const std::string& db) {
    std::vector<std::string> args = kRunArgs;
    args.insert(args.end(), {"--db", db});
    std::vector<char*> argv;
    const std::string exe = kbench_exe();
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = (dir_ / "killed.out").string();
    const std::string err = (dir_ / "killed.err").string();
    const pid_t pid = fork();
    if (pid == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0) _exit(126);
      execv(argv[0], argv.data());
      _exit(127);
    }
    return pid;
  }

  // Whether this process may create mount namespaces and mount there (root in a container that
  // allows it); the reason when not.
  std::optional<std::string> mount_unavailable() {
    const fs::path probe = dir_ / "mount-probe";
    fs::create_directories(probe);
    const std::string command = "unshare -m sh -c \"mount -t tmpfs -o size=96k tmpfs '" +
                                probe.string() + "'\" >'" + (dir_ / "probe.err").string() +
                                "' 2>&1";
    if (std::system(command.c_str()) == 0) return std::nullopt;
    return "cannot mount in a new mount namespace (unshare -m, mount -t tmpfs): " +
           read_file(dir_ / "probe.err");
  }

  // Runs `script` (sh) in a private mount namespace, so its mounts vanish with it.
  int in_mount_namespace(const std::string& script) {
    const fs::path file = dir_ / "script.sh";
    std::ofstream(file) << "set -e\n" << script;
    const int status = std::system(("unshare -m sh '" + file.string() + "'").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
};

// Every workload exactly once in the single run of `db`, the run complete, the rows recorded before
// the kill unchanged, and the final JSON covering all four in order.
void expect_whole_run(const std::string& db, const std::vector<std::string>& before_rerun,
                      const Outcome& rerun) {
  const std::vector<std::string> names = workload_names();
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs WHERE completed_at IS NOT NULL"), "1");
  EXPECT_EQ(one(db, "SELECT count(*) FROM results WHERE run_id IS NULL"), "0");
  const std::vector<std::string> recorded =
      rows(db, "SELECT workload, count(*) FROM results GROUP BY workload ORDER BY workload");
  std::vector<std::string> expected;
  for (const std::string& n : names) expected.push_back(n + "|1");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(recorded, expected);
  // Each result whole: all of the baseline's timed calls are in the samples table.
  EXPECT_EQ(one(db,
                "SELECT count(*) FROM results r WHERE (SELECT count(*) FROM samples s WHERE "
                "s.result_id = r.id AND s.side = 'baseline') <> " +
                    std::to_string(kIters)),
            "0");

  const std::vector<std::string> after = rows(db, kRunRows);
  ASSERT_GE(after.size(), before_rerun.size());
  for (std::size_t i = 0; i < before_rerun.size(); ++i)
    EXPECT_EQ(after[i], before_rerun[i]) << "row " << i << " changed by the rerun";

  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  const auto printed = nlohmann::json::parse(rerun.out);
  ASSERT_EQ(printed.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(printed[i]["workload"], names[i]);
    EXPECT_EQ(printed[i]["status"], "correct") << printed[i]["error"];
  }
}

TEST_F(ResumeTest, KilledAtAnyMomentTheSameCommandResumesAndKeepsEachResultOnce) {
  const std::string template_db = warm_template();
  ASSERT_FALSE(HasFailure());
  std::string db;
  // Kill points: before anything reached the file, and after one, two and three results.
  for (int kill_after : {0, 1, 2, 3}) {
    SCOPED_TRACE("killed after " + std::to_string(kill_after) + " result(s)");
    // A loaded machine can stall this process long enough for kbench to finish the pass before
    // the kill lands; that attempt shows nothing and is made again.
    std::vector<std::string> before;
    bool killed_mid_run = false;
    for (int attempt = 0; attempt < 3 && !killed_mid_run; ++attempt) {
      db = copy_of(template_db,
                   "kill" + std::to_string(kill_after) + "-" + std::to_string(attempt) + "/r.db");
      const pid_t child = spawn(db);
      ASSERT_GT(child, 0);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (kill_after > 0) {
        const auto n = try_rows(db, "SELECT count(*) FROM results WHERE run_id IS NOT NULL");
        if (n && !n->empty() && std::stoi(n->front()) >= kill_after) break;
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no result in 60 s:\n"
                                                              << read_file(dir_ / "killed.err");
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      ASSERT_EQ(kill(child, SIGKILL), 0);
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
      before = rows(db, kRunRows);
      EXPECT_GE(static_cast<int>(before.size()), kill_after);
      killed_mid_run = WIFSIGNALED(status) &&
                       one(db, "SELECT count(*) FROM runs WHERE completed_at IS NOT NULL") == "0";
      if (!killed_mid_run) std::cout << "kbench finished before the kill; again\n";
    }
    ASSERT_TRUE(killed_mid_run) << "kbench always finished before the kill";
    std::cout << "killed with " << before.size() << " of 4 result(s) recorded\n";
    // Killed that early, kbench may not have created its run yet; then the rerun starts it.
    const bool run_started = one(db, "SELECT count(*) FROM runs") == "1";
    EXPECT_TRUE(run_started || kill_after == 0);

    const Outcome rerun = run(kRunArgs, db);
    if (run_started) {
      EXPECT_NE(rerun.err.find("resuming run 1: " + std::to_string(before.size()) + " of 4 "),
                std::string::npos)
          << rerun.err;
    }
    expect_whole_run(db, before, rerun);
  }

  // Completed, the same command is a new run, not a replay of the old one; --no-record leaves
  // runs alone.
  std::vector<std::string> unrecorded = kRunArgs;
  unrecorded.push_back("--no-record");
  ASSERT_EQ(run(unrecorded, db).exit_code, 0);
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs"), "1");
  const std::vector<std::string> first_run = rows(db, kRunRows);

  // kbench's own failure (HarnessError) ends the command and leaves the run to resume: a worker
  // that starts once (for the first workload) and then refuses.
  const fs::path worker = dir_ / "worker-once.sh";
  std::ofstream(worker) << "#!/bin/sh\n"
                        << "[ -e '" << (dir_ / "worker-started").string() << "' ] && exit 1\n"
                        << "touch '" << (dir_ / "worker-started").string() << "'\n"
                        << "exec '" << KBENCH_BINARY_DIR << "/src/kbench-worker' \"$@\"\n";
  fs::permissions(worker, fs::perms::owner_all);
  const Outcome failed = run(kRunArgs, db, "KBENCH_WORKER='" + worker.string() + "' ");
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_EQ(failed.err.find("resuming"), std::string::npos) << failed.err;
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs WHERE completed_at IS NULL"), "1");
  const std::vector<std::string> before = rows(db, kRunRows);
  EXPECT_EQ(before.size(), first_run.size() + 1) << failed.err;

  const Outcome resumed = run(kRunArgs, db);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming run 2: 1 of 4 "), std::string::npos) << resumed.err;
  EXPECT_EQ(nlohmann::json::parse(resumed.out).size(), 4u);
  const std::vector<std::string> after = rows(db, kRunRows);
  ASSERT_EQ(after.size(), first_run.size() + 4);
  for (std::size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]) << "row " << i;
  EXPECT_EQ(rows(db,
                 "SELECT count(*), count(DISTINCT workload) FROM results GROUP BY run_id "
                 "ORDER BY run_id"),
            (std::vector<std::string>{"4|4", "4|4"}));
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs WHERE completed_at IS NOT NULL"), "2");
  EXPECT_EQ(one(db, "PRAGMA integrity_check"), "ok");
}

// A batch system's time limit or `scancel` sends SIGTERM: the workload in flight finishes and is
// recorded (not lost, and not recorded as a failure), the command says where it stopped and exits
// 128 + 15, and the same command resumes. A second signal ends kbench at once.
TEST_F(ResumeTest, SigtermFinishesTheWorkloadInFlightAndTheRunResumes) {
  const std::string template_db = warm_template();
  ASSERT_FALSE(HasFailure());
  const std::string db = copy_of(template_db, "sigterm/r.db");
  const pid_t child = spawn(db);
  ASSERT_GT(child, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    const auto n = try_rows(db, "SELECT count(*) FROM results WHERE run_id IS NOT NULL");
    if (n && !n->empty() && std::stoi(n->front()) >= 1) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << read_file(dir_ / "killed.err");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string err = read_file(dir_ / "killed.err");
  ASSERT_TRUE(WIFEXITED(status)) << err;
  const std::vector<std::string> before = rows(db, kRunRows);
  if (WEXITSTATUS(status) == 0) GTEST_SKIP() << "kbench finished before the signal landed";
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM) << err;
  EXPECT_NE(err.find("SIGTERM: stopping after the evaluation in flight"), std::string::npos) << err;
  EXPECT_NE(err.find("stopped by SIGTERM after " + std::to_string(before.size()) +
                     " of 4 workloads; run 1 is kept"),
            std::string::npos)
      << err;
  EXPECT_EQ(one(db, "SELECT count(*) FROM results WHERE status <> 'correct'"), "0");
  EXPECT_EQ(one(db, "SELECT count(*) FROM runs WHERE completed_at IS NULL"), "1");

  const Outcome rerun = run(kRunArgs, db);
  EXPECT_NE(rerun.err.find("resuming run 1: " + std::to_string(before.size()) + " of 4 "),
            std::string::npos)
      << rerun.err;
  expect_whole_run(db, before, rerun);

  // Twice: the second signal ends the process as SIGTERM does by default.
  const std::string again = copy_of(template_db, "sigterm-twice/r.db");
  const pid_t second = spawn(again);
  ASSERT_GT(second, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(second, SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(second, SIGTERM);  // it may have ended already, between two workloads
  ASSERT_EQ(waitpid(second, &status, 0), second);
  EXPECT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) ||
              (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM))
      << read_file(dir_ / "killed.err");
  EXPECT_EQ(one(again, "PRAGMA integrity_check"), "ok");
}

TEST_F(ResumeTest, AFullDiskGivesOneLineAndARunThatResumesWhole) {
  if (const auto why = mount_unavailable()) GTEST_SKIP() << *why;
  const std::string template_db = warm_template();
  ASSERT_FALSE(HasFailure());
  const fs::path mnt = dir_ / "full";
  const fs::path after = dir_ / "after";
  fs::create_directories(mnt);
  fs::create_directories(after);
  const std::string db = (mnt / "r.db").string();
  // Room for the run's row and about one result's pages in the WAL (each commit appends a dozen
  // 4 KiB pages), not for four: the disk fills in the middle of the pass. The file is copied out
  // before the namespace (and its tmpfs) ends.
  constexpr int kRoomBytes = 100 * 1024;
  std::ostringstream script;
  script << "mount -t tmpfs -o size=4m tmpfs '" << mnt.string() << "'\n"
         << "cp '" << template_db << "' '" << db << "'\n"
         << "avail=$(df -B1 --output=avail '" << mnt.string() << "' | tail -n 1)\n"
         << "head -c $((avail - " << kRoomBytes << ")) /dev/zero > '" << mnt.string()
         << "/filler' || true\n"
         << "set +e\n"
         << kbench_exe() << shell_args(kRunArgs) << " --db '" << db << "' >'"
         << (dir_ / "full.out").string() << "' 2>'" << (dir_ / "full.err").string() << "'\n"
         << "echo $? >'" << (dir_ / "full.rc").string() << "'\n"
         << "cp '" << db << "'* '" << after.string() << "/'\n";
  ASSERT_EQ(in_mount_namespace(script.str()), 0);

  const int rc = std::stoi(read_file(dir_ / "full.rc"));
  const std::string err = read_file(dir_ / "full.err");
  EXPECT_NE(rc, 0) << err;
  const std::vector<std::string> err_lines = lines_of(err);
  ASSERT_EQ(err_lines.size(), 1u) << err;
  EXPECT_NE(err_lines[0].find(db), std::string::npos) << err;
  EXPECT_NE(err_lines[0].find("disk is full"), std::string::npos) << err;

  const std::string kept = (after / "r.db").string();
  EXPECT_EQ(one(kept, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(one(kept, "SELECT count(*) FROM runs WHERE completed_at IS NOT NULL"), "0");
  const std::vector<std::string> before = rows(kept, kRunRows);
  EXPECT_LT(before.size(), 4u);
  std::cout << "disk full after " << before.size() << " result(s): " << err_lines[0] << "\n";

  const Outcome rerun = run(kRunArgs, kept);
  expect_whole_run(kept, before, rerun);
}

TEST_F(ResumeTest, AReadOnlyDatabaseGivesOneLineAndStaysUnchanged) {
  if (const auto why = mount_unavailable()) GTEST_SKIP() << *why;
  // The run fails at its first write, before any timing: a database with the current schema will
  // do, no peaks needed.
  const fs::path ro = dir_ / "ro";
  fs::create_directories(ro);
  const std::string db = (ro / "r.db").string();
  ResultStore::open(
      db);  // an empty database of the current schema (`results` would not create one)
  ASSERT_TRUE(fs::exists(db));
  const std::string bytes_before = read_file(db);
  std::ostringstream script;
  // A read-only bind mount of the directory: what a read-only volume or snapshot looks like, and
  // the file stays visible after the namespace ends.
  script << "mount --bind '" << ro.string() << "' '" << ro.string() << "'\n"
         << "mount -o remount,bind,ro '" << ro.string() << "'\n"
         << "set +e\n"
         << kbench_exe() << shell_args(kRunArgs) << " --db '" << db << "' >'"
         << (dir_ / "ro.out").string() << "' 2>'" << (dir_ / "ro.err").string() << "'\n"
         << "echo $? >'" << (dir_ / "ro.rc").string() << "'\n";
  ASSERT_EQ(in_mount_namespace(script.str()), 0);

  const int rc = std::stoi(read_file(dir_ / "ro.rc"));
  const std::string err = read_file(dir_ / "ro.err");
  EXPECT_NE(rc, 0) << err;
  const std::vector<std::string> err_lines = lines_of(err);
  ASSERT_EQ(err_lines.size(), 1u) << err;
  EXPECT_NE(err_lines[0].find(db), std::string::npos) << err;
  EXPECT_TRUE(err_lines[0].find("read-only") != std::string::npos ||
              err_lines[0].find("readonly") != std::string::npos)
      << err;
  EXPECT_EQ(read_file(db), bytes_before) << "the read-only database changed";
  EXPECT_EQ(read_file(dir_ / "ro.out"), "");
  std::cout << "read-only: " << err_lines[0] << "\n";
}

}  // namespace
}  // namespace kbench::testing
