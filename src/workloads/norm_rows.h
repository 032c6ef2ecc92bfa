// Vectorized (Highway) f32 passes over GEMM output rows that the GEMM + normalization baselines
// compose (29k, 31k, 38k, 40k, 43k, 45k, 50k): group norm, softmax, batch-norm statistics over the
// batch axis, and the elementwise activations a GEMM epilogue cannot take because they follow a
// reduction. Everything runs in f32 on f32 rows, in place; store_row rounds once, at the end.
#pragma once

#include <cstddef>

#include "kbench/kernel.h"

namespace kbench::norm_rows {

// Group normalization of one row of n values in consecutive groups of group_size (n a multiple of
// group_size), in place:
//   v = x + pre_bias (pre_bias may be null);
//   x = (v - mean_g) / sqrt(var_g + eps) * weight + shift,
// with the group's mean and biased variance computed in two passes in f32 (no cancellation).
void group_norm(float* x, std::size_t n, std::size_t group_size, float eps, const float* pre_bias,
                const float* weight, const float* shift);

// Softmax of one row in place: exp(x - max) / sum.
void softmax(float* x, std::size_t n);

// x[i] = x[i] * scale[i] + shift[i]: a per-column affine map (eval-mode batch norm).
void scale_shift(float* x, const float* scale, const float* shift, std::size_t n);

// Per-column mean and biased variance of a rows x cols row-major matrix (rows > 0), two passes
// over the rows in f32 lanes: training-mode batch-norm statistics over the batch axis.
void column_mean_var(const float* y, std::size_t rows, std::size_t cols, float* mean, float* var);

// x = relu(gelu_tanh(x)), gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu_tanh_relu(float* x, std::size_t n);

// x = gelu_tanh(x).
void gelu_tanh(float* x, std::size_t n);

// x = silu(silu(x) * multiplier), silu(v) = v * sigmoid(v).
void silu_multiply_silu(float* x, const float* multiplier, std::size_t n);

// The smallest element; +inf for an empty row.
float min_value(const float* x, std::size_t n);

// Writes n f32 values to elements [offset, offset + n) of `out` in its dtype (KB_BF16: rounded to
// nearest even; KB_F32: copied).
void store(const float* x, std::size_t n, kb_tensor& out, std::size_t offset);

}  // namespace kbench::norm_rows
