// Summary statistics of timing samples: quantiles, means, spread, and intervals of a median and of
// a ratio of medians.
//
// Choices, and why:
//  - Quantiles interpolate linearly between order statistics (Hyndman & Fan type 7, numpy's default
//    "linear"), so numbers here match what a reader gets from numpy.quantile on the exported
//    samples.
//  - The median is the point estimate of a run: timing noise is one-sided (interrupts, migrations,
//    frequency dips only ever add time), which drags the mean but barely moves the median.
//  - bootstrap_ratio_ci: a ratio of medians with a paired percentile bootstrap (resampling pair
//    indices, not each side independently, keeps the pairing of interleaved calls). The evaluator
//    itself takes the median of per-pair ratios with median_ci's sign-test interval, which holds
//    its coverage at the 10-20 pairs a slow workload affords (harness/noise.h).
//  - Resampling draws come from Philox keyed by the caller's seed, so an interval is reproducible
//    on any machine and standard library (std::uniform_int_distribution is implementation-defined).
//  - Empty input, NaN, mismatched pair counts and non-positive values in a geometric mean are
//    caller bugs, reported with std::invalid_argument rather than a silent 0 or NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace kbench {

// The q-quantile, q in [0, 1], with linear interpolation between order statistics (numpy "linear").
double quantile(std::span<const double> samples, double q);

// quantile(samples, 0.5): the middle value, or the mean of the two middle values for an even count.
double median(std::span<const double> samples);

double mean(std::span<const double> samples);

// exp(mean(log x)); every value must be > 0. The mean of ratios such as per-workload speedups.
double geomean(std::span<const double> samples);

// Paired percentile-bootstrap interval of median(baseline) / median(candidate) at `confidence`
// (e.g. 0.95). Both spans hold the same number of samples, pair i taken back to back. `resamples`
// bootstrap replicates are drawn deterministically from `seed`. Returns {lower, upper}.
std::pair<double, double> bootstrap_ratio_ci(std::span<const double> baseline,
                                             std::span<const double> candidate, double confidence,
                                             int resamples, std::uint64_t seed);

// Percentile-bootstrap interval of median(samples) at `confidence`, `resamples` replicates drawn
// deterministically from `seed` (the same draws as bootstrap_ratio_ci's). Returns {lower, upper}.
std::pair<double, double> bootstrap_median_ci(std::span<const double> samples, double confidence,
                                              int resamples, std::uint64_t seed);

// Distribution-free interval of the median at `confidence`: the order statistics x(k) and
// x(n + 1 - k), k the largest with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2 (the sign
// test's interval). Its coverage is at least `confidence` for independent samples of any
// continuous distribution, also at the small counts where a bootstrap of the median undercovers;
// with too few samples for that (n < 6 at 95%) it is [min, max]. Returns {lower, upper}.
std::pair<double, double> median_ci(std::span<const double> samples, double confidence);

// Population standard deviation (divides by n); 0 for a single sample.
double stddev(std::span<const double> samples);

// The usual summary of one series of timings, in the samples' own unit.
struct TimingStats {
  std::size_t n = 0;
  double min = 0, p25 = 0, median = 0, p75 = 0, max = 0, mean = 0;
};
TimingStats summarize(std::span<const double> samples);

}  // namespace kbench
