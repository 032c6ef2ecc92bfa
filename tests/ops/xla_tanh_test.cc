// ops::xla_tanh (XLA:CPU's tanh) against double-precision tanh: within 3e-7 over [-10, 10], x
// itself near zero, exactly +-1 past the clamp, odd, and NaN kept.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <hwy/highway.h>

#include "ops/xla_tanh-inl.h"

namespace kbench::ops {
namespace {

namespace hn = hwy::HWY_NAMESPACE;

std::vector<float> tanh_of(const std::vector<float>& x) {
  const hn::ScalableTag<float> d;
  const std::size_t lanes = hn::Lanes(d);
  std::vector<float> in = x, out(x.size() + lanes);
  in.resize(x.size() + lanes, 0.0f);
  for (std::size_t i = 0; i < x.size(); i += lanes)
    hn::StoreU(xla_tanh(d, hn::LoadU(d, in.data() + i)), d, out.data() + i);
  out.resize(x.size());
  return out;
}

TEST(XlaTanh, WithinThreeTenMillionthsOfTanh) {
  std::vector<float> x;
  for (int i = -100000; i <= 100000; ++i) x.push_back(static_cast<float>(i) * 1e-4f);
  const std::vector<float> y = tanh_of(x);
  for (std::size_t i = 0; i < x.size(); ++i)
    ASSERT_NEAR(y[i], std::tanh(static_cast<double>(x[i])), 3e-7) << "x " << x[i];
}

TEST(XlaTanh, IdentityNearZeroOddAndSaturated) {
  const std::vector<float> x = {0.0f, 1e-30f, -3e-4f, 3.9e-4f,
                                8.0f, 20.0f,  1e30f,  std::numeric_limits<float>::infinity()};
  const std::vector<float> y = tanh_of(x);
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 1e-30f);
  EXPECT_EQ(y[2], -3e-4f);
  EXPECT_EQ(y[3], 3.9e-4f);
  for (std::size_t i = 4; i < x.size(); ++i) EXPECT_EQ(y[i], 1.0f) << "x " << x[i];
  std::vector<float> negated;
  for (float v : x) negated.push_back(-v);
  const std::vector<float> y_negated = tanh_of(negated);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y_negated[i], -y[i]) << "x " << x[i];
}

TEST(XlaTanh, KeepsNaN) {
  const std::vector<float> y = tanh_of({std::numeric_limits<float>::quiet_NaN(), 1.0f});
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_FALSE(std::isnan(y[1]));
}

}  // namespace
}  // namespace kbench::ops
