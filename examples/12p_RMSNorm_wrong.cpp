// 12p_RMSNorm, WRONG on purpose: the learned scale is never applied.
//
// The bug: the author treated the op as a plain (weightless) RMS normalization, as if the framework
// multiplied by `scale` afterwards, so out = bf16(x * rsqrt(mean(x^2) + eps)). Everything else is
// right -- f32 math, reduction over the last axis, epsilon, bf16 rounding -- which makes the output
// look plausible (unit RMS per row). But scale ~ N(1, 0.1), so each element is off by a factor of
// scale[j]: a typical error of ~10% of |out|, about ten times the 1e-2 tolerance, and a relative L2
// error of ~0.1. (Forgetting epsilon instead would NOT be caught: 1e-5 next to mean(x^2) ~ 1 moves
// the result by ~5e-6, far inside the tolerance.)
#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0) return 0;
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));

  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = xs + r * d;
    float sum_sq = 0.0f;
    for (int64_t j = 0; j < d; ++j) {
      const float v = kb_bf16_to_f32(row[j]);
      sum_sq += v * v;
    }
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);
    // BUG: inputs[1] (scale) is never read.
    for (int64_t j = 0; j < d; ++j)
      out[r * d + j] = kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms);
  }
  return 0;
}
