// Row passes on Highway, compiled for this machine's ISA (static dispatch, as the baselines are
// built with -march=native). The last partial vector of a reduction goes through a padded temporary
// so the main loops never branch on edges; elementwise passes finish with scalar code computing the
// same products, rounded by the same rule.
#include "ops/rows.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

namespace kbench::ops {

namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;
using DU32 = hn::RebindToUnsigned<DF>;
using DI32 = hn::RebindToSigned<DF>;
using DU16 = hn::Rebind<std::uint16_t, DF>;
using VF = hn::Vec<DF>;
using VU32 = hn::Vec<DU32>;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Lanes(df) bf16 values widened exactly to f32 (the bf16 bits become the high half).
VF load_bf16(DF df, const bf16_t* p) {
  const DU16 du16;
  const DU32 du32;
  return hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du32, hn::LoadU(du16, p))));
}

// bits + 0x7fff + (bit 16 of bits): truncating the low half afterwards rounds to nearest, ties to
// even. A NaN whose low half is zero passes through unchanged (the add cannot carry out of the low
// half); any other NaN needs rounded_bits' select.
VU32 add_rounding_bias(VU32 bits) {
  const DU32 du32;
  const VU32 lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u));
  return hn::Add(bits, hn::Add(hn::Set(du32, 0x7fffu), lsb));
}

VU32 truncate_low_half(VU32 bits) {
  return hn::And(bits, hn::Set(hn::DFromV<VU32>(), 0xffff0000u));
}

// The nearest-even bf16 of each lane, as f32 bits with a zero low half; NaN stays a quiet NaN
// (the same rule as kb_f32_to_bf16, so vector and scalar paths agree bit for bit).
VU32 rounded_bits(VF v) {
  const DU32 du32;
  const VU32 bits = hn::BitCast(du32, v);
  const VU32 quiet_nan = hn::Or(bits, hn::Set(du32, 0x00400000u));
  return truncate_low_half(
      hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), quiet_nan, add_rounding_bias(bits)));
}

VF round_bf16(DF df, VF v) {
  return hn::BitCast(df, rounded_bits(v));
}

// The high half of each lane of `biased` (bits after add_rounding_bias, or already rounded), as
// the lanes of a bf16 vector.
hn::Vec<DU16> high_halves(VU32 biased) {
  const DU16 du16;
  const DI32 di32;
  // After the shift every lane is in [0, 65535], so the saturating demotion is exact.
  return hn::DemoteTo(du16, hn::BitCast(di32, hn::ShiftRight<16>(biased)));
}

void store_high_halves(VU32 biased, bf16_t* p) {
  hn::StoreU(high_halves(biased), DU16(), p);
}

// The two extremes max_value and min_value take, each with its reduction across lanes.
struct MaxOf {
  VF operator()(VF a, VF b) const { return hn::Max(a, b); }
  VF of_lanes(DF df, VF v) const { return hn::MaxOfLanes(df, v); }
};
struct MinOf {
  VF operator()(VF a, VF b) const { return hn::Min(a, b); }
  VF of_lanes(DF df, VF v) const { return hn::MinOfLanes(df, v); }
};
// The largest (MaxOf) or smallest (MinOf) of x[0, n): two accumulators over pairs of vectors, the
// last partial vector padded with `identity` (-inf for the max, +inf for the min).
template <class Extreme>
float extreme_value(const float* x, std::size_t n, float identity, Extreme extreme) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  VF acc0 = hn::Set(df, identity), acc1 = acc0;
  std::size_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    acc0 = extreme(acc0, hn::LoadU(df, x + i));
    acc1 = extreme(acc1, hn::LoadU(df, x + i + lanes));
  }
  for (; i + lanes <= n; i += lanes) acc0 = extreme(acc0, hn::LoadU(df, x + i));
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)];
    std::fill(tail, tail + hn::MaxLanes(df), identity);
    std::copy_n(x + i, n - i, tail);
    acc1 = extreme(acc1, hn::Load(df, tail));
  }
  return hn::GetLane(extreme.of_lanes(df, extreme(acc0, acc1)));
}

// Sum of exp(x[i] - shift), the last partial vector padded with -inf (exp(-inf) = 0 adds nothing);
// with kStore the exps are also written to out[0, n) (out may be x).
template <bool kStore>
float shifted_exp_sum(const float* x, std::size_t n, float shift, float* out) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF s = hn::Set(df, shift);
  // Exp's polynomial, not the add latency, bounds this loop: one accumulator suffices.
  VF acc = hn::Zero(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF e = hn::Exp(df, hn::Sub(hn::LoadU(df, x + i), s));
    if constexpr (kStore) hn::StoreU(e, df, out + i);
    acc = hn::Add(acc, e);
  }
  if (i < n) {
    HWY_ALIGN float tail[hn::MaxLanes(df)];
    std::fill(tail, tail + hn::MaxLanes(df), kNegInf);
    std::copy_n(x + i, n - i, tail);
    const VF e = hn::Exp(df, hn::Sub(hn::Load(df, tail), s));
    if constexpr (kStore) {
      hn::Store(e, df, tail);
      std::copy_n(tail, n - i, out + i);
    }
    acc = hn::Add(acc, e);
  }
  return hn::GetLane(hn::SumOfLanes(df, acc));
}

}  // namespace

float sum_of_squares(const bf16_t* x, std::size_t n) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  // Four independent accumulators hide the FMA latency, so the loop runs at load bandwidth.
  VF acc0 = hn::Zero(df), acc1 = hn::Zero(df), acc2 = hn::Zero(df), acc3 = hn::Zero(df);
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    const VF v0 = load_bf16(df, x + i);
    const VF v1 = load_bf16(df, x + i + lanes);
    const VF v2 = load_bf16(df, x + i + 2 * lanes);
    const VF v3 = load_bf16(df, x + i + 3 * lanes);
    acc0 = hn::MulAdd(v0, v0, acc0);
    acc1 = hn::MulAdd(v1, v1, acc1);
    acc2 = hn::MulAdd(v2, v2, acc2);
    acc3 = hn::MulAdd(v3, v3, acc3);
  }
  for (; i + lanes <= n; i += lanes) {
    const VF v = load_bf16(df, x + i);
    acc0 = hn::MulAdd(v, v, acc0);
  }
  if (i < n) {
    bf16_t tail[hn::MaxLanes(df)] = {};  // zero padding adds nothing to the sum
    std::copy_n(x + i, n - i, tail);
    const VF v = load_bf16(df, tail);
    acc1 = hn::MulAdd(v, v, acc1);
  }
  const VF total = hn::Add(hn::Add(acc0, acc1), hn::Add(acc2, acc3));
  return hn::GetLane(hn::SumOfLanes(df, total));
}

void scale_and_weight(const bf16_t* x, float factor, const float* weight, float* out,
                      std::size_t n) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF f = hn::Set(df, factor);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const VF normalized = hn::Mul(load_bf16(df, x + i), f);
    hn::StoreU(hn::Mul(normalized, hn::LoadU(df, weight + i)), df, out + i);
  }
  for (; i < n; ++i) out[i] = bf16_to_f32(x[i]) * factor * weight[i];  // same products as the lanes
}

void scale_and_weight(const bf16_t* x, float factor, const float* weight, bf16_t* out,
                      std::size_t n, bool streaming) {
  const DF df;
  const DU32 du32;
  const DU16 du16;
  const std::size_t lanes = hn::Lanes(df);
  const VF f = hn::Set(df, factor);
  auto one = [&](std::size_t j) {  // the same products as the lanes
    out[j] = f32_to_bf16(round_to_bf16(bf16_to_f32(x[j]) * factor) * weight[j]);
  };
  std::size_t i = 0;
  // Streaming stores need whole aligned vectors: the elements before the first are written one
  // by one.
  const std::size_t vector_bytes = lanes * sizeof(bf16_t);
  if (streaming)
    for (; i < n && reinterpret_cast<std::uintptr_t>(out + i) % vector_bytes != 0; ++i) one(i);
  // The NaN select of rounded_bits is skipped (it took a quarter of this pass's time): x is bf16,
  // and factor and weight derive from bf16 data (see the header), so every NaN met here has a zero
  // low half.
  for (; i + lanes <= n; i += lanes) {
    const VU32 product = hn::BitCast(du32, hn::Mul(load_bf16(df, x + i), f));
    const VF normalized = hn::BitCast(df, truncate_low_half(add_rounding_bias(product)));
    const VF weighted = hn::Mul(normalized, hn::LoadU(df, weight + i));
    const auto rounded = high_halves(add_rounding_bias(hn::BitCast(du32, weighted)));
    if (streaming)
      hn::Stream(rounded, du16, out + i);
    else
      hn::StoreU(rounded, du16, out + i);
  }
  if (streaming) hwy::FlushStream();
  for (; i < n; ++i) one(i);
}

float max_value(const float* x, std::size_t n) {
  return extreme_value(x, n, kNegInf, MaxOf{});
}

float min_value(const float* x, std::size_t n) {
  return extreme_value(x, n, std::numeric_limits<float>::infinity(), MinOf{});
}

float sum_exp(const float* x, std::size_t n, float shift) {
  return shifted_exp_sum</*kStore=*/false>(x, n, shift, nullptr);
}

float exp_inplace_sum(float* x, std::size_t n, float shift) {
  return shifted_exp_sum</*kStore=*/true>(x, n, shift, x);
}

void prefix_softmax(float* x, std::size_t visible, std::size_t width, bf16_t* out) {
  if (visible == 0) {
    std::fill(out, out + width, f32_to_bf16(1.0f / static_cast<float>(width)));
    return;
  }
  const float factor = 1.0f / exp_inplace_sum(x, visible, max_value(x, visible));
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF f = hn::Set(df, factor);
  std::size_t i = 0;
  for (; i + lanes <= visible; i += lanes)
    store_high_halves(rounded_bits(hn::Mul(hn::LoadU(df, x + i), f)), out + i);
  for (; i < visible; ++i) out[i] = f32_to_bf16(x[i] * factor);  // the same products and rounding
  std::fill(out + visible, out + width, bf16_t{0});
}

void scale_inplace(float* x, std::size_t n, float factor) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  const VF f = hn::Set(df, factor);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(hn::LoadU(df, x + i), f), df, x + i);
  for (; i < n; ++i) x[i] *= factor;  // fewer than one vector: scalar products are identical
}

void round_to_bf16_inplace(float* x, std::size_t n) {
  const DF df;
  const std::size_t lanes = hn::Lanes(df);
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(round_bf16(df, hn::LoadU(df, x + i)), df, x + i);
  for (; i < n; ++i) x[i] = round_to_bf16(x[i]);  // the scalar rule the vector path mirrors
}

}  // namespace kbench::ops
