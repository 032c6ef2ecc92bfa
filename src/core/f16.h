// IEEE-754 binary16 (float16) <-> f32 in portable bit arithmetic, for outputs that other frameworks
// save as float16; F16C intrinsics would need a target check for a conversion that is never hot.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace kbench {

using f16_t = std::uint16_t;

// Exact: every float16 value, subnormals, infinities and NaN payloads included, is an f32 value.
inline float f16_to_f32(f16_t h) {
  const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) {
    // Rebias 15 -> 127: add 112 to the exponent field.
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  // Zero or subnormal: mantissa * 2^-24, exact in f32.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

// Round to nearest even, as NumPy's astype(np.float16); overflow gives +-Inf, NaN stays a quiet
// NaN.
inline f16_t f32_to_f16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu);
  // 65520 = 65504 (the largest float16) + half an ulp: it and everything above round to Inf.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {
    // Below 2^-14, the smallest normal: count units of 2^-24 (the multiply is exact) and let the
    // default rounding mode round to nearest even; 1024 units correctly encodes 2^-14 itself.
    const float units = std::bit_cast<float>(magnitude) * 0x1p24f;
    return static_cast<f16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(units)));
  }
  // Normal: round away the 13 low mantissa bits to nearest even (a carry correctly bumps the
  // exponent), then rebias 127 -> 15 by subtracting 112 << 23.
  const std::uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return static_cast<f16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

}  // namespace kbench
