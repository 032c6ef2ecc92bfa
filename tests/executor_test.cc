// The local pool: concurrent evaluations check off the timing CPUs and time on them, one at a time;
// results come back in order and each is reported once.
#include "harness/executor.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "agents/candidate_sources.h"
#include "scratch_dir_support.h"
#include "workloads/registry.h"

namespace kbench {
namespace {

using agents::testing::read_text;
using agents::testing::wrap_kb_run;

std::string source_path(const std::string& relative) {
  return std::string(KBENCH_SOURCE_DIR) + "/" + relative;
}

// Correct RMSNorm with a prologue that returns `failure` from kb_run when `condition` holds;
// `timing` is the set of the timing CPUs, `now` the worker's CPUs at this call, `shared` the two's
// intersection, `first` the worker's CPUs at its first call.
constexpr int kTrials = 3;
std::string cpu_checking_candidate(const std::string& condition, int failure) {
  std::string timing_set;
  for (int cpu : plan_cpus(1).timing)
    timing_set += "  CPU_SET(" + std::to_string(cpu) + ", &timing);\n";
  return wrap_kb_run(read_text(source_path("examples/12p_RMSNorm_fast.cpp")),
                     "#include <sched.h>\n",
                     "  static int calls = 0;\n"
                     "  static cpu_set_t first;\n"
                     "  cpu_set_t timing, now, shared;\n"
                     "  CPU_ZERO(&timing);\n" +
                         timing_set +
                         "  CPU_ZERO(&now);\n"
                         "  if (sched_getaffinity(0, sizeof now, &now) != 0) return 2;\n"
                         "  if (++calls == 1) first = now;\n"
                         "  CPU_AND(&shared, &timing, &now);\n"
                         "  if (" +
                         condition + ") return " + std::to_string(failure) + ";");
}

// Every worker stays on the CPUs it started on, and those are the timing CPUs or none of them.
std::string stays_on_timing_cpus_or_off_them() {
  return cpu_checking_candidate(
      "!CPU_EQUAL(&first, &now) || (CPU_COUNT(&shared) != 0 && !CPU_EQUAL(&now, &timing))", 3);
}

// Fails wherever it runs on a timing CPU: in gate 3 always, in gate 2 where it is not kept off.
std::string fails_on_timing_cpus() {
  return cpu_checking_candidate("CPU_COUNT(&shared) != 0", 5);
}

EvalOptions base_options(const std::filesystem::path& dir) {
  EvalOptions o;
  o.workload = find_workload("12p");
  o.size = Size::kSmoke;
  o.threads = 1;
  o.trials = kTrials;
  o.iters = 5;
  o.time_budget_s = 0.3;
  o.worker_exe = std::string(KBENCH_BINARY_DIR) + "/src/kbench-worker";
  o.cache_dir = (dir / "cache").string();
  return o;
}

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kbench-executor-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST(CpuPlanTest, TimingTakesTheFirstCpusAndCheckingTheRest) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const CpuPlan plan = plan_cpus(1);
  ASSERT_EQ(plan.timing.size(), 1u);
  EXPECT_EQ(plan.timing, worker_cpus(1));
  EXPECT_EQ(static_cast<int>(plan.checking.size()), CPU_COUNT(&allowed) - 1);
  std::set<int> all(plan.checking.begin(), plan.checking.end());
  EXPECT_FALSE(all.count(plan.timing[0]));
  const CpuPlan every = plan_cpus(CPU_COUNT(&allowed));
  EXPECT_TRUE(every.checking.empty());
}

TEST_F(ExecutorTest, ConcurrentEvaluationsCheckOffTheTimingCpusAndTimeOnThem) {
  if (plan_cpus(1).checking.empty()) GTEST_SKIP() << "one CPU: evaluations run one at a time";
  LocalPoolExecutor executor(base_options(dir_), std::nullopt, (dir_ / "work").string());
  ASSERT_GE(executor.jobs(), 2);
  const std::vector<std::string> sources(3, stays_on_timing_cpus_or_off_them());
  std::vector<std::size_t> reported;
  const std::vector<EvalResult> results =
      executor.evaluate(sources, [&](std::size_t i, const EvalResult&) { reported.push_back(i); });
  ASSERT_EQ(results.size(), 3u);
  for (const EvalResult& r : results) EXPECT_EQ(r.status, Status::kCorrect) << r.error;
  std::sort(reported.begin(), reported.end());
  EXPECT_EQ(reported, (std::vector<std::size_t>{0, 1, 2}));

  // The checks ran off the timing CPUs: a candidate that fails on them passes gate 2 and fails
  // only once timed (two of them, so that they run concurrently).
  for (const EvalResult& r : executor.evaluate(std::vector(2, fails_on_timing_cpus()), {})) {
    EXPECT_EQ(r.status, Status::kRuntimeError);
    EXPECT_TRUE(r.correctness.passed) << r.error;
    EXPECT_NE(r.error.find("kb_run returned 5"), std::string::npos) << r.error;
  }
}

TEST_F(ExecutorTest, OneAtATimeChecksOnTheTimingCpus) {
  // With one job there is no other CPU to check on, so the candidate above fails in gate 2: the
  // test of the checking CPUs can fail.
  LocalPoolExecutor executor(base_options(dir_), std::nullopt, (dir_ / "work").string(), 1);
  const std::vector<EvalResult> results = executor.evaluate({fails_on_timing_cpus()}, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::kRuntimeError);
  EXPECT_FALSE(results[0].correctness.passed);
  EXPECT_NE(results[0].error.find("kb_run returned 5"), std::string::npos) << results[0].error;
  // And its workers stay where they started.
  EXPECT_EQ(executor.evaluate({stays_on_timing_cpus_or_off_them()}, {})[0].status,
            Status::kCorrect);
}

// A SIGKILLed kbench leaves its batch directory behind: the next executor removes it, and leaves
// a live one's alone.
TEST_F(ExecutorTest, ABatchOfAKilledProcessIsRemovedAndALiveOnesKept) {
  const auto root = dir_ / "work";
  const auto abandoned = testing::abandoned_scratch_dir(root, "batch");
  std::ofstream(abandoned / "candidate-0.cpp") << "int x;";
  LocalPoolExecutor live(base_options(dir_), std::nullopt, root.string(), 1);
  {
    LocalPoolExecutor executor(base_options(dir_), std::nullopt, root.string(), 1);
    EXPECT_FALSE(std::filesystem::exists(abandoned));
  }
  int batches = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root))
    batches += entry.path().filename().string().starts_with("batch-");
  EXPECT_EQ(batches, 1) << "the live executor's batch was removed, or the ended one's kept";
}

TEST_F(ExecutorTest, ResultsComeBackInTheOrderOfTheSources) {
  LocalPoolExecutor executor(base_options(dir_), std::nullopt, (dir_ / "work").string());
  const std::vector<std::string> sources = {
      read_text(source_path("examples/12p_RMSNorm_wrong.cpp")), "int main( {",
      read_text(source_path("examples/12p_RMSNorm_fast.cpp"))};
  const std::vector<EvalResult> results = executor.evaluate(sources, {});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, Status::kIncorrect);
  EXPECT_EQ(results[1].status, Status::kCompileError);
  EXPECT_EQ(results[2].status, Status::kCorrect);
}

// The follow-up (the agents' loop analysis) sees each evaluation's options and result, can add to
// the result before it is reported, and runs on the timing lease: never two at once.
TEST_F(ExecutorTest, AFollowupAddsToTheResultBeforeItIsReportedOneAtATime) {
  LocalPoolExecutor executor(base_options(dir_), std::nullopt, (dir_ / "work").string());
  std::atomic<int> running{0}, most{0};
  std::mutex seen_mutex;
  std::set<std::string> seen_paths;
  executor.set_followup([&](const EvalOptions& options, EvalResult& result) {
    const int now = ++running;
    most = std::max(most.load(), now);
    {
      std::lock_guard lock(seen_mutex);
      seen_paths.insert(options.candidate_path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    result.analysis_json = std::string(R"({"status":")") + status_name(result.status) + R"("})";
    --running;
  });
  const std::vector<std::string> sources = {
      read_text(source_path("examples/12p_RMSNorm_fast.cpp")), "int main( {",
      read_text(source_path("examples/12p_RMSNorm_fast.cpp"))};
  std::vector<std::string> reported(sources.size());
  const std::vector<EvalResult> results = executor.evaluate(
      sources, [&](std::size_t i, const EvalResult& r) { reported[i] = r.analysis_json; });
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(seen_paths.size(), 3u);
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].analysis_json,
              std::string(R"({"status":")") + status_name(results[i].status) + R"("})");
    EXPECT_EQ(reported[i], results[i].analysis_json);
  }
}

}  // namespace
}  // namespace kbench
