// Row reductions on Highway, compiled for this machine's ISA (static dispatch, as the baselines are
// built with -march=native). The last partial vector of a reduction goes through a padded
// temporary so the main loops never branch on edges; bf16 outputs are produced in f32 chunks that
// stay in L1 and are rounded by core/bf16's vectorized rule.
#include "ops/rows.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include "ops/xla_tanh-inl.h"

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Values a bf16 form computes in f32 before rounding them: 1 KiB, far inside L1.
constexpr std::size_t kChunk = 256;

// sqrt(2 / pi) and the cubic coefficient of the tanh approximation of GELU.
constexpr float kGeluScale = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

VF sigmoid_lanes(DF df, VF v) {
  const VF one = hn::Set(df, 1.0f);
  return hn::Div(one, hn::Add(one, hn::Exp(df, hn::Neg(v))));
}

// exp overflows f32 above 88.7; beyond +-88 the sigmoid is 0 or 1 to f32 precision. The
// reductions keep the unclamped form, whose -inf padding must map to exactly 0.
constexpr float kExpClamp = 88.0f;

VF clamped_sigmoid_lanes(DF df, VF v) {
  const VF neg = hn::Clamp(hn::Neg(v), hn::Set(df, -kExpClamp), hn::Set(df, kExpClamp));
  const VF one = hn::Set(df, 1.0f);
  return hn::Div(one, hn::Add(one, hn::Exp(df, neg)));
}

// Applies `lanes_fn` to x in full vectors and a padded tail, writing out[0, n).
template <class LanesFn>
void map_f32(const float* x, float* out, std::size_t n, LanesFn lanes_fn) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(lanes_fn(df, hn::LoadU(df, x + i)), df, out + i);
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)] = {};
    std::copy_n(x + i, n - i, tail);
    hn::Store(lanes_fn(df, hn::Load(df, tail)), df, tail);
    std::copy_n(tail, n - i, out + i);
  }
}

// The same map with bf16 outputs: f32 chunks in L1, rounded once each.
template <class LanesFn>
void map_bf16(const float* x, bf16_t* out, std::size_t n, LanesFn lanes_fn) {
  HWY_ALIGN float chunk[kChunk];
  for (std::size_t start = 0; start < n; start += kChunk) {
    const std::size_t len = std::min(kChunk, n - start);
    map_f32(x + start, chunk, len, lanes_fn);
    convert_f32_to_bf16(chunk, out + start, len);
  }
}

// Sum over x of lanes_fn(lane values); the tail is padded with `pad`, which lanes_fn must map to 0.
template <class LanesFn>
float map_sum(const float* x, std::size_t n, float pad, LanesFn lanes_fn) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  VF acc0 = hn::Zero(df), acc1 = hn::Zero(df);
  std::size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = hn::Add(acc0, lanes_fn(df, hn::LoadU(df, x + i)));
    acc1 = hn::Add(acc1, lanes_fn(df, hn::LoadU(df, x + i + lanes)));
  }
  for (; i + lanes <= n; i += lanes) acc0 = hn::Add(acc0, lanes_fn(df, hn::LoadU(df, x + i)));
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)];
    std::fill(tail, tail + hn::MaxLanes(df), pad);
    std::copy_n(x + i, n - i, tail);
    acc1 = hn::Add(acc1, lanes_fn(df, hn::Load(df, tail)));
  }
  return hn::GetLane(hn::SumOfLanes(df, hn::Add(acc0, acc1)));
}

}  // namespace

float sum(const float* x, std::size_t n) {
  return map_sum(x, n, 0.0f, [](DF, VF v) { return v; });
}

float abs_sum(const float* x, std::size_t n) {
  return map_sum(x, n, 0.0f, [](DF, VF v) { return hn::Abs(v); });
}

float sum_sigmoid(const float* x, std::size_t n) {
  // sigmoid(-inf) = 0: the padding adds nothing.
  return map_sum(x, n, kNegInf, [](DF df, VF v) { return sigmoid_lanes(df, v); });
}

void sigmoid(const float* x, float* out, std::size_t n) {
  map_f32(x, out, n, [](DF df, VF v) { return sigmoid_lanes(df, v); });
}

void sigmoid_inplace(float* x, std::size_t n) {
  map_f32(x, x, n, [](DF df, VF v) { return clamped_sigmoid_lanes(df, v); });
}

void sigmoid(const float* x, bf16_t* out, std::size_t n) {
  map_bf16(x, out, n, [](DF df, VF v) { return sigmoid_lanes(df, v); });
}

float logsumexp(const float* x, std::size_t n) {
  const float max = max_value(x, n);
  if (!std::isfinite(max)) return max;  // empty or all -inf rows, or an inf / NaN
  const DF df;
  const VF shift = hn::Set(df, max);
  // exp(-inf - max) = 0: the padding adds nothing.
  const float total =
      map_sum(x, n, kNegInf, [shift](DF d, VF v) { return hn::Exp(d, hn::Sub(v, shift)); });
  return max + std::log(total);
}

void clamp_inplace(float* x, std::size_t n, float lo, float hi) {
  const DF df;
  const VF vlo = hn::Set(df, lo), vhi = hn::Set(df, hi);
  map_f32(x, x, n, [vlo, vhi](DF, VF v) { return hn::Min(hn::Max(v, vlo), vhi); });
}

void gelu_tanh_shifted(const float* x, float shift, float* out, std::size_t n) {
  const DF df;
  const VF s = hn::Set(df, shift);
  map_f32(x, out, n, [s](DF d, VF v) { return gelu_tanh_lanes(d, hn::Sub(v, s)); });
}

void gelu_tanh_shifted(const float* x, float shift, bf16_t* out, std::size_t n) {
  const DF df;
  const VF s = hn::Set(df, shift);
  map_bf16(x, out, n, [s](DF d, VF v) { return gelu_tanh_lanes(d, hn::Sub(v, s)); });
}

float gelu_tanh(float v) {
  const float inner = kGeluScale * (v + kGeluCubic * v * v * v);
  return 0.5f * v * (1.0f + std::tanh(inner));
}

}  // namespace kbench::ops
