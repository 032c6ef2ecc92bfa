// expect: correct on 12p_RMSNorm
// The original program's arithmetic, op by op: the mean of squares summed in row order in f32,
// x * rsqrt(mean + epsilon) cast to bf16 (x.astype(x.dtype)), then times scale and cast again. It
// is a faithful implementation, within the rule of the oracle on every input. The baseline rounds
// the same two times but sums the squares in vector lanes: the last bits of 1/rms differ, which
// can flip the first rounding, and the second can then land two bf16 steps from the baseline's
// output: at the cpu size, on 1 input set in 16, further from it than the rule allows of the
// oracle (tests/cli_test.cc holds a timed call of it to the oracle of its inputs).
#include <cmath>
#include <cstdint>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const int64_t width = x.shape[x.rank - 1];
  const int64_t rows = kb_numel(&x) / width;
  const auto epsilon = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));
  const auto* in = static_cast<const uint16_t*>(x.data);
  const auto* scale = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = in + r * width;
    float sum_sq = 0;
    for (int64_t j = 0; j < width; ++j) {
      const float v = kb_bf16_to_f32(row[j]);
      sum_sq += v * v;
    }
    const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(width) + epsilon);
    for (int64_t j = 0; j < width; ++j) {
      const float normed = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(row[j]) * inv_rms));
      out[r * width + j] = kb_f32_to_bf16(normed * kb_bf16_to_f32(scale[j]));
    }
  }
  return 0;
}
