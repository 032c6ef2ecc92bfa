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

// Correct RMSNorm that returns an error unless its first `kTrials` calls (gate 2) all ran on one
// CPU set and every later call (gate 3) on a set disjoint from it.
constexpr int kTrials = 3;
std::string cpu_checking_candidate() {
  return wrap_kb_run(read_text(source_path("examples/12p_RMSNorm_fast.cpp")),
                     "#include <sched.h>\n",
                     "  static int calls = 0;\n"
                     "  static cpu_set_t first;\n"
                     "  cpu_set_t now;\n"
                     "  CPU_ZERO(&now);\n"
                     "  if (sched_getaffinity(0, sizeof now, &now) != 0) return 2;\n"
                     "  if (++calls == 1) first = now;\n"
                     "  cpu_set_t both;\n"
                     "  CPU_AND(&both, &first, &now);\n"
                     "  if (calls <= 3 && !CPU_EQUAL(&first, &now)) return 3;\n"
                     "  if (calls > 3 && CPU_COUNT(&both) != 0) return 4;");
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
  const std::vector<std::string> sources(3, cpu_checking_candidate());
  std::vector<std::size_t> reported;
  const std::vector<EvalResult> results =
      executor.evaluate(sources, [&](std::size_t i, const EvalResult&) { reported.push_back(i); });
  ASSERT_EQ(results.size(), 3u);
  for (const EvalResult& r : results) EXPECT_EQ(r.status, Status::kCorrect) << r.error;
  std::sort(reported.begin(), reported.end());
  EXPECT_EQ(reported, (std::vector<std::size_t>{0, 1, 2}));
}

TEST_F(ExecutorTest, OneAtATimeKeepsTheWorkersWhereTheyAre) {
  // With one job the candidate stays on the timing CPU throughout: the checker above must fail,
  // which shows it can.
  LocalPoolExecutor executor(base_options(dir_), std::nullopt, (dir_ / "work").string(), 1);
  const std::vector<EvalResult> results = executor.evaluate({cpu_checking_candidate()}, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, Status::kRuntimeError);
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
