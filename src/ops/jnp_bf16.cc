// Scalar emulations of bf16 jax.numpy ops (see the header): plain loops, run only by the suite
// test's faithful-program check.
#include "ops/jnp_bf16.h"

#include <algorithm>
#include <cmath>

namespace kbench::ops::jnp {

float swish(float v) {
  const float sigmoid = r(static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v)))));
  return r(sigmoid * v);
}

float softplus(float v) {
  return r(std::max(v, 0.0f) + r(std::log1p(r(std::exp(-std::fabs(v))))));
}

float gelu_tanh(float v) {
  // jax.nn.gelu casts sqrt(2/pi) to the input dtype; 0.044715 is a weakly typed Python float.
  const float sqrt_2_over_pi = r(0.7978845608028654f);
  const float cubic = r(0.044715f);
  const float cube = r(r(v * v) * v);  // v ** 3 lowers to two bf16 multiplies
  const float inner = r(sqrt_2_over_pi * r(v + r(cubic * cube)));
  const float cdf = r(0.5f * r(1.0f + r(std::tanh(inner))));
  return r(v * cdf);
}

float mean(const float* v, std::size_t n, std::size_t stride) {
  float total = 0;
  for (std::size_t i = 0; i < n; ++i) total += v[i * stride];
  return r(total / static_cast<float>(n));
}

void group_norm(float* row, std::size_t n, std::size_t group_size, float eps, const float* weight,
                const float* shift) {
  const float eps_bf16 = r(eps);
  for (std::size_t g = 0; g < n; g += group_size) {
    float* group = row + g;
    const float group_mean = mean(group, group_size);
    // jnp.var upcasts to f32 and keeps its own f32 mean.
    float total = 0;
    for (std::size_t i = 0; i < group_size; ++i) total += group[i];
    const float f32_mean = total / static_cast<float>(group_size);
    float squares = 0;
    for (std::size_t i = 0; i < group_size; ++i)
      squares += (group[i] - f32_mean) * (group[i] - f32_mean);
    const float var = r(squares / static_cast<float>(group_size));
    const float std_dev = r(std::sqrt(r(var + eps_bf16)));
    for (std::size_t i = 0; i < group_size; ++i) group[i] = r(r(group[i] - group_mean) / std_dev);
  }
  for (std::size_t i = 0; i < n; ++i) row[i] = r(r(row[i] * weight[i]) + shift[i]);
}

void softmax(float* row, std::size_t n) {
  const float max = *std::max_element(row, row + n);
  float total = 0;
  for (std::size_t i = 0; i < n; ++i) {
    row[i] = r(std::exp(r(row[i] - max)));
    total += row[i];
  }
  const float sum = r(total);
  for (std::size_t i = 0; i < n; ++i) row[i] = r(row[i] / sum);
}

}  // namespace kbench::ops::jnp
