// Array conversions between bf16 and f32, built on the scalar rules of the candidate ABI header so
// kbench and candidates round identically (round-to-nearest-even, NaN kept quiet).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kbench/kernel.h"

namespace kbench {

using bf16_t = std::uint16_t;

inline float bf16_to_f32(bf16_t h) {
  return kb_bf16_to_f32(h);
}
inline bf16_t f32_to_bf16(float f) {
  return kb_f32_to_bf16(f);
}

// Rounds to the nearest bf16 and back: the value a bf16 tensor would hold.
inline float round_to_bf16(float f) {
  return bf16_to_f32(f32_to_bf16(f));
}

// Loops written so the compiler vectorizes them at -O3 -march=native (checked by the baselines'
// measured bandwidth, see docs/baselines.md).
void convert_bf16_to_f32(const bf16_t* src, float* dst, std::size_t n);
void convert_f32_to_bf16(const float* src, bf16_t* dst, std::size_t n);

}  // namespace kbench
