// expect: incorrect
// Attack class: a single missed element. The result is correct except that the very last element
// of the output is never written (a `< n - 1` loop bound), so it keeps the NaN fill. Everything
// else matches, which makes the relative L2 of the finite part tiny: the check must still fail on
// one non-finite element: incorrect.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kbench/kernel.h"

// Plain RMSNorm over the last axis: f32 math, normalized value rounded to bf16, times scale.
static void rmsnorm(const kb_config* cfg, const kb_tensor* inputs, kb_tensor* outputs) {
  const kb_tensor& x = inputs[0];
  const int64_t d = x.shape[x.rank - 1];
  if (d == 0) return;
  const int64_t rows = kb_numel(&x) / d;
  const auto* xs = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
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
    for (int64_t j = 0; j < d; ++j) {
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * d + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int64_t n = kb_numel(&outputs[0]);
  std::vector<uint16_t> tmp(static_cast<size_t>(n));
  kb_tensor scratch = outputs[0];
  scratch.data = tmp.data();
  rmsnorm(cfg, inputs, &scratch);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < n - 1; ++i) out[i] = tmp[static_cast<size_t>(i)];
  return 0;
}
