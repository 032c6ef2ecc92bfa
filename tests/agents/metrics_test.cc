// The agents' metrics against numbers worked out by hand from small sample sets.
#include "agents/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "agents/metrics_fixture.h"

namespace kbench::agents {
namespace {

using testing::make_sample;
using testing::two_method_samples;
using FastP = std::map<std::string, double>;

void expect_fast_p(const FastP& actual, double f0, double f1, double f15, double f2) {
  ASSERT_EQ(actual.size(), 4u);
  EXPECT_DOUBLE_EQ(actual.at("0"), f0);
  EXPECT_DOUBLE_EQ(actual.at("1"), f1);
  EXPECT_DOUBLE_EQ(actual.at("1.5"), f15);
  EXPECT_DOUBLE_EQ(actual.at("2"), f2);
}

TEST(AgentMetrics, BestOfNByHand) {
  const AgentMetrics metrics = compute_metrics(two_method_samples());
  ASSERT_EQ(metrics.methods.size(), 2u);
  const MethodMetrics& m = metrics.methods.at("best-of-n");
  EXPECT_EQ(m.samples, 8);
  EXPECT_EQ(m.correct_samples, 2);  // 1p_X #1 (0.8x) and #2 (2.5x)
  EXPECT_DOUBLE_EQ(m.per_sample_correctness, 0.25);
  EXPECT_EQ(m.workloads, 2);
  EXPECT_EQ(m.solved, 1);
  ASSERT_EQ(m.best_speedup.size(), 2u);
  EXPECT_DOUBLE_EQ(m.best_speedup.at("1p_X").value(), 2.5);
  EXPECT_FALSE(m.best_speedup.at("2p_Y").has_value());
  // sqrt(2.5 * 1): the unsolved 2p_Y counts 1x.
  EXPECT_DOUBLE_EQ(m.geomean_speedup, std::sqrt(2.5));
  // Only 1p_X is solved, at 2.5x, above every threshold.
  expect_fast_p(m.fast_p, 0.5, 0.5, 0.5, 0.5);
  // 4 samples per workload: N = 1, 2, 4.
  ASSERT_EQ(m.fast_p_at.size(), 3u);
  expect_fast_p(m.fast_p_at.at(1), 0, 0, 0, 0);          // a compile error and a runtime error
  expect_fast_p(m.fast_p_at.at(2), 0.5, 0, 0, 0);        // 1p_X solved at 0.8x
  expect_fast_p(m.fast_p_at.at(4), 0.5, 0.5, 0.5, 0.5);  // the full budget
  const std::map<std::string, int> failures{
      {"compile_error", 1}, {"runtime_error", 1}, {"incorrect", 1}, {"timeout", 1},
      {"rejected", 0},      {"no_code", 1},       {"llm_error", 1}, {"slower", 1}};  // 0.8x
  EXPECT_EQ(m.failures, failures);
  const std::vector<std::pair<int, double>> rounds{{0, 0.25}};
  EXPECT_EQ(m.correctness_by_round, rounds);
  EXPECT_EQ(m.prompt_tokens, 800);
  EXPECT_EQ(m.completion_tokens, 160);
  EXPECT_DOUBLE_EQ(m.llm_seconds, 4.0);
}

TEST(AgentMetrics, IterativeByHand) {
  const MethodMetrics m = compute_metrics(two_method_samples()).methods.at("iterative");
  EXPECT_EQ(m.samples, 10);
  EXPECT_EQ(m.correct_samples, 6);  // 1p_X: 3 (one untimed), 2p_Y: 2, 3p_Z: 1
  EXPECT_DOUBLE_EQ(m.per_sample_correctness, 0.6);
  EXPECT_EQ(m.workloads, 3);
  EXPECT_EQ(m.solved, 3);
  EXPECT_DOUBLE_EQ(m.best_speedup.at("1p_X").value(), 1.6);  // the untimed correct one cannot win
  EXPECT_DOUBLE_EQ(m.best_speedup.at("2p_Y").value(), 3.0);
  EXPECT_DOUBLE_EQ(m.best_speedup.at("3p_Z").value(), 1.0);
  EXPECT_NEAR(m.geomean_speedup, std::cbrt(1.6 * 3.0 * 1.0), 1e-12);
  // 1.6 and 3.0 beat 1 and 1.5; only 3.0 beats 2; 1.0 is not > 1.
  expect_fast_p(m.fast_p, 1, 2.0 / 3, 2.0 / 3, 1.0 / 3);
  ASSERT_EQ(m.fast_p_at.size(), 3u);
  // #0 only: 1p_X at 1.2x; 2p_Y incorrect; 3p_Z a sandbox violation.
  expect_fast_p(m.fast_p_at.at(1), 1.0 / 3, 1.0 / 3, 0, 0);
  // #0-#1: 1p_X 1.6x, 2p_Y 0.5x, 3p_Z 1.0x.
  expect_fast_p(m.fast_p_at.at(2), 1, 1.0 / 3, 1.0 / 3, 0);
  expect_fast_p(m.fast_p_at.at(4), 1, 2.0 / 3, 2.0 / 3, 1.0 / 3);
  // slower: the untimed correct 1p_X #3, 2p_Y's 0.5x and 3p_Z's 1.0x.
  const std::map<std::string, int> failures{
      {"compile_error", 1}, {"runtime_error", 0}, {"incorrect", 1},
      {"timeout", 0},       {"rejected", 1},      {"no_code", 0},
      {"llm_error", 0},     {"slower", 3},        {"sandbox_violation", 1}};
  EXPECT_EQ(m.failures, failures);
  // Round 0: 1 of 3 correct; 1: all 3; 2: 1 of 2; 3: 1 of 2.
  const std::vector<std::pair<int, double>> rounds{{0, 1.0 / 3}, {1, 1.0}, {2, 0.5}, {3, 0.5}};
  EXPECT_EQ(m.correctness_by_round, rounds);
}

TEST(AgentMetrics, OverallAggregatesWorkloadsAcrossMethods) {
  const MethodMetrics m = compute_metrics(two_method_samples()).overall;
  EXPECT_EQ(m.samples, 18);
  EXPECT_EQ(m.correct_samples, 8);
  EXPECT_DOUBLE_EQ(m.per_sample_correctness, 8.0 / 18);
  // Three distinct workloads, not five (method, workload) pairs; 2p_Y is solved by iterative alone.
  EXPECT_EQ(m.workloads, 3);
  EXPECT_EQ(m.solved, 3);
  EXPECT_DOUBLE_EQ(m.best_speedup.at("1p_X").value(), 2.5);  // best-of-n's, over iterative's 1.6
  EXPECT_DOUBLE_EQ(m.best_speedup.at("2p_Y").value(), 3.0);
  EXPECT_DOUBLE_EQ(m.best_speedup.at("3p_Z").value(), 1.0);
  EXPECT_NEAR(m.geomean_speedup, std::cbrt(2.5 * 3.0 * 1.0), 1e-12);
  expect_fast_p(m.fast_p, 1, 2.0 / 3, 2.0 / 3, 2.0 / 3);
  // The budget is per method (4), though 1p_X has 8 samples overall: no N = 8.
  ASSERT_EQ(m.fast_p_at.size(), 3u);
  // #0 of each method: only iterative's 1p_X at 1.2x.
  expect_fast_p(m.fast_p_at.at(1), 1.0 / 3, 1.0 / 3, 0, 0);
  // #0-#1: 1p_X 1.6x (over best-of-n's 0.8x), 2p_Y 0.5x, 3p_Z 1.0x.
  expect_fast_p(m.fast_p_at.at(2), 1, 1.0 / 3, 1.0 / 3, 0);
  EXPECT_EQ(m.fast_p_at.at(4), m.fast_p);
  const std::map<std::string, int> failures{
      {"compile_error", 2}, {"runtime_error", 1}, {"incorrect", 2},
      {"timeout", 1},       {"rejected", 1},      {"no_code", 1},
      {"llm_error", 1},     {"slower", 4},        {"sandbox_violation", 1}};
  EXPECT_EQ(m.failures, failures);
  // Round 0 pools best-of-n's 8 samples (2 correct) with iterative's 3 (1 correct).
  const std::vector<std::pair<int, double>> rounds{{0, 3.0 / 11}, {1, 1.0}, {2, 0.5}, {3, 0.5}};
  EXPECT_EQ(m.correctness_by_round, rounds);
  EXPECT_EQ(m.prompt_tokens, 1800);
  EXPECT_EQ(m.completion_tokens, 360);
  EXPECT_DOUBLE_EQ(m.llm_seconds, 9.0);
}

TEST(AgentMetrics, EmptyInput) {
  const AgentMetrics metrics = compute_metrics({});
  EXPECT_TRUE(metrics.methods.empty());
  const MethodMetrics& m = metrics.overall;
  EXPECT_EQ(m.samples, 0);
  EXPECT_EQ(m.correct_samples, 0);
  EXPECT_EQ(m.per_sample_correctness, 0);
  EXPECT_EQ(m.workloads, 0);
  EXPECT_EQ(m.solved, 0);
  EXPECT_EQ(m.geomean_speedup, 1);  // nothing found: the baseline is kept
  expect_fast_p(m.fast_p, 0, 0, 0, 0);
  EXPECT_TRUE(m.fast_p_at.empty());
  ASSERT_EQ(m.failures.size(), kFailureKinds.size());
  for (const auto& [kind, count] : m.failures) EXPECT_EQ(count, 0) << kind;
  EXPECT_TRUE(m.best_speedup.empty());
  EXPECT_TRUE(m.correctness_by_round.empty());
  EXPECT_EQ(fast_p_at_threshold(m, 0), 0);
}

TEST(AgentMetrics, GeomeanFloorsEachWorkloadAtOneX) {
  // A correct but slower kernel alone: the user keeps the baseline, 1x, not 0.25x.
  EXPECT_DOUBLE_EQ(
      compute_metrics({make_sample("beam", "1p_X", 0, 0, "correct", 0.25)}).overall.geomean_speedup,
      1.0);
  // 4x and 0.25x: sqrt(4 * 1) = 2, where an unfloored geomean would say 1.
  const AgentMetrics metrics =
      compute_metrics({make_sample("beam", "1p_X", 0, 0, "correct", 4.0),
                       make_sample("beam", "2p_Y", 0, 0, "correct", 0.25)});
  EXPECT_DOUBLE_EQ(metrics.methods.at("beam").geomean_speedup, 2.0);
  EXPECT_EQ(metrics.methods.at("beam").failures.at("slower"), 1);
}

TEST(AgentMetrics, NonFiniteSpeedupCountsAsUntimed) {
  const AgentMetrics metrics = compute_metrics(
      {make_sample("beam", "1p_X", 0, 0, "correct", std::numeric_limits<double>::quiet_NaN()),
       make_sample("beam", "1p_X", 1, 0, "correct", std::numeric_limits<double>::infinity()),
       make_sample("beam", "1p_X", 2, 0, "correct", 0.0)});
  const MethodMetrics& m = metrics.methods.at("beam");
  EXPECT_EQ(m.solved, 1);
  EXPECT_FALSE(m.best_speedup.at("1p_X").has_value());
  EXPECT_DOUBLE_EQ(m.geomean_speedup, 1.0);
  expect_fast_p(m.fast_p, 1, 0, 0, 0);  // correct, so fast_0, but faster than nothing
  EXPECT_EQ(m.failures.at("slower"), 3);
}

// Eight samples that each match the baseline: their point estimates scatter about 1, and the best
// is above it, so fast_1 counts the workload; no sample's own interval excludes 1, so
// significantly_faster does not. A workload counts there only through a correct sample whose
// verdict is "faster".
TEST(AgentMetrics, SignificantlyFasterNeedsASampleWhoseIntervalLiesAbove1) {
  std::vector<AgentSample> samples;
  const double matching[] = {0.991, 1.004, 0.998, 1.012, 0.995, 1.007, 0.989, 1.001};
  for (int i = 0; i < 8; ++i)
    samples.push_back(make_sample("best-of-n", "1p_X", i, 0, "correct", matching[i],
                                  "no significant difference"));
  samples.push_back(make_sample("best-of-n", "2p_Y", 0, 0, "correct", 1.31, "faster"));
  samples.push_back(make_sample("best-of-n", "3p_Z", 0, 0, "correct", 1.02, "unstable"));
  const MethodMetrics m = compute_metrics(samples).methods.at("best-of-n");
  expect_fast_p(m.fast_p, 1, 1, 0, 0);
  EXPECT_DOUBLE_EQ(m.significantly_faster, 1.0 / 3);
  // The fixture: best-of-n's 1p_X and iterative's 2p_Y have a "faster" sample; iterative's 1p_X
  // at 1.6x does not, and 3p_Z has none.
  const AgentMetrics fixture = compute_metrics(two_method_samples());
  EXPECT_DOUBLE_EQ(fixture.methods.at("best-of-n").significantly_faster, 0.5);
  EXPECT_DOUBLE_EQ(fixture.methods.at("iterative").significantly_faster, 1.0 / 3);
  EXPECT_DOUBLE_EQ(fixture.overall.significantly_faster, 2.0 / 3);
}

TEST(AgentMetrics, FastPAtNReachesThePapersBudget) {
  // 144 samples of one workload, only the last one correct (2.5x): fast_p@N is 0 for every N up
  // to 64 and 1 at 144, which is the largest budget, so no N beyond it is reported.
  std::vector<AgentSample> samples;
  for (int i = 0; i < 143; ++i)
    samples.push_back(make_sample("best-of-n", "1p_X", i, 0, "timeout"));
  samples.push_back(make_sample("best-of-n", "1p_X", 143, 0, "correct", 2.5));
  const MethodMetrics m = compute_metrics(samples).methods.at("best-of-n");
  ASSERT_EQ(m.fast_p_at.size(), kFastPBudgets.size());
  for (int budget : kFastPBudgets) {
    const double expected = budget == 144 ? 1.0 : 0.0;
    expect_fast_p(m.fast_p_at.at(budget), expected, expected, expected, expected);
  }
  // 9 samples: budgets 1, 2, 4, 8 (16 would claim samples the run never had).
  samples.resize(9);
  EXPECT_EQ(compute_metrics(samples).overall.fast_p_at.size(), 4u);
}

TEST(AgentMetrics, FastPAtNKeepsWorkloadsWithoutEarlySamples) {
  // 2p_Y's only sample has index 3: at N = 1 and 2 it is an unsolved workload, not a missing one.
  const MethodMetrics m = compute_metrics({make_sample("beam", "1p_X", 0, 0, "correct", 2.0),
                                           make_sample("beam", "1p_X", 1, 0, "incorrect"),
                                           make_sample("beam", "1p_X", 2, 0, "incorrect"),
                                           make_sample("beam", "2p_Y", 3, 0, "correct", 3.0)})
                              .methods.at("beam");
  ASSERT_EQ(m.fast_p_at.size(), 2u);  // largest count per workload: 3
  expect_fast_p(m.fast_p_at.at(1), 0.5, 0.5, 0.5, 0);
  expect_fast_p(m.fast_p_at.at(2), 0.5, 0.5, 0.5, 0);
  expect_fast_p(m.fast_p, 1, 1, 1, 0.5);  // 2.0 is not > 2
}

TEST(AgentMetrics, FastPCurveAgreesWithTheThresholds) {
  const AgentMetrics metrics = compute_metrics(two_method_samples());
  for (const auto& [method, m] : metrics.methods)
    for (const auto& t : kFastPThresholds)
      EXPECT_DOUBLE_EQ(fast_p_at_threshold(m, t.p), m.fast_p.at(t.key)) << method << " " << t.key;
  // Strictly faster: best-of-n's 2.5x counts just below 2.5 and not at it.
  const MethodMetrics& m = metrics.methods.at("best-of-n");
  EXPECT_DOUBLE_EQ(fast_p_at_threshold(m, 2.49), 0.5);
  EXPECT_DOUBLE_EQ(fast_p_at_threshold(m, 2.5), 0);
  // A workload solved only without a timing counts at p = 0 and at no p above it.
  const MethodMetrics untimed =
      compute_metrics({make_sample("beam", "1p_X", 0, 0, "correct")}).overall;
  EXPECT_DOUBLE_EQ(fast_p_at_threshold(untimed, 0), 1);
  EXPECT_DOUBLE_EQ(fast_p_at_threshold(untimed, 0.01), 0);
}

TEST(AgentMetrics, EachEvaluatedSampleCountsForItsMachine) {
  std::vector<AgentSample> samples = two_method_samples();
  for (AgentSample& s : samples)
    if (s.status == "correct") s.machine = s.workload == "2p_Y" ? "node2 (CPU B)" : "node1 (CPU A)";
  samples[0].machine = "node1 (CPU A)";  // a compile error, evaluated on node1
  const AgentMetrics m = compute_metrics(samples);
  ASSERT_EQ(m.machines.size(), 2u);
  const MachineShare& node1 = m.machines.at("node1 (CPU A)");
  EXPECT_EQ(node1.evaluated, 7);  // 1p_X: 2 + 3 correct, the compile error; 3p_Z: 1 correct
  EXPECT_EQ(node1.correct, 6);
  EXPECT_EQ(node1.workloads, (std::set<std::string>{"1p_X", "3p_Z"}));
  EXPECT_EQ(m.machines.at("node2 (CPU B)").evaluated, 2);
  EXPECT_EQ(m.machines_of_workload.at("2p_Y"), (std::set<std::string>{"node2 (CPU B)"}));
  // Without a machine (not evaluated), a sample counts for none.
  EXPECT_TRUE(compute_metrics(two_method_samples()).machines.empty());
}

}  // namespace
}  // namespace kbench::agents
