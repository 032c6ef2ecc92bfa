// Vectorized (Highway) passes over one contiguous row that the normalization, softmax and loss
// baselines compose: reductions in f32 lanes, and elementwise passes that round to bf16 where a
// bf16 framework would hold a bf16 tensor between two ops.
#pragma once

#include <cstddef>

#include "core/bf16.h"

namespace kbench::row_ops {

// Sum of x[i]^2 over a bf16 row, widened exactly and accumulated in f32 lanes.
float sum_of_squares(const bf16_t* x, std::size_t n);

// out[i] = x[i] * factor * weight[i] in f32: the oracle's RMSNorm epilogue.
void scale_and_weight(const bf16_t* x, float factor, const float* weight, float* out,
                      std::size_t n);

// out[i] = bf16(bf16(x[i] * factor) * weight[i]): the normalized row is cast back to bf16 before
// the weight multiply, as two eager bf16 ops would, but in one pass over memory. factor and weight
// must derive from bf16 data, so that any NaN among them has a zero low half (as NaNs propagated
// from bf16 values and the default NaN do): such NaNs round to themselves without the scalar rule's
// NaN branch, which this pass skips.
void scale_and_weight(const bf16_t* x, float factor, const float* weight, bf16_t* out,
                      std::size_t n);

// The largest element; -inf for an empty row.
float max_value(const float* x, std::size_t n);

// Sum of exp(x[i] - shift), leaving x unchanged: a log-sum-exp without materializing the exps.
float sum_exp(const float* x, std::size_t n, float shift);

// x[i] = exp(x[i] - shift) in place; returns the sum of the new values.
float exp_inplace_sum(float* x, std::size_t n, float shift);

// x[i] *= factor.
void scale_inplace(float* x, std::size_t n, float factor);

// x[i] = bf16(x[i]) (round to nearest even): vectorized.
void round_to_bf16_inplace(float* x, std::size_t n);

}  // namespace kbench::row_ops
