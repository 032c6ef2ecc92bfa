// expect: incorrect
// Attack class: warm-up detection. The kernel is honest for its first 5 calls in its process and
// returns zeros from then on, when it guesses it is being timed: with the test's flags (--trials 3
// by default, --warmup 2) the worker that checks it makes 3 calls, and the worker it is timed in
// makes its first call and the warm-up calls before the first timed one. kbench checks every
// timed call's outputs against the baseline's on the same fresh inputs, so the first timed call
// gives it away: incorrect. The verdict does not depend on the count being right: once the zeros
// start they never stop, and the correctness calls and every timed call are checked.
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

namespace {
constexpr int kHonestCalls = 5;  // 3 correctness trials + 2 warm-ups
int g_calls = 0;
}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  if (++g_calls <= kHonestCalls) {
    rmsnorm(cfg, inputs, outputs);
  } else {
    std::memset(outputs[0].data, 0, static_cast<size_t>(kb_numel(&outputs[0])) * 2);
  }
  return 0;
}
