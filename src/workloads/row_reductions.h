// Vectorized (Highway) passes over one contiguous f32 row of a GEMM output, for the baselines whose
// epilogue reduces each row (sums, log-sum-exps, maxima) or needs a row statistic before its
// elementwise part: what a fusing compiler's loop fusion after the GEMM computes.
#pragma once

#include <cstddef>

#include "core/bf16.h"

namespace kbench::row_reductions {

// Sum of x[i] in f32 lanes.
float sum(const float* x, std::size_t n);

// Sum of |x[i]| in f32 lanes.
float abs_sum(const float* x, std::size_t n);

// Sum of sigmoid(x[i]) = 1 / (1 + exp(-x[i])) in f32 lanes.
float sum_sigmoid(const float* x, std::size_t n);

// out[i] = sigmoid(x[i]); the bf16 form rounds each value once (round to nearest even).
void sigmoid(const float* x, float* out, std::size_t n);
void sigmoid(const float* x, bf16_t* out, std::size_t n);

// The largest element; -inf for an empty row.
float max(const float* x, std::size_t n);

// log(sum(exp(x[i]))), computed stably around the row's maximum; -inf for an empty row.
float logsumexp(const float* x, std::size_t n);

// x[i] = min(max(x[i], lo), hi) in place.
void clamp_inplace(float* x, std::size_t n, float lo, float hi);

// out[i] = gelu_tanh(x[i] - shift), gelu_tanh(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)))
// (jax.nn.gelu's default approximation). The bf16 form rounds each value once.
void gelu_tanh_shifted(const float* x, float shift, float* out, std::size_t n);
void gelu_tanh_shifted(const float* x, float shift, bf16_t* out, std::size_t n);

// The scalar gelu_tanh above, for short rows and tails.
float gelu_tanh(float v);

}  // namespace kbench::row_reductions
