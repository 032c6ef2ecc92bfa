// What the scalar reference generator (input_gen.cc), the vector kernels (input_gen_simd.cc) and
// their tests share: one resolved fill, its element spans, the quantile table and the hooks that
// show which Highway target runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/input_gen.h"
#include "core/philox.h"
#include "kbench/kernel.h"

namespace kbench::input_gen_detail {

// Normals come from the inverse normal CDF tabulated at 2^16 + 1 points and interpolated linearly:
// the high 16 bits of a draw pick the interval, the low 16 bits the fraction.
inline constexpr int kQuantileBits = 16;
inline constexpr std::size_t kQuantilePoints = (std::size_t{1} << kQuantileBits) + 1;

// kQuantilePoints f32 values, computed on first use.
const float* normal_quantiles();

// A fill_input call resolved once: the rule, the dtype written and the Philox key and stream.
struct FillJob {
  InitRule::Kind kind = InitRule::Kind::kNormal;
  kb_dtype dtype = KB_F32;
  double scale = 1.0;
  double shift = 0.0;
  // randint: draws are (bits * int_high) >> 32 in 64-bit unsigned arithmetic (so wrapping mod 2^64
  // where the bound is 2^32 or more, as the scalar code always has).
  std::uint64_t int_high = 0;
  PhiloxKey key = {0, 0};
  std::uint32_t stream = 0;
  const float* quantiles = nullptr;
};

// Validates `rule` for `dtype` and resolves the job. Throws std::invalid_argument for a randint
// into an i32 tensor whose bound is outside [0, 2^31] (its draws would not fit an i32).
FillJob make_fill_job(const InitRule& rule, std::uint64_t seed, std::uint32_t stream,
                      kb_dtype dtype);

// Elements [first, first + count) of the job's tensor written to `out` (out[0] is element
// `first`), in the job's dtype. `first` is a multiple of 4, the start of a Philox block.
// The scalar form is the reference; the vector form runs the best Highway target this CPU has
// (HWY_DYNAMIC_DISPATCH) and writes the same bytes.
void fill_span_scalar(const FillJob& job, std::int64_t first, std::int64_t count, void* out);
void fill_span_simd(const FillJob& job, std::int64_t first, std::int64_t count, void* out);

// fill_input through the scalar reference: the generator as it was before vectorization.
void fill_input_scalar(const InitRule& rule, std::uint64_t seed, std::uint32_t stream,
                       kb_tensor& t);

// The Highway targets (HWY_* bits) fill_span_simd was compiled for, and the one it runs now (which
// hwy::SetSupportedTargetsForTest can change, for tests).
std::int64_t compiled_simd_targets();
std::int64_t dispatched_simd_target();

}  // namespace kbench::input_gen_detail
