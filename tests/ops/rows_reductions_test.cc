// The row reductions of src/ops/rows.h against double-precision scalar loops, at
// lengths around the vector width (1, lanes - 1, lanes, lanes + 1, two vectors + 1, a prime) so
// the padded tails are exercised, and with bf16 outputs against the f32 form rounded once.
#include "ops/rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "core/bf16.h"

namespace kbench {
namespace {

constexpr std::size_t kLengths[] = {1, 7, 15, 16, 17, 31, 33, 64, 257, 1031};

std::vector<float> random_row(std::size_t n, std::uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
}

TEST(RowReductions, SumMaxAndLogSumExpMatchDouble) {
  for (std::size_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> x = random_row(n, static_cast<std::uint32_t>(n));
    double sum = 0, sum_sigmoid = 0, max = -INFINITY;
    for (float v : x) {
      sum += v;
      sum_sigmoid += sigmoid(v);
      max = std::max(max, double{v});
    }
    double sum_exp = 0;
    for (float v : x) sum_exp += std::exp(v - max);
    // f32 sums of n terms: a few ulps of the sum of magnitudes.
    const double bound = 1e-6 * (3.0 * static_cast<double>(n)) + 1e-6;
    EXPECT_NEAR(ops::sum(x.data(), n), sum, bound);
    EXPECT_NEAR(ops::sum_sigmoid(x.data(), n), sum_sigmoid, bound);
    EXPECT_EQ(ops::max_value(x.data(), n), static_cast<float>(max));
    EXPECT_NEAR(ops::logsumexp(x.data(), n), max + std::log(sum_exp), 1e-5);
  }
}

TEST(RowReductions, EmptyAndInfiniteRows) {
  EXPECT_EQ(ops::sum(nullptr, 0), 0.0f);
  EXPECT_EQ(ops::max_value(nullptr, 0), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(ops::logsumexp(nullptr, 0), -std::numeric_limits<float>::infinity());
  const float with_inf[3] = {1.0f, std::numeric_limits<float>::infinity(), 2.0f};
  EXPECT_EQ(ops::logsumexp(with_inf, 3), std::numeric_limits<float>::infinity());
}

TEST(RowReductions, ElementwisePassesMatchDoubleAndRoundOnceToBf16) {
  for (std::size_t n : kLengths) {
    SCOPED_TRACE(n);
    const std::vector<float> x = random_row(n, 1000u + static_cast<std::uint32_t>(n));
    const float shift = 0.75f;
    std::vector<float> sig(n), gelu(n);
    std::vector<bf16_t> sig16(n), gelu16(n);
    ops::sigmoid(x.data(), sig.data(), n);
    ops::sigmoid(x.data(), sig16.data(), n);
    ops::gelu_tanh_shifted(x.data(), shift, gelu.data(), n);
    ops::gelu_tanh_shifted(x.data(), shift, gelu16.data(), n);
    std::vector<float> clamped = x;
    ops::clamp_inplace(clamped.data(), n, -2.0f, 1.5f);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(sig[i], sigmoid(x[i]), 1e-6) << i;
      EXPECT_NEAR(gelu[i], gelu_tanh(double{x[i]} - shift), 1e-5) << i;
      EXPECT_NEAR(ops::gelu_tanh(x[i]), gelu_tanh(x[i]), 1e-5) << i;
      EXPECT_EQ(sig16[i], f32_to_bf16(sig[i])) << i;
      EXPECT_EQ(gelu16[i], f32_to_bf16(gelu[i])) << i;
      EXPECT_EQ(clamped[i], std::clamp(x[i], -2.0f, 1.5f)) << i;
    }
  }
}

TEST(RowReductions, LongBf16RowsCrossChunkBoundaries) {
  // Longer than the 256-value chunk of the bf16 forms, and not a multiple of it.
  const std::size_t n = 3 * 256 + 5;
  const std::vector<float> x = random_row(n, 7);
  std::vector<float> sig(n);
  std::vector<bf16_t> sig16(n);
  ops::sigmoid(x.data(), sig.data(), n);
  ops::sigmoid(x.data(), sig16.data(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(sig16[i], f32_to_bf16(sig[i])) << i;
}

}  // namespace
}  // namespace kbench
