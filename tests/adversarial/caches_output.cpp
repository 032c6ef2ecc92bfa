// expect: incorrect
// Attack class: state across calls (memoization). The first call computes the right answer and
// keeps a copy; later calls with the same shape return the copy without reading the inputs -- a
// benchmark-gaming trick that "works" when a harness reuses one input set for every timed call.
// kbench feeds fresh random inputs to every call and checks every output, so the second call is
// wrong: incorrect.
#include <cmath>
#include <cstdint>
#include <cstring>
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

namespace {
std::vector<uint16_t> g_cached;
int64_t g_cached_numel = -1;
}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int64_t n = kb_numel(&outputs[0]);
  const size_t bytes = static_cast<size_t>(n) * sizeof(uint16_t);
  if (n == g_cached_numel) {
    std::memcpy(outputs[0].data, g_cached.data(), bytes);
    return 0;
  }
  rmsnorm(cfg, inputs, outputs);
  g_cached.assign(static_cast<const uint16_t*>(outputs[0].data),
                  static_cast<const uint16_t*>(outputs[0].data) + n);
  g_cached_numel = n;
  return 0;
}
