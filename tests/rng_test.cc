// Philox4x32-10 against the Random123 known answers, and the reproducibility and distributions of
// the workload inputs drawn from it.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/bf16.h"
#include "core/input_gen.h"
#include "core/philox.h"
#include "core/tensor.h"

namespace kbench {
namespace {

// The "philox4x32 10" lines of tests/kat_vectors in the Random123 distribution (D. E. Shaw
// Research): counter words, key words, expected output words.
TEST(Philox, Random123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

HostTensor filled(const InitRule& rule, kb_dtype dtype, std::int64_t n, std::uint64_t seed,
                  std::uint32_t stream = 0) {
  HostTensor t(TensorSpec{"x", dtype, {n}});
  kb_tensor view = t.view();
  fill_input(rule, seed, stream, view);
  return t;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.spec().bytes() == b.spec().bytes() &&
         std::memcmp(a.data(), b.data(), a.spec().bytes()) == 0;
}

TEST(FillInput, SameSeedSameBytesOtherwiseDifferent) {
  for (kb_dtype dtype : {KB_F32, KB_BF16}) {
    const auto a = filled(InitRule::normal(), dtype, 10001, 123);
    EXPECT_TRUE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 123)));
    EXPECT_FALSE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 124)));
    EXPECT_FALSE(same_bytes(a, filled(InitRule::normal(), dtype, 10001, 123, /*stream=*/1)));
  }
  const auto ints = filled(InitRule::randint(1000), KB_I32, 10001, 5);
  EXPECT_TRUE(same_bytes(ints, filled(InitRule::randint(1000), KB_I32, 10001, 5)));
  EXPECT_FALSE(same_bytes(ints, filled(InitRule::randint(1000), KB_I32, 10001, 6)));
}

TEST(FillInput, IndependentOfThreadCount) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = filled(InitRule::normal(), KB_F32, 100003, 77);
  const auto one_bf16 = filled(InitRule::uniform(-1, 1), KB_BF16, 100003, 77);
  omp_set_num_threads(2);
  const auto two = filled(InitRule::normal(), KB_F32, 100003, 77);
  const auto two_bf16 = filled(InitRule::uniform(-1, 1), KB_BF16, 100003, 77);
  omp_set_num_threads(saved);
  EXPECT_TRUE(same_bytes(one, two));
  EXPECT_TRUE(same_bytes(one_bf16, two_bf16));
}

TEST(FillInput, ElementDependsOnlyOnItsIndex) {
  // A shorter tensor is a prefix of a longer one: sizes and presets can change without reshuffling.
  const auto small = filled(InitRule::normal(), KB_F32, 7, 9);
  const auto large = filled(InitRule::normal(), KB_F32, 1000, 9);
  EXPECT_EQ(std::memcmp(small.data(), large.data(), 7 * sizeof(float)), 0);
}

struct Moments {
  double mean = 0, stddev = 0;
};
Moments moments(const std::vector<float>& x) {
  double sum = 0, sum_sq = 0;
  for (float v : x) sum += v;
  const double mean = sum / static_cast<double>(x.size());
  for (float v : x) sum_sq += (v - mean) * (v - mean);
  return {mean, std::sqrt(sum_sq / static_cast<double>(x.size() - 1))};
}

// With n = 1e5 the standard error of the mean is sigma / 316 and of the standard deviation about
// sigma / 447; bounds of 0.02 sigma are over 6 standard errors, so a correct generator never fails.
constexpr std::int64_t kSamples = 100000;

TEST(FillInput, NormalHasRequestedMoments) {
  auto t = filled(InitRule::normal(), KB_F32, kSamples, 2024);
  const Moments m = moments(to_f32(t.view()));
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  EXPECT_NEAR(m.stddev, 1.0, 0.02);

  auto scaled = filled(InitRule::normal(/*stddev=*/2.0, /*mean=*/3.0), KB_BF16, kSamples, 2025);
  const Moments ms = moments(to_f32(scaled.view()));
  EXPECT_NEAR(ms.mean, 3.0, 0.04);
  EXPECT_NEAR(ms.stddev, 2.0, 0.04);
}

TEST(FillInput, UniformStaysInRange) {
  auto t = filled(InitRule::uniform(-1.0, 3.0), KB_F32, kSamples, 31);
  const std::vector<float> x = to_f32(t.view());
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  // Draws lie in [-1, 3) in double; rounding to f32 could in principle reach 3 itself (within
  // 2^-30), so the upper bound is checked inclusively.
  EXPECT_GE(*lo, -1.0f);
  EXPECT_LE(*hi, 3.0f);
  EXPECT_LT(*lo, -0.99f);  // the range is actually covered
  EXPECT_GT(*hi, 2.99f);
  EXPECT_NEAR(moments(x).mean, 1.0, 0.04);  // sd of U(-1,3) is 1.15; 0.04 is > 10 standard errors
}

TEST(FillInput, RandIntInHalfOpenRange) {
  constexpr int kHigh = 7;
  auto t = filled(InitRule::randint(kHigh), KB_I32, kSamples, 8);
  std::vector<int> counts(kHigh, 0);
  for (std::int64_t i = 0; i < kSamples; ++i) {
    const std::int32_t v = t.as<std::int32_t>()[i];
    ASSERT_GE(v, 0);
    ASSERT_LT(v, kHigh);
    ++counts[static_cast<std::size_t>(v)];
  }
  // Each count is binomial with mean n/7 ~ 14286 and sd ~ 111; 1000 is 9 sd.
  for (int c : counts) EXPECT_NEAR(c, kSamples / kHigh, 1000);
}

}  // namespace
}  // namespace kbench
