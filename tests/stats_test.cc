// Known-answer tests of the timing statistics, and the properties the speedup interval must have.
#include "core/stats.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <vector>

namespace kbench {
namespace {

TEST(Quantile, MedianOfOddEvenAndSingleCounts) {
  EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);  // mean of the two middle values
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{2, 2, 9, 2}), 2.0);
}

TEST(Quantile, InterpolatesLinearlyLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4], q): h = q * (n - 1), then x[floor h] + frac(h) * (next - x[floor
  // h]).
  const std::vector<double> x = {4, 2, 1, 3};
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(x, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(x, 0.75), 3.25);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 4.0);
  // numpy.quantile([10, 20, 30, 40, 50], 0.1) = 14: h = 0.4.
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{50, 40, 30, 20, 10}, 0.1), 14.0);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{5}, 0.3), 5.0);
}

TEST(Quantile, RejectsEmptyInputAndBadQ) {
  EXPECT_THROW(quantile(std::vector<double>{}, 0.5), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1, 2}, -0.1), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1, 2}, 1.5), std::invalid_argument);
}

TEST(Means, ArithmeticAndGeometric) {
  EXPECT_DOUBLE_EQ(mean(std::vector<double>{1, 2, 3, 4}), 2.5);
  EXPECT_NEAR(geomean(std::vector<double>{1, 4, 16}), 4.0, 1e-12);
  EXPECT_NEAR(geomean(std::vector<double>{2, 8}), 4.0, 1e-12);
  EXPECT_NEAR(geomean(std::vector<double>{0.5, 2.0}), 1.0, 1e-12);  // a 2x loss cancels a 2x gain
  EXPECT_NEAR(geomean(std::vector<double>{3}), 3.0, 1e-12);
  EXPECT_THROW(geomean(std::vector<double>{1, 0}), std::invalid_argument);
  EXPECT_THROW(geomean(std::vector<double>{1, -2}), std::invalid_argument);
  EXPECT_THROW(mean(std::vector<double>{}), std::invalid_argument);
}

TEST(Summarize, FiveNumbersAndMean) {
  const TimingStats s = summarize(std::vector<double>{5, 1, 4, 2, 3});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.p25, 2);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.p75, 4);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
}

// Timings of a kernel with true time `center`: multiplicative lognormal noise plus a rare slow
// outlier, the shape real timings have.
std::vector<double> fake_timings(double center, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> noise(0.0, 0.05);
  std::vector<double> t(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    t[static_cast<std::size_t>(i)] = center * noise(rng) * (i % 17 == 5 ? 1.5 : 1.0);
  return t;
}

TEST(BootstrapRatioCi, ContainsThePointEstimate) {
  const auto base = fake_timings(2.0, 60, 1), cand = fake_timings(1.0, 60, 2);
  const double point = median(base) / median(cand);
  const auto [lo, hi] = bootstrap_ratio_ci(base, cand, 0.95, 2000, 42);
  EXPECT_LE(lo, point);
  EXPECT_GE(hi, point);
  EXPECT_LT(lo, hi);
  EXPECT_GT(lo, 1.5);  // a clear 2x speedup is not confused with no speedup
  EXPECT_LT(hi, 2.5);
}

TEST(BootstrapRatioCi, DeterministicPerSeed) {
  const auto base = fake_timings(1.2, 40, 3), cand = fake_timings(1.0, 40, 4);
  const auto a = bootstrap_ratio_ci(base, cand, 0.95, 1000, 7);
  const auto b = bootstrap_ratio_ci(base, cand, 0.95, 1000, 7);
  const auto c = bootstrap_ratio_ci(base, cand, 0.95, 1000, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(BootstrapRatioCi, NarrowsWithMoreSamples) {
  const auto few =
      bootstrap_ratio_ci(fake_timings(1.5, 20, 5), fake_timings(1.0, 20, 6), 0.95, 2000, 9);
  const auto many =
      bootstrap_ratio_ci(fake_timings(1.5, 500, 5), fake_timings(1.0, 500, 6), 0.95, 2000, 9);
  EXPECT_LT(many.second - many.first, 0.6 * (few.second - few.first));
}

TEST(BootstrapRatioCi, WiderAtHigherConfidence) {
  const auto base = fake_timings(1.5, 50, 10), cand = fake_timings(1.0, 50, 11);
  const auto ci80 = bootstrap_ratio_ci(base, cand, 0.80, 2000, 1);
  const auto ci99 = bootstrap_ratio_ci(base, cand, 0.99, 2000, 1);
  EXPECT_LE(ci99.first, ci80.first);
  EXPECT_GE(ci99.second, ci80.second);
}

TEST(BootstrapRatioCi, IdenticalDistributionsContainOne) {
  const auto base = fake_timings(1.0, 100, 12), cand = fake_timings(1.0, 100, 13);
  const auto [lo, hi] = bootstrap_ratio_ci(base, cand, 0.95, 2000, 3);
  EXPECT_LE(lo, 1.0);
  EXPECT_GE(hi, 1.0);
  // The very same samples on both sides: every replicate's ratio is exactly 1.
  const auto same = bootstrap_ratio_ci(base, base, 0.95, 500, 3);
  EXPECT_DOUBLE_EQ(same.first, 1.0);
  EXPECT_DOUBLE_EQ(same.second, 1.0);
}

TEST(BootstrapRatioCi, RejectsBadArguments) {
  const std::vector<double> two = {1, 2}, three = {1, 2, 3};
  EXPECT_THROW(bootstrap_ratio_ci(two, three, 0.95, 100, 0), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_ci({}, {}, 0.95, 100, 0), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_ci(two, two, 1.0, 100, 0), std::invalid_argument);
  EXPECT_THROW(bootstrap_ratio_ci(two, two, 0.95, 0, 0), std::invalid_argument);
}

TEST(BootstrapMedianCi, BracketsTheMedianAndNarrowsWithMoreSamples) {
  const auto few = fake_timings(1.0, 20, 14), many = fake_timings(1.0, 500, 14);
  const auto [lo, hi] = bootstrap_median_ci(few, 0.95, 2000, 5);
  EXPECT_LE(lo, median(few));
  EXPECT_GE(hi, median(few));
  const auto wide = bootstrap_median_ci(few, 0.95, 2000, 5);
  const auto narrow = bootstrap_median_ci(many, 0.95, 2000, 5);
  EXPECT_LT(narrow.second - narrow.first, 0.6 * (wide.second - wide.first));
  EXPECT_EQ(bootstrap_median_ci(few, 0.95, 500, 9), bootstrap_median_ci(few, 0.95, 500, 9));
  const std::vector<double> constant(10, 3.0);
  EXPECT_EQ(bootstrap_median_ci(constant, 0.95, 100, 1), std::pair(3.0, 3.0));
  EXPECT_THROW(bootstrap_median_ci({}, 0.95, 100, 0), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ci(constant, 0.0, 100, 0), std::invalid_argument);
}

TEST(MedianCi, SignTestOrderStatistics) {
  // n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2), so k = 2: [x(2), x(9)] (97.9% coverage).
  const std::vector<double> ten = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  EXPECT_EQ(median_ci(ten, 0.95), std::pair(2.0, 9.0));
  // n = 20: k = 6, [x(6), x(15)].
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i);
  EXPECT_EQ(median_ci(twenty, 0.95), std::pair(6.0, 15.0));
  // n = 30: k = 10.
  std::vector<double> thirty;
  for (int i = 1; i <= 30; ++i) thirty.push_back(i);
  EXPECT_EQ(median_ci(thirty, 0.95), std::pair(10.0, 21.0));
  // Too few samples for 95%: the whole range.
  EXPECT_EQ(median_ci(std::vector<double>{3, 1, 2, 5, 4}, 0.95), std::pair(1.0, 5.0));
  EXPECT_EQ(median_ci(std::vector<double>{7}, 0.95), std::pair(7.0, 7.0));
  // Lower confidence, narrower: n = 10 at 80% gives k = 3 (P(B <= 2) = 56/1024 <= 0.1).
  EXPECT_EQ(median_ci(ten, 0.80), std::pair(3.0, 8.0));
  EXPECT_THROW(median_ci(std::vector<double>{}, 0.95), std::invalid_argument);
  EXPECT_THROW(median_ci(ten, 1.0), std::invalid_argument);
}

TEST(MedianCi, CoversTheTrueMedianAtLeastNominallyOnSmallSamples) {
  std::mt19937_64 rng(99);
  std::lognormal_distribution<double> skewed(0.0, 0.5);  // median exactly 1
  int covered = 0;
  constexpr int kRuns = 2000;
  for (int run = 0; run < kRuns; ++run) {
    std::vector<double> x(10);
    for (double& v : x) v = skewed(rng);
    const auto [lo, hi] = median_ci(x, 0.95);
    if (lo <= 1.0 && 1.0 <= hi) ++covered;
  }
  EXPECT_GE(covered, kRuns * 0.96);  // exact coverage 97.85%; 0.96 leaves 4 sigma for chance
}

TEST(Stddev, PopulationFormula) {
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9}), 2.0);
  EXPECT_DOUBLE_EQ(stddev(std::vector<double>{5}), 0.0);
  EXPECT_THROW(stddev(std::vector<double>{}), std::invalid_argument);
}

}  // namespace
}  // namespace kbench
