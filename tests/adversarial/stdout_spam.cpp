// expect: correct
// Attack class: noisy output. Each call writes 256 KiB to stdout and to stderr (4x a Linux pipe's
// 64 KiB buffer) besides a correct result. A harness that captures the worker's streams through
// pipes but does not drain them while it waits would deadlock (and misreport timeout); one that
// stores them all would grow without bound. Expected: correct, with the streams drained and
// truncated in any log.
#include <cmath>
#include <cstdint>
#include <cstdio>

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
  for (int i = 0; i < 4096; ++i) {
    std::fprintf(stdout, "stdout spam line %6d ..........................................\n", i);
    std::fprintf(stderr, "stderr spam line %6d ..........................................\n", i);
  }
  std::fflush(stdout);
  rmsnorm(cfg, inputs, outputs);
  return 0;
}
