// The vectorized sigmoid pass against the scalar formula, at lengths around the vector width
// (1, lanes-1, lanes, lanes+1, a prime) and at arguments where exp overflows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "ops/rows.h"

namespace kbench {
namespace {

TEST(SigmoidOps, MatchesTheScalarFormulaAtEdgeLengths) {
  for (std::size_t n : {1u, 7u, 15u, 16u, 17u, 31u, 32u, 33u, 97u}) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.37f - 12.0f;
    std::vector<float> y = x;
    ops::sigmoid_inplace(y.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
      EXPECT_NEAR(y[i], want, 2e-7 + 4e-7 * want) << "n=" << n << " i=" << i << " x=" << x[i];
    }
  }
}

TEST(SigmoidOps, SaturatesWithoutNaN) {
  std::vector<float> x = {-1e30f, -200.0f, -89.0f, 89.0f, 200.0f, 1e30f, 0.0f};
  ops::sigmoid_inplace(x.data(), x.size());
  EXPECT_LT(x[0], 1e-37f);
  EXPECT_LT(x[2], 1e-37f);
  EXPECT_EQ(x[3], 1.0f);
  EXPECT_EQ(x[5], 1.0f);
  EXPECT_EQ(x[6], 0.5f);
  for (float v : x) EXPECT_FALSE(std::isnan(v));
}

}  // namespace
}  // namespace kbench
