// The arithmetic of jax.numpy / jax.nn ops applied to bf16 tensors, emulated in scalar f32 for the
// bf16 programs of the workloads that chain them after a GEMM or convolution: each op rounds its
// result to bf16, as the original JAX program holds a bf16 tensor after every op (XLA:CPU keeps
// those roundings, converting after each op); reductions (jnp.sum, jnp.mean, jnp.var) accumulate
// in f32 as JAX upcasts bf16 reductions, and round their result to bf16. Python float constants are
// weakly typed, so they become bf16 constants too. Values in and out are f32 holding
// bf16-representable numbers.
#pragma once

#include <cstddef>

#include "core/bf16.h"

namespace kbench::ops::jnp {

// The bf16 tensor an op on bf16 operands produces.
inline float r(float v) {
  return round_to_bf16(v);
}

// jax.nn.sigmoid(v) * v: the logistic, rounded, times v, rounded.
float swish(float v);

// jnp.logaddexp(v, 0.0) (the originals' softplus), op by op: max(v, 0) + log1p(exp(-|v|)), the
// exp, the log1p and the sum each rounded.
float softplus(float v);

// jax.nn.gelu(v) (approximate=True, its default), op by op:
// cdf = 0.5 * (1 + tanh(bf16(sqrt(2/pi)) * (v + 0.044715 * v**3))); return v * cdf.
float gelu_tanh(float v);

// jnp.mean over n bf16 values: an f32 sum divided by n in f32, rounded to bf16.
float mean(const float* v, std::size_t n, std::size_t stride = 1);

// The GroupNorm JAXBench writes, over consecutive groups of group_size of one row, in place:
// mean = jnp.mean(g), var = jnp.var(g) (in f32 from the bf16 values, rounded once),
// g = (g - mean) / jnp.sqrt(var + eps); then row * weight + shift, every op rounding.
void group_norm(float* row, std::size_t n, std::size_t group_size, float eps, const float* weight,
                const float* shift);

// jax.nn.softmax over one row, in place: exp(x - max) rounded at the subtraction and the exp, the
// sum in f32 rounded to bf16, the division rounded.
void softmax(float* row, std::size_t n);

}  // namespace kbench::ops::jnp
