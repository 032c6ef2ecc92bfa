// Naive but correct candidate for 12p_RMSNorm
// (Llama-3.1-70B RMSNorm), a starting point.
//
// out = bf16( bf16(x * rsqrt(mean(x^2 over D) + epsilon)) * scale ), statistics in f32 or wider.
//
// Inputs   x      bf16  (B, S, D)
//          scale  bf16  (D)
// Output   out    bf16  (B, S, D)
// Params   epsilon      (1e-5)
// Full size B=8, S=4096, D=8192: memory-bound, every byte of x read once and of out written once.
#include <math.h>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& scale = inputs[1];
  kb_tensor& out = outputs[0];
  if (x.rank != 3 || scale.rank != 1 || scale.shape[0] != x.shape[2]) return 1;

  const int64_t dim = x.shape[2];
  const int64_t rows = x.shape[0] * x.shape[1];
  const double epsilon = kb_param_or(cfg, "epsilon", 1e-5);
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(scale.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* x_row = xs + r * dim;
    double sum_sq = 0;
    for (int64_t j = 0; j < dim; ++j) {
      const double v = kb_bf16_to_f32(x_row[j]);
      sum_sq += v * v;
    }
    const float inv_rms = (float)(1.0 / sqrt(sum_sq / (double)dim + epsilon));
    for (int64_t j = 0; j < dim; ++j) {
      const float normalized = kb_bf16_to_f32(kb_f32_to_bf16(kb_bf16_to_f32(x_row[j]) * inv_rms));
      ys[r * dim + j] = kb_f32_to_bf16(normalized * kb_bf16_to_f32(ws[j]));
    }
  }
  return 0;
}
