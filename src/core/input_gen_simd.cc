// Vector input generation on Highway, compiled for every x86 target and chosen at run time
// (foreach_target + HWY_DYNAMIC_DISPATCH), writing the same bytes as the scalar reference in
// input_gen.cc for every rule and dtype.
//
// One u32 vector holds Lanes / 4 whole Philox blocks, words in counter order (c0 c1 c2 c3 of a
// block in each group of four lanes), so after the ten rounds its lanes are already elements in
// tensor order. A round is then one MulEven (c0 * M0 and c2 * M1 into the block's two u64 halves),
// a shift bringing c1 and c3 down to lanes 0 and 2, and a reversal of each group of four:
//   products (as u32)  lo(M0 c0)  hi(M0 c0)  lo(M1 c2)  hi(M1 c2)
//   reversed           hi(M1 c2)  lo(M1 c2)  hi(M0 c0)  lo(M0 c0)
//   xor                c1 ^ k0    0          c3 ^ k1    0
// which is the scalar round's new block. Normal draws load the two neighbouring table entries
// as one u64 per lane. Every multiply-add is a fused MulAdd where the reference has std::fma, so
// targets without native FMA (SSSE3, SSE4, the EMU128 or SCALAR fallback), where Highway would
// round twice, run the scalar reference instead.

// Compile every attainable x86 target, not only those at or above -march=native's, so a build on
// one machine carries (and its tests check) the AVX2 and AVX-512 paths alike.
#ifndef HWY_COMPILE_ALL_ATTAINABLE
#define HWY_COMPILE_ALL_ATTAINABLE
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/bf16.h"
#include "core/input_gen_internal.h"
#include "core/philox.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/input_gen_simd.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace kbench::input_gen_detail::HWY_NAMESPACE {

#if HWY_NATIVE_FMA && HWY_TARGET != HWY_SCALAR

namespace hn = hwy::HWY_NAMESPACE;

using DU32 = hn::ScalableTag<std::uint32_t>;
using DI32 = hn::RebindToSigned<DU32>;
using DF = hn::RebindToFloat<DU32>;
using DU64 = hn::Repartition<std::uint64_t, DU32>;
using DF64 = hn::Repartition<double, DU32>;
using DI32Half = hn::Half<DI32>;
using DFHalf = hn::Half<DF>;
using DU16 = hn::Rebind<std::uint16_t, DU32>;
using VU32 = hn::Vec<DU32>;
using VU64 = hn::Vec<DU64>;
using VF = hn::Vec<DF>;
using VF64 = hn::Vec<DF64>;

// Independent vectors per step: a round's MulEven has a latency of ~5 cycles, so four chains keep
// the multiplier busy.
constexpr std::size_t kVectorsPerStep = 4;

// How a step turns its 32 random bits per lane into values.
enum class Draw {
  kUnitNormal,  // normal with scale 1 and shift +-0, written as f32 or bf16: exact in f32
  kNormal,      // normal with any scale and shift, through double as the reference does
  kUniform,
  kRandInt,
};

// The ten round keys and the multipliers, as u32 lanes [k0 0 k1 0] and [M0 0 M1 0].
struct Philox {
  VU32 round_key[kPhiloxRounds];
  VU32 multipliers;
};

HWY_INLINE void InitPhilox(const PhiloxKey& key, Philox& philox) {
  const DU64 du64;
  const DU32 du32;
  std::uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < kPhiloxRounds; ++round) {
    philox.round_key[round] = hn::BitCast(du32, hn::OddEven(hn::Set(du64, k1), hn::Set(du64, k0)));
    k0 += kPhiloxWeyl0;
    k1 += kPhiloxWeyl1;
  }
  philox.multipliers =
      hn::BitCast(du32, hn::OddEven(hn::Set(du64, kPhiloxMul1), hn::Set(du64, kPhiloxMul0)));
}

HWY_INLINE void PhiloxRounds(const Philox& philox, VU32 (&c)[kVectorsPerStep]) {
  const DU32 du32;
  const DU64 du64;
  for (int round = 0; round < kPhiloxRounds; ++round) {
    for (std::size_t v = 0; v < kVectorsPerStep; ++v) {
      const VU32 products = hn::BitCast(du32, hn::MulEven(c[v], philox.multipliers));
      const VU32 odd_words = hn::BitCast(du32, hn::ShiftRight<32>(hn::BitCast(du64, c[v])));
      c[v] = hn::Xor3(hn::Shuffle0123(products), odd_words, philox.round_key[round]);
    }
  }
}

// q[i] + f * (q[i + 1] - q[i]) in f32 with one rounding for the multiply-add, as the reference.
HWY_INLINE VF StandardNormal(const float* HWY_RESTRICT quantiles, VU32 bits) {
  const DU32 du32;
  const DI32 di32;
  const DF df;
  const DU64 du64;
  // Each u64 looked up holds q[i] in its low half and q[i + 1] in its high half. Lane by lane
  // through a buffer (GCC turns it into lane extracts and inserting loads): on Ice Lake a whole
  // bf16 normal draw took 1.8 ns per value so, 2.0 ns with u64 or f32 gathers on AVX-512 and
  // 3.5-3.9 ns with them on AVX2.
  HWY_ALIGN std::uint32_t index[hn::MaxLanes(du32)];
  HWY_ALIGN std::uint64_t pairs[hn::MaxLanes(du32)];
  const std::size_t lanes = hn::Lanes(du32);
  hn::Store(hn::ShiftRight<32 - kQuantileBits>(bits), du32, index);
  for (std::size_t j = 0; j < lanes; ++j)
    std::memcpy(&pairs[j], quantiles + index[j], sizeof(pairs[j]));
  const VF pairs_lo = hn::BitCast(df, hn::Load(du64, pairs));
  const VF pairs_hi = hn::BitCast(df, hn::Load(du64, pairs + lanes / 2));
  const VF lower = hn::ConcatEven(df, pairs_hi, pairs_lo);
  const VF upper = hn::ConcatOdd(df, pairs_hi, pairs_lo);
  const VU32 low_bits = hn::And(bits, hn::Set(du32, (1u << (32 - kQuantileBits)) - 1));
  const VF fraction =
      hn::Mul(hn::ConvertTo(df, hn::BitCast(di32, low_bits)), hn::Set(df, 0x1p-16f));
  return hn::MulAdd(fraction, hn::Sub(upper, lower), lower);
}

// scale * v + shift in double, one rounding, for the low and high halves of v.
HWY_INLINE void AffineInDouble(VF v, double scale, double shift, VF64& lo, VF64& hi) {
  const DF64 df64;
  const DFHalf dfh;
  lo = hn::MulAdd(hn::Set(df64, scale), hn::PromoteTo(df64, hn::LowerHalf(dfh, v)),
                  hn::Set(df64, shift));
  hi = hn::MulAdd(hn::Set(df64, scale), hn::PromoteTo(df64, hn::UpperHalf(dfh, v)),
                  hn::Set(df64, shift));
}

// scale * (bits * 2^-32) + shift in double, one rounding. bits * 2^-32 is formed exactly from the
// signed value bits - 2^31, the only integer Highway converts to double.
HWY_INLINE void UniformInDouble(VU32 bits, double scale, double shift, VF64& lo, VF64& hi) {
  const DU32 du32;
  const DI32 di32;
  const DF64 df64;
  const DI32Half di32h;
  const auto centred = hn::BitCast(di32, hn::Xor(bits, hn::Set(du32, 0x80000000u)));
  const VF64 unit_lo = hn::MulAdd(hn::PromoteTo(df64, hn::LowerHalf(di32h, centred)),
                                  hn::Set(df64, 0x1p-32), hn::Set(df64, 0.5));
  const VF64 unit_hi = hn::MulAdd(hn::PromoteTo(df64, hn::UpperHalf(di32h, centred)),
                                  hn::Set(df64, 0x1p-32), hn::Set(df64, 0.5));
  lo = hn::MulAdd(hn::Set(df64, scale), unit_lo, hn::Set(df64, shift));
  hi = hn::MulAdd(hn::Set(df64, scale), unit_hi, hn::Set(df64, shift));
}

// ((u64) bits * high) mod 2^64 >> 32 = hi32(bits * high_lo) + lo32(bits * high_hi), mod 2^32.
HWY_INLINE VU32 RandInt(VU32 bits, std::uint64_t high) {
  const DU32 du32;
  const DU64 du64;
  const VU32 multiplier = hn::Set(du32, static_cast<std::uint32_t>(high));
  const VU64 even = hn::MulEven(bits, multiplier);
  const VU64 odd =
      hn::MulEven(hn::BitCast(du32, hn::ShiftRight<32>(hn::BitCast(du64, bits))), multiplier);
  VU32 r = hn::OddEven(hn::BitCast(du32, odd), hn::BitCast(du32, hn::ShiftRight<32>(even)));
  if (const auto high_hi = static_cast<std::uint32_t>(high >> 32); high_hi != 0)
    r = hn::Add(r, hn::Mul(bits, hn::Set(du32, high_hi)));
  return r;
}

// The f32 nearest a u32 (as the reference's u32 -> double -> f32): hi16 * 2^16 and lo16 are exact,
// so their sum is rounded once.
HWY_INLINE VF U32ToF32(VU32 r) {
  const DU32 du32;
  const DI32 di32;
  const DF df;
  const VF high = hn::ConvertTo(df, hn::BitCast(di32, hn::ShiftRight<16>(r)));
  const VF low = hn::ConvertTo(df, hn::BitCast(di32, hn::And(r, hn::Set(du32, 0xffffu))));
  return hn::MulAdd(high, hn::Set(df, 65536.0f), low);
}

HWY_INLINE VF DemoteToF32(VF64 lo, VF64 hi) {
  const DF df;
  const DFHalf dfh;
  return hn::Combine(df, hn::DemoteTo(dfh, hi), hn::DemoteTo(dfh, lo));
}

HWY_INLINE void StoreValues(VF v, float* HWY_RESTRICT out) {
  hn::StoreU(v, DF(), out);
}

// Round to nearest even; a NaN stays a quiet NaN: kb_f32_to_bf16 lane by lane.
HWY_INLINE void StoreValues(VF v, bf16_t* HWY_RESTRICT out) {
  const DU32 du32;
  const DI32 di32;
  const DU16 du16;
  const VU32 bits = hn::BitCast(du32, v);
  const VU32 odd = hn::And(hn::ShiftRight<16>(bits), hn::Set(du32, 1u));
  const VU32 rounded = hn::Add(bits, hn::Add(hn::Set(du32, 0x7fffu), odd));
  const VU32 quiet_nan = hn::Or(bits, hn::Set(du32, 0x00400000u));
  const VU32 chosen = hn::IfThenElse(hn::RebindMask(du32, hn::IsNaN(v)), quiet_nan, rounded);
  // The high halves are in [0, 0xffff], so the saturating demotion keeps them.
  hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, hn::ShiftRight<16>(chosen))), du16, out);
}

// Lanes(DU32) values drawn from `bits` and written to out[0, Lanes).
template <Draw kDraw, typename T>
HWY_INLINE void DrawValues(const FillJob& job, VU32 bits, T* HWY_RESTRICT out) {
  const DI32 di32;
  const DI32Half di32h;
  const DF df;
  constexpr bool kToI32 = std::is_same_v<T, std::int32_t>;
  if constexpr (kDraw == Draw::kRandInt) {
    const VU32 r = RandInt(bits, job.int_high);
    if constexpr (kToI32) {
      hn::StoreU(hn::BitCast(di32, r), di32, out);  // r < 2^31: make_fill_job bounds int_high
    } else {
      StoreValues(U32ToF32(r), out);
    }
  } else if constexpr (kDraw == Draw::kUnitNormal) {
    static_assert(!kToI32);
    // 1 * v + shift in double is v + shift exactly, and with shift = +-0 that is v + shift in f32.
    StoreValues(
        hn::Add(StandardNormal(job.quantiles, bits), hn::Set(df, static_cast<float>(job.shift))),
        out);
  } else {
    VF64 lo, hi;
    if constexpr (kDraw == Draw::kNormal) {
      AffineInDouble(StandardNormal(job.quantiles, bits), job.scale, job.shift, lo, hi);
    } else {
      UniformInDouble(bits, job.scale, job.shift, lo, hi);
    }
    if constexpr (kToI32) {
      // Truncating, as static_cast<int32_t>(double); values must fit (see fill_input).
      hn::StoreU(hn::Combine(di32, hn::DemoteTo(di32h, hi), hn::DemoteTo(di32h, lo)), di32, out);
    } else {
      StoreValues(DemoteToF32(lo, hi), out);
    }
  }
}

// Elements [start, start + kVectorsPerStep * Lanes) to out; start is a multiple of 4.
template <Draw kDraw, typename T>
HWY_INLINE void Step(const FillJob& job, const Philox& philox, std::int64_t start,
                     T* HWY_RESTRICT out) {
  const DU32 du32;
  const DU64 du64;
  const std::size_t lanes = hn::Lanes(du32);
  // u64 lanes 2j and 2j + 1 of a vector are the two halves of its block j: counter words c0 c1
  // (the block index) in the even lane, c2 c3 (stream, 0) in the odd one.
  const VU64 block_of_lane = hn::ShiftRight<1>(hn::Iota(du64, 0));
  const VU64 stream = hn::Set(du64, std::uint64_t{job.stream});
  VU32 c[kVectorsPerStep];
  for (std::size_t v = 0; v < kVectorsPerStep; ++v) {
    const auto first_block = static_cast<std::uint64_t>(start / 4) + v * lanes / 4;
    c[v] =
        hn::BitCast(du32, hn::OddEven(stream, hn::Add(block_of_lane, hn::Set(du64, first_block))));
  }
  PhiloxRounds(philox, c);
  for (std::size_t v = 0; v < kVectorsPerStep; ++v) DrawValues<kDraw>(job, c[v], out + v * lanes);
}

template <Draw kDraw, typename T>
void FillSpanTyped(const FillJob& job, std::int64_t first, std::int64_t count,
                   T* HWY_RESTRICT out) {
  const DU32 du32;
  Philox philox;
  InitPhilox(job.key, philox);
  const auto step = static_cast<std::int64_t>(kVectorsPerStep * hn::Lanes(du32));
  std::int64_t i = 0;
  for (; i + step <= count; i += step) Step<kDraw>(job, philox, first + i, out + i);
  if (i < count) {
    // The last partial step is drawn whole into a temporary: element values do not depend on
    // where a step ends.
    HWY_ALIGN T tail[kVectorsPerStep * hn::MaxLanes(du32)];
    Step<kDraw>(job, philox, first + i, tail);
    std::copy_n(tail, count - i, out + i);
  }
}

template <typename T>
void FillSpanOf(const FillJob& job, std::int64_t first, std::int64_t count, T* HWY_RESTRICT out) {
  switch (job.kind) {
    case InitRule::Kind::kNormal:
      if constexpr (!std::is_same_v<T, std::int32_t>) {
        if (job.scale == 1.0 && job.shift == 0.0)
          return FillSpanTyped<Draw::kUnitNormal>(job, first, count, out);
      }
      return FillSpanTyped<Draw::kNormal>(job, first, count, out);
    case InitRule::Kind::kUniform:
      return FillSpanTyped<Draw::kUniform>(job, first, count, out);
    case InitRule::Kind::kRandInt:
      return FillSpanTyped<Draw::kRandInt>(job, first, count, out);
    case InitRule::Kind::kCustom:
      return;  // fill_input hands custom rules to their own function before any job exists
  }
}

void FillSpan(const FillJob& job, std::int64_t first, std::int64_t count, void* out) {
  switch (job.dtype) {
    case KB_BF16:
      return FillSpanOf(job, first, count, static_cast<bf16_t*>(out));
    case KB_F32:
      return FillSpanOf(job, first, count, static_cast<float*>(out));
    case KB_I32:
      return FillSpanOf(job, first, count, static_cast<std::int32_t*>(out));
  }
}

#else  // no native FMA: Highway's MulAdd would round twice

void FillSpan(const FillJob& job, std::int64_t first, std::int64_t count, void* out) {
  fill_span_scalar(job, first, count, out);
}

#endif

std::int64_t CurrentTarget() {
  return HWY_TARGET;
}

}  // namespace kbench::input_gen_detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace kbench::input_gen_detail {

HWY_EXPORT(FillSpan);
HWY_EXPORT(CurrentTarget);

void fill_span_simd(const FillJob& job, std::int64_t first, std::int64_t count, void* out) {
  HWY_DYNAMIC_DISPATCH(FillSpan)(job, first, count, out);
}

std::int64_t compiled_simd_targets() {
  return HWY_TARGETS;
}

std::int64_t dispatched_simd_target() {
  return HWY_DYNAMIC_DISPATCH(CurrentTarget)();
}

}  // namespace kbench::input_gen_detail
#endif  // HWY_ONCE
