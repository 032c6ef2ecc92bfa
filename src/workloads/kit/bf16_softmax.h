// jax.nn.softmax over one row of bf16 scores as the original programs of 3p and 6p compute it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/bf16.h"

namespace kbench {

// Replaces the n bf16-valued scores of `row` (masked ones included) by their softmax in bf16
// arithmetic: x - max, exp and the division each round to bf16; the sum accumulates in f32, as
// jnp.sum upcasts bf16, and rounds once. The quotients are left unrounded for the caller's store.
inline void bf16_softmax(float* row, std::int64_t n) {
  float max_score = -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) max_score = std::max(max_score, row[j]);
  float sum = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    row[j] = round_to_bf16(std::exp(round_to_bf16(row[j] - max_score)));
    sum += row[j];
  }
  const float total = round_to_bf16(sum);
  for (std::int64_t j = 0; j < n; ++j) row[j] /= total;
}

}  // namespace kbench
