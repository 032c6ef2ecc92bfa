// Vectorizable bf16 <-> f32 array conversions.
#include "core/bf16.h"

#include <bit>

namespace kbench {

void convert_bf16_to_f32(const bf16_t* __restrict src, float* __restrict dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::bit_cast<float>(std::uint32_t{src[i]} << 16);
}

void convert_f32_to_bf16(const float* __restrict src, bf16_t* __restrict dst, std::size_t n) {
  // Branch-free form of kb_f32_to_bf16 so the loop vectorizes; NaNs are made quiet by OR-ing the
  // top mantissa bit, which the rounding add would otherwise carry into the exponent.
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(src[i]);
    const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
    const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
    const std::uint32_t quiet = (bits >> 16) | 0x0040u;
    dst[i] = static_cast<bf16_t>(is_nan ? quiet : rounded);
  }
}

}  // namespace kbench
