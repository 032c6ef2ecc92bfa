// Quantiles, means and the paired bootstrap CI of a ratio of medians (choices are in stats.h).
#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/philox.h"

namespace kbench {
namespace {

void require_samples(std::span<const double> samples, const char* what) {
  if (samples.empty()) throw std::invalid_argument(std::string(what) + ": no samples");
  for (double x : samples)
    if (std::isnan(x)) throw std::invalid_argument(std::string(what) + ": NaN sample");
}

// Type-7 quantile of sorted samples: h = q (n - 1), then interpolate from x[floor h] to the next.
double sorted_quantile(const std::vector<double>& v, double q) {
  const double h = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const double frac = h - static_cast<double>(lo);
  if (frac == 0.0 || lo + 1 == v.size()) return v[lo];
  return v[lo] + frac * (v[lo + 1] - v[lo]);
}

// The same quantile of unsorted `v`, reordering it: two nth_element passes instead of a full sort,
// since the bootstrap takes thousands of medians.
double quantile_inplace(std::vector<double>& v, double q) {
  const double h = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const double frac = h - static_cast<double>(lo);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double x_lo = v[lo];
  if (frac == 0.0 || lo + 1 == v.size()) return x_lo;
  // After nth_element everything right of `lo` is >= v[lo]; the next order statistic is their
  // minimum.
  const double x_hi = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return x_lo + frac * (x_hi - x_lo);
}

void require_bootstrap_args(double confidence, int resamples, const char* what) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument(std::string(what) + ": confidence outside (0, 1)");
  if (resamples < 1) throw std::invalid_argument(std::string(what) + ": resamples < 1");
}

// Draws replicate `r` of `n` indices in [0, n): draw j depends only on (seed, r, j), counter
// (block, replicate).
template <typename Visit>
void draw_replicate(const PhiloxKey& key, int r, std::size_t n, Visit&& visit) {
  PhiloxBlock bits{};
  for (std::size_t j = 0; j < n; ++j) {
    if (j % 4 == 0)
      bits = philox4x32_10(
          {static_cast<std::uint32_t>(j / 4), static_cast<std::uint32_t>(r), 0u, 0u}, key);
    // Multiply-shift maps 32 random bits onto [0, n); its bias (< n / 2^32) is far below bootstrap
    // noise for any realistic sample count.
    visit(j, static_cast<std::size_t>((std::uint64_t{bits[j % 4]} * n) >> 32));
  }
}

PhiloxKey key_of(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
}

}  // namespace

double quantile(std::span<const double> samples, double q) {
  require_samples(samples, "quantile");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile: q outside [0, 1]");
  std::vector<double> v(samples.begin(), samples.end());
  return quantile_inplace(v, q);
}

double median(std::span<const double> samples) {
  return quantile(samples, 0.5);
}

double mean(std::span<const double> samples) {
  require_samples(samples, "mean");
  double sum = 0.0;
  for (double x : samples) sum += x;
  return sum / static_cast<double>(samples.size());
}

double geomean(std::span<const double> samples) {
  require_samples(samples, "geomean");
  // Summing logs rather than multiplying: a product of fifty speedups can overflow or underflow.
  double log_sum = 0.0;
  for (double x : samples) {
    if (!(x > 0.0)) throw std::invalid_argument("geomean: values must be > 0");
    log_sum += std::log(x);
  }
  return std::exp(log_sum / static_cast<double>(samples.size()));
}

std::pair<double, double> bootstrap_ratio_ci(std::span<const double> baseline,
                                             std::span<const double> candidate, double confidence,
                                             int resamples, std::uint64_t seed) {
  require_samples(baseline, "bootstrap_ratio_ci baseline");
  require_samples(candidate, "bootstrap_ratio_ci candidate");
  if (baseline.size() != candidate.size())
    throw std::invalid_argument("bootstrap_ratio_ci: paired samples need equal counts");
  require_bootstrap_args(confidence, resamples, "bootstrap_ratio_ci");

  const std::size_t n = baseline.size();
  const PhiloxKey key = key_of(seed);
  std::vector<double> base_draw(n), cand_draw(n), ratios(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    draw_replicate(key, r, n, [&](std::size_t j, std::size_t idx) {
      base_draw[j] = baseline[idx];
      cand_draw[j] = candidate[idx];
    });
    ratios[static_cast<std::size_t>(r)] =
        quantile_inplace(base_draw, 0.5) / quantile_inplace(cand_draw, 0.5);
  }
  const double tail = (1.0 - confidence) / 2.0;
  const double lower = quantile(ratios, tail);
  const double upper = quantile(ratios, 1.0 - tail);
  return {lower, upper};
}

std::pair<double, double> bootstrap_median_ci(std::span<const double> samples, double confidence,
                                              int resamples, std::uint64_t seed) {
  require_samples(samples, "bootstrap_median_ci");
  require_bootstrap_args(confidence, resamples, "bootstrap_median_ci");
  const std::size_t n = samples.size();
  const PhiloxKey key = key_of(seed);
  std::vector<double> draw(n), medians(static_cast<std::size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    draw_replicate(key, r, n, [&](std::size_t j, std::size_t idx) { draw[j] = samples[idx]; });
    medians[static_cast<std::size_t>(r)] = quantile_inplace(draw, 0.5);
  }
  const double tail = (1.0 - confidence) / 2.0;
  return {quantile(medians, tail), quantile(medians, 1.0 - tail)};
}

std::pair<double, double> median_ci(std::span<const double> samples, double confidence) {
  require_samples(samples, "median_ci");
  if (!(confidence > 0.0 && confidence < 1.0))
    throw std::invalid_argument("median_ci: confidence outside (0, 1)");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double tail = (1.0 - confidence) / 2.0;
  // cdf = P(B <= j) for B ~ Binomial(n, 1/2), accumulated term by term in log space; k = j + 1 is
  // admissible while P(B < k) = P(B <= j) stays within the tail.
  std::size_t k = 0;
  double cdf = 0.0;
  const double log_half_n = static_cast<double>(n) * std::log(0.5);
  for (std::size_t j = 0; j < n / 2; ++j) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) +
                    log_half_n);
    if (cdf > tail) break;
    k = j + 1;
  }
  if (k == 0) return {sorted.front(), sorted.back()};
  return {sorted[k - 1], sorted[n - k]};
}

double stddev(std::span<const double> samples) {
  const double m = mean(samples);
  double sum_sq = 0.0;
  for (double x : samples) sum_sq += (x - m) * (x - m);
  return std::sqrt(sum_sq / static_cast<double>(samples.size()));
}

TimingStats summarize(std::span<const double> samples) {
  require_samples(samples, "summarize");
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  TimingStats s;
  s.n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.p25 = sorted_quantile(sorted, 0.25);
  s.median = sorted_quantile(sorted, 0.5);
  s.p75 = sorted_quantile(sorted, 0.75);
  s.mean = mean(samples);
  return s;
}

}  // namespace kbench
