// The normalization passes of ops/rows.h (the GEMM + normalization baselines' row passes) against
// double-precision formulas at edge extents: 1, a vector minus one, a vector, a vector plus one,
// primes; every pass must leave the elements past the row untouched. Tolerances: f32 lane
// arithmetic over at most a few hundred terms stays within 1e-5 relative of the double result
// (Highway's Exp and Tanh are within 4 ulp).
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

constexpr float kSentinel = 12345.0f;  // written past every row; must survive each pass
constexpr double kRelTol = 1e-5;
constexpr double kAbsTol = 1e-6;

std::vector<float> random_row(std::size_t n, std::uint64_t seed, double scale = 1.0,
                              double mean = 0.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(mean, scale);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(normal(rng));
  return v;
}

// The row's values followed by sentinels.
std::vector<float> padded(const std::vector<float>& v) {
  std::vector<float> out = v;
  out.resize(v.size() + 32, kSentinel);
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], kAbsTol + kRelTol * std::fabs(want[i])) << "element " << i;
  for (std::size_t i = want.size(); i < got.size(); ++i)
    ASSERT_EQ(got[i], kSentinel) << "wrote past the row at " << i;
}

double gelu_tanh(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
}

double silu(double v) {
  return v / (1.0 + std::exp(-v));
}

const std::size_t kExtents[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 37, 64, 97};

TEST(NormRows, GroupNormMatchesDouble) {
  for (std::size_t group_size : {1, 5, 15, 16, 17, 32, 64}) {
    for (std::size_t groups : {1, 3}) {
      const std::size_t n = group_size * groups;
      SCOPED_TRACE("group_size " + std::to_string(group_size) + " groups " +
                   std::to_string(groups));
      // A mean far from zero relative to the spread: the two-pass variance must not cancel.
      const std::vector<float> x = random_row(n, group_size * 31 + groups, 0.5, 3.0);
      const std::vector<float> pre_bias = random_row(n, 7, 0.1);
      const std::vector<float> weight = random_row(n, 8, 0.1, 1.0);
      const std::vector<float> shift = random_row(n, 9, 0.1);
      std::vector<double> want(n);
      for (std::size_t g = 0; g < n; g += group_size) {
        double mean = 0, var = 0;
        for (std::size_t i = g; i < g + group_size; ++i) mean += double(x[i]) + pre_bias[i];
        mean /= static_cast<double>(group_size);
        for (std::size_t i = g; i < g + group_size; ++i) {
          const double d = double(x[i]) + pre_bias[i] - mean;
          var += d * d;
        }
        var /= static_cast<double>(group_size);
        for (std::size_t i = g; i < g + group_size; ++i)
          want[i] =
              (double(x[i]) + pre_bias[i] - mean) / std::sqrt(var + 1e-5) * weight[i] + shift[i];
      }
      std::vector<float> got = padded(x);
      ops::group_norm(got.data(), n, group_size, 1e-5f, pre_bias.data(), weight.data(),
                      shift.data());
      // (v - mean) / sd amplifies the f32 rounding of v ~3 by 3 / 0.5.
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_NEAR(got[i], want[i], 2e-5 + 1e-5 * std::fabs(want[i])) << "element " << i;
      for (std::size_t i = n; i < got.size(); ++i) ASSERT_EQ(got[i], kSentinel);
    }
  }
}

TEST(NormRows, GroupNormWithoutPreBias) {
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, 4.0f, -1.0f, 1.0f};
  const std::vector<float> ones(6, 1.0f), zeros(6, 0.0f);
  std::vector<float> got = padded(x);
  ops::group_norm(got.data(), 6, 3, 0.0f, nullptr, ones.data(), zeros.data());
  const double a = std::sqrt(1.5);  // groups {1,2,3}, {4,-1,1}: sd sqrt(2/3), sqrt(38/9)
  EXPECT_NEAR(got[0], -a, 1e-6);
  EXPECT_NEAR(got[1], 0.0, 1e-6);
  EXPECT_NEAR(got[2], a, 1e-6);
  EXPECT_NEAR(got[3], (4.0 - 4.0 / 3) / std::sqrt(38.0 / 9), 1e-6);
  EXPECT_EQ(got[6], kSentinel);
}

TEST(NormRows, SoftmaxMatchesDouble) {
  for (std::size_t n : kExtents) {
    SCOPED_TRACE("n " + std::to_string(n));
    const std::vector<float> x = random_row(n, n, 2.0);
    double max = -INFINITY, total = 0;
    for (float v : x) max = std::max(max, double(v));
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i) total += (want[i] = std::exp(double(x[i]) - max));
    for (double& w : want) w /= total;
    std::vector<float> got = padded(x);
    ops::softmax(got.data(), n);
    expect_close(got, want);
  }
}

// The bf16 form against the f32 form then convert_f32_to_bf16, bit for bit, at every extent with
// a visible prefix of none, one, part and all of the row; nothing written past the row.
TEST(NormRows, PrefixSoftmaxIntoBf16IsTheF32RowRounded) {
  for (std::size_t width : kExtents) {
    for (std::size_t visible : {std::size_t{0}, std::size_t{1}, width / 2, width}) {
      SCOPED_TRACE("width " + std::to_string(width) + " visible " + std::to_string(visible));
      std::vector<float> x = random_row(width, width + visible, 3.0);
      for (std::size_t j = visible; j < width; ++j) x[j] = -1e9f;  // masked scores
      std::vector<float> f32_row = x;
      ops::prefix_softmax(f32_row.data(), visible, width);
      std::vector<bf16_t> want(width);
      convert_f32_to_bf16(f32_row.data(), want.data(), width);
      constexpr bf16_t kGuard = 0x7bad;
      std::vector<bf16_t> got(width + 16, kGuard);
      std::vector<float> scratch = x;
      ops::prefix_softmax(scratch.data(), visible, width, got.data());
      for (std::size_t j = 0; j < width; ++j) ASSERT_EQ(got[j], want[j]) << "element " << j;
      for (std::size_t j = width; j < got.size(); ++j) ASSERT_EQ(got[j], kGuard) << "past the row";
    }
  }
}

TEST(NormRows, ElementwisePassesMatchDouble) {
  for (std::size_t n : kExtents) {
    SCOPED_TRACE("n " + std::to_string(n));
    const std::vector<float> x = random_row(n, n + 100, 3.0);
    const std::vector<float> a = random_row(n, n + 200);
    const std::vector<float> b = random_row(n, n + 300);
    std::vector<double> want(n);

    std::vector<float> got = padded(x);
    ops::scale_shift(got.data(), a.data(), b.data(), n);
    for (std::size_t i = 0; i < n; ++i) want[i] = double(x[i]) * a[i] + b[i];
    expect_close(got, want);

    got = padded(x);
    ops::gelu_tanh(got.data(), n);
    for (std::size_t i = 0; i < n; ++i) want[i] = gelu_tanh(x[i]);
    expect_close(got, want);

    got = padded(x);
    ops::gelu_tanh_relu(got.data(), n);
    for (std::size_t i = 0; i < n; ++i) want[i] = std::max(0.0, gelu_tanh(x[i]));
    expect_close(got, want);

    got = padded(x);
    ops::silu_multiply_silu(got.data(), a.data(), n);
    for (std::size_t i = 0; i < n; ++i) want[i] = silu(silu(x[i]) * a[i]);
    expect_close(got, want);
  }
}

TEST(NormRows, SigmoidSaturatesWithoutOverflow) {
  std::vector<float> x = {-1e4f, -200.0f, -88.0f, 0.0f, 88.0f, 200.0f, 1e4f};
  const std::vector<float> ones(x.size(), 1.0f);
  // silu(silu(v)): silu(-1e4) is -0, silu of a large v is v.
  ops::silu_multiply_silu(x.data(), ones.data(), x.size());
  for (float v : x) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(x[0], 0.0f, 1e-30f);
  EXPECT_NEAR(x[6], 1e4f, 1.0f);
}

TEST(NormRows, ColumnMeanVarMatchesDouble) {
  for (std::size_t rows : {1, 2, 17}) {
    for (std::size_t cols : {1, 15, 16, 17, 33}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + " cols " + std::to_string(cols));
      const std::vector<float> y = random_row(rows * cols, rows * 100 + cols, 2.0, 5.0);
      std::vector<float> mean(cols + 32, kSentinel), var(cols + 32, kSentinel);
      ops::column_mean_var(y.data(), rows, cols, mean.data(), var.data());
      std::vector<double> want_mean(cols, 0.0), want_var(cols, 0.0);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < cols; ++j) want_mean[j] += y[r * cols + j];
      for (double& m : want_mean) m /= static_cast<double>(rows);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < cols; ++j) {
          const double d = y[r * cols + j] - want_mean[j];
          want_var[j] += d * d;
        }
      for (double& v : want_var) v /= static_cast<double>(rows);
      expect_close(mean, want_mean);
      // The variance of values ~5 with sd 2: f32 differences are exact to ~5e-7 relative.
      for (std::size_t j = 0; j < cols; ++j)
        EXPECT_NEAR(var[j], want_var[j], 1e-5 + 1e-5 * want_var[j]) << "column " << j;
      EXPECT_EQ(var[cols], kSentinel);
    }
  }
}

TEST(NormRows, MinValueIsExact) {
  EXPECT_EQ(ops::min_value(nullptr, 0), std::numeric_limits<float>::infinity());
  for (std::size_t n : kExtents) {
    const std::vector<float> x = random_row(n, n + 400);
    EXPECT_EQ(ops::min_value(x.data(), n), *std::min_element(x.begin(), x.end())) << "n " << n;
    // The minimum in the tail, and past the end a smaller value that must not count.
    std::vector<float> y = padded(x);
    y[n - 1] = -100.0f;
    y[n] = -1000.0f;
    EXPECT_EQ(ops::min_value(y.data(), n), -100.0f) << "n " << n;
  }
}

TEST(NormRows, StoreWritesTheOutputDtype) {
  const std::vector<float> x = {1.0f, 1.00390625f, -3.14159f};  // 1 + 2^-8 ties to even
  std::vector<float> f32_out(5, kSentinel);
  kb_tensor f32_tensor{};
  f32_tensor.dtype = KB_F32;
  f32_tensor.data = f32_out.data();
  ops::store_row(x.data(), 3, f32_tensor, 1);
  EXPECT_EQ(f32_out[0], kSentinel);
  EXPECT_EQ(f32_out[1], 1.0f);
  EXPECT_EQ(f32_out[3], -3.14159f);
  EXPECT_EQ(f32_out[4], kSentinel);

  std::vector<bf16_t> bf16_out(4, 0);
  kb_tensor bf16_tensor{};
  bf16_tensor.dtype = KB_BF16;
  bf16_tensor.data = bf16_out.data();
  ops::store_row(x.data(), 3, bf16_tensor, 0);
  EXPECT_EQ(bf16_to_f32(bf16_out[0]), 1.0f);
  EXPECT_EQ(bf16_to_f32(bf16_out[1]), 1.0f);
  EXPECT_EQ(bf16_to_f32(bf16_out[2]), round_to_bf16(-3.14159f));
  EXPECT_EQ(bf16_out[3], 0);
}

}  // namespace
}  // namespace kbench
