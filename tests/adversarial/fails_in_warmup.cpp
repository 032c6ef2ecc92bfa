// expect: runtime_error
// expect-error: (warm-up call 0)
// Attack class: a kernel that behaves one way on fresh inputs and another on inputs it has just
// seen. Correctness trials never repeat inputs; the worker kbench times in makes its first call and
// then its first warm-up call on the same inputs, so this kernel fails (return code 3) exactly at
// that warm-up call. The verdict must say so: a failure reported as a timed call's would send
// whoever debugs the kernel to the wrong call.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

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
  // The first bytes of x, as the previous call saw them.
  static unsigned char previous[256];
  static bool have_previous = false;
  const std::size_t bytes = std::min<std::size_t>(sizeof previous, kb_numel(&inputs[0]) * 2);
  const bool repeated = have_previous && std::memcmp(previous, inputs[0].data, bytes) == 0;
  std::memcpy(previous, inputs[0].data, bytes);
  have_previous = true;
  rmsnorm(cfg, inputs, outputs);
  return repeated ? 3 : 0;
}
