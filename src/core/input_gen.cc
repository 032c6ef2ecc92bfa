// Philox-driven input generation: normals by a tabulated inverse CDF, uniform floats and bounded
// integers.
#include "core/input_gen.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "core/bf16.h"
#include "core/philox.h"

namespace kbench {
namespace {

// Normals come from the inverse normal CDF, tabulated once at 2^16 + 1 points and interpolated
// linearly with the low 16 bits: one 32-bit draw per value and no transcendental call, because
// kbench regenerates every input before every timed call (Box-Muller in double took ~35 ns per
// value here, 2.3 s per call of 12p at the cpu size). The table spans quantiles (i + 0.5) / 65537,
// so values are bounded by +-4.3 sigma, which no workload depends on. The table is computed in
// double without FMA contraction (ISO C++ mode), so inputs are bit-identical wherever the same libm
// runs.
constexpr int kQuantileBits = 16;
constexpr std::size_t kQuantilePoints = (std::size_t{1} << kQuantileBits) + 1;

// Acklam's rational approximation of the inverse normal CDF (relative error < 1.2e-9), refined by
// one Halley step on erfc, which brings it to double precision.
double inverse_normal_cdf(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  double x;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - kLow) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::numbers::sqrt2) - p;
  const double u = e * std::sqrt(2 * std::numbers::pi) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

// Stored as f32 (256 KiB, so it stays in a core's L2 under random lookups); values end as bf16.
const std::vector<float>& normal_quantiles() {
  static const std::vector<float> table = [] {
    std::vector<float> q(kQuantilePoints);
    for (std::size_t i = 0; i < kQuantilePoints; ++i)
      q[i] = static_cast<float>(inverse_normal_cdf((static_cast<double>(i) + 0.5) /
                                                   static_cast<double>(kQuantilePoints)));
    return q;
  }();
  return table;
}

inline double standard_normal(const std::vector<float>& quantiles, std::uint32_t bits) {
  const std::uint32_t index = bits >> (32 - kQuantileBits);
  const float fraction = static_cast<float>(bits & ((1u << (32 - kQuantileBits)) - 1)) * 0x1p-16f;
  return quantiles[index] + fraction * (quantiles[index + 1] - quantiles[index]);
}

// The value drawn from 32 random bits under `rule`.
inline double draw(const InitRule& rule, const std::vector<float>& quantiles, std::uint32_t bits) {
  switch (rule.kind) {
    case InitRule::Kind::kNormal:
      return rule.shift + rule.scale * standard_normal(quantiles, bits);
    case InitRule::Kind::kUniform:
      return rule.shift + rule.scale * (bits * 0x1p-32);
    case InitRule::Kind::kRandInt:
      return static_cast<double>(
          (std::uint64_t{bits} * static_cast<std::uint64_t>(rule.int_high)) >> 32);
  }
  return 0;
}

template <typename T, typename Convert>
void fill_typed(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, T* data,
                std::int64_t n, Convert convert) {
  const std::vector<float>& quantiles = normal_quantiles();
  const PhiloxKey key = {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
  const std::int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < blocks; ++b) {
    // Element 4*b + w takes word w of block b.
    const PhiloxBlock bits =
        philox4x32_10({static_cast<std::uint32_t>(b),
                       static_cast<std::uint32_t>(static_cast<std::uint64_t>(b) >> 32), stream, 0u},
                      key);
    for (std::int64_t w = 0; w < 4 && 4 * b + w < n; ++w)
      data[4 * b + w] = convert(draw(rule, quantiles, bits[w]));
  }
}

}  // namespace

void fill_input(const InitRule& rule, std::uint64_t seed, std::uint32_t stream, kb_tensor& t) {
  const std::int64_t n = kb_numel(&t);
  switch (t.dtype) {
    case KB_BF16:
      fill_typed(rule, seed, stream, static_cast<bf16_t*>(t.data), n,
                 [](double v) { return f32_to_bf16(static_cast<float>(v)); });
      break;
    case KB_F32:
      fill_typed(rule, seed, stream, static_cast<float*>(t.data), n,
                 [](double v) { return static_cast<float>(v); });
      break;
    case KB_I32:
      fill_typed(rule, seed, stream, static_cast<std::int32_t*>(t.data), n,
                 [](double v) { return static_cast<std::int32_t>(v); });
      break;
  }
}

}  // namespace kbench
