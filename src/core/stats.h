// Summary statistics of timing samples: quantiles, means and the paired bootstrap interval of a
// speedup.
//
// Choices, and why:
//  - Quantiles interpolate linearly between order statistics (Hyndman & Fan type 7, numpy's default
//    "linear"), so numbers here match what a reader gets from numpy.quantile on the exported
//    samples.
//  - The median is the point estimate of a run: timing noise is one-sided (interrupts, migrations,
//    frequency dips only ever add time), which drags the mean but barely moves the median.
//  - A speedup is median(baseline) / median(candidate). Its confidence interval is a paired
//    percentile bootstrap: baseline and candidate calls are interleaved, so sample i of each side
//    saw the same machine state, and resampling pair indices (not each side independently) keeps
//    that pairing. Percentile intervals need no variance formula for a ratio of medians.
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

// The usual summary of one series of timings, in the samples' own unit.
struct TimingStats {
  std::size_t n = 0;
  double min = 0, p25 = 0, median = 0, p75 = 0, max = 0, mean = 0;
};
TimingStats summarize(std::span<const double> samples);

}  // namespace kbench
