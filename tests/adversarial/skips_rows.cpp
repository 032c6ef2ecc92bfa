// expect: incorrect
// Attack class: an incomplete output. Only the first half of the rows (floor(rows / 2); zero rows
// when there is one) is computed -- e.g. a botched split of work between threads. The rest keeps
// whatever the buffer held: kbench's NaN fill, so the check must flag NaN where the oracle is
// finite (and would flag stale values if the fill were anything else): incorrect.
#include <cmath>
#include <cstdint>

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
  kb_tensor half_in[2] = {inputs[0], inputs[1]};
  kb_tensor half_out = outputs[0];
  const int64_t d = inputs[0].shape[inputs[0].rank - 1];
  const int64_t rows = d == 0 ? 0 : kb_numel(&inputs[0]) / d;
  // View x and out as (rows / 2, d) matrices: same pointers, fewer rows.
  half_in[0].rank = half_out.rank = 2;
  half_in[0].shape[0] = half_out.shape[0] = rows / 2;
  half_in[0].shape[1] = half_out.shape[1] = d;
  rmsnorm(cfg, half_in, &half_out);
  return 0;
}
