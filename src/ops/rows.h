// Vectorized (Highway) passes over one contiguous row, the pieces the normalization, softmax, loss
// and GEMM-epilogue baselines compose: what a fusing compiler's loop fusion after a GEMM computes.
// Compiled for this machine's ISA (static dispatch, as the baselines are built with
// -march=native). Reductions accumulate in f32 lanes; the elementwise passes work on f32 rows in
// place or round once to bf16 where a bf16 framework would hold a bf16 tensor between two ops.
#pragma once

#include <cstddef>

#include "core/bf16.h"
#include "kbench/kernel.h"

namespace kbench::ops {

// --- Reductions ---

// Sum of x[i] in f32 lanes.
float sum(const float* x, std::size_t n);

// Sum of |x[i]| in f32 lanes.
float abs_sum(const float* x, std::size_t n);

// Sum of (x[i] - mean)^2 in f32 lanes: the second pass of a two-pass variance.
float centered_sum_of_squares(const float* x, std::size_t n, float mean);

// Sum of x[i]^2 over a bf16 row, widened exactly and accumulated in f32 lanes.
float sum_of_squares(const bf16_t* x, std::size_t n);

// Sum of sigmoid(x[i]) = 1 / (1 + exp(-x[i])) in f32 lanes.
float sum_sigmoid(const float* x, std::size_t n);

// The largest element; -inf for an empty row.
float max_value(const float* x, std::size_t n);

// The smallest element; +inf for an empty row.
float min_value(const float* x, std::size_t n);

// log(sum(exp(x[i]))), computed stably around the row's maximum; -inf for an empty row.
float logsumexp(const float* x, std::size_t n);

// Sum of exp(x[i] - shift), leaving x unchanged: a log-sum-exp without materializing the exps.
float sum_exp(const float* x, std::size_t n, float shift);

// Per-column mean and biased variance of a rows x cols row-major matrix (rows > 0), two passes
// over the rows in f32 lanes: training-mode batch-norm statistics over the batch axis.
void column_mean_var(const float* y, std::size_t rows, std::size_t cols, float* mean, float* var);

// --- Normalizations ---

// Group normalization of one row of n values in consecutive groups of group_size (n a multiple of
// group_size), in place:
//   v = x + pre_bias (pre_bias may be null);
//   x = (v - mean_g) / sqrt(var_g + eps) * weight + shift,
// with the group's mean and biased variance computed in two passes in f32 (no cancellation).
void group_norm(float* x, std::size_t n, std::size_t group_size, float eps, const float* pre_bias,
                const float* weight, const float* shift);

// Softmax of one row in place: exp(x - max) / sum.
void softmax(float* x, std::size_t n);

// The masked softmax of an attention row whose masked keys all come after its first `visible`:
// softmax of x[0, visible) in place, zeros in x[visible, width). Masked scores so negative that
// exp() of them is exactly 0 in f32 make this the softmax over the whole row, bit for bit. A row
// with no visible key gets 1 / width everywhere (a softmax over equal masked scores).
void prefix_softmax(float* x, std::size_t visible, std::size_t width);

// The same with the probabilities stored in bf16 (nearest even, as convert_f32_to_bf16) into
// out[0, width) by the pass that normalizes them: bit for bit prefix_softmax followed by
// convert_f32_to_bf16 of the row, without the f32 normalization, the f32 zeros and the separate
// conversion pass. x[0, visible) is left holding exp(x - max). The attention baselines' timed runs
// store their probabilities this way.
void prefix_softmax(float* x, std::size_t visible, std::size_t width, bf16_t* out);

// x[i] = x[i] * scale[i] + shift[i]: a per-column affine map (eval-mode batch norm).
void scale_shift(float* x, const float* scale, const float* shift, std::size_t n);

// out[i] = x[i] * factor * weight[i] in f32: the oracle's RMSNorm epilogue.
void scale_and_weight(const bf16_t* x, float factor, const float* weight, float* out,
                      std::size_t n);

// out[i] = bf16(bf16(x[i] * factor) * weight[i]): the normalized row is cast back to bf16 before
// the weight multiply, as two eager bf16 ops would, but in one pass over memory. factor and weight
// must derive from bf16 data, so that any NaN among them has a zero low half (as NaNs propagated
// from bf16 values and the default NaN do): such NaNs round to themselves without the scalar rule's
// NaN branch, which this pass skips. `streaming` writes out with non-temporal stores, past the
// caches, for an output too large to stay in them.
void scale_and_weight(const bf16_t* x, float factor, const float* weight, bf16_t* out,
                      std::size_t n, bool streaming = false);

// --- Elementwise passes ---

// x[i] = exp(x[i] - shift) in place; returns the sum of the new values.
float exp_inplace_sum(float* x, std::size_t n, float shift);

// x[i] *= factor.
void scale_inplace(float* x, std::size_t n, float factor);

// x[i] = min(max(x[i], lo), hi) in place.
void clamp_inplace(float* x, std::size_t n, float lo, float hi);

// x[i] = bf16(x[i]) (round to nearest even): vectorized.
void round_to_bf16_inplace(float* x, std::size_t n);

// out[i] = sigmoid(x[i]); the bf16 form rounds each value once (round to nearest even).
void sigmoid(const float* x, float* out, std::size_t n);
void sigmoid(const float* x, bf16_t* out, std::size_t n);

// x[i] = 1 / (1 + exp(-x[i])) in place, arguments clamped to +-88 where the result is 0 or 1 to
// f32 precision anyway: the gates of the triangle multiplicative update (17p), where no GEMM
// epilogue offers a sigmoid.
void sigmoid_inplace(float* x, std::size_t n);

// gelu_tanh(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), jax.nn.gelu's default
// approximation: the scalar form for short rows and tails, and in place over a row.
float gelu_tanh(float v);
void gelu_tanh(float* x, std::size_t n);

// out[i] = gelu_tanh(x[i] - shift). The bf16 form rounds each value once.
void gelu_tanh_shifted(const float* x, float shift, float* out, std::size_t n);
void gelu_tanh_shifted(const float* x, float shift, bf16_t* out, std::size_t n);

// x = relu(gelu_tanh(x)).
void gelu_tanh_relu(float* x, std::size_t n);

// x = silu(silu(x) * multiplier), silu(v) = v * sigmoid(v).
void silu_multiply_silu(float* x, const float* multiplier, std::size_t n);

// Writes n f32 values to elements [offset, offset + n) of `out` in its dtype (KB_BF16: rounded to
// nearest even; KB_F32: copied).
void store_row(const float* x, std::size_t n, kb_tensor& out, std::size_t offset);

}  // namespace kbench::ops
