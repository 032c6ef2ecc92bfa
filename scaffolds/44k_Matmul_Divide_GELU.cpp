// 44k_Matmul_Divide_GELU: a naive, correct starting point.
//
// KernelBench level 2 problem 86, a linear layer, a division by a constant, then GELU:
// y = (x @ weight + bias) / 10.0, out = gelu(y), with jax.nn.gelu's default tanh form
// gelu(y) = 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3))),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x       bf16  (M, K)   M = batch_size, K = input_size
//          weight  bf16  (K, N)   N = output_size (note: (in, out), not nn.Linear's (out, in))
//          bias    bf16  (N)      added to every row
// Output   out     bf16  (M, N)
// Params   none; read M, K, N from the tensors. The divisor 10.0 is a constant of the program.
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops; fuse the epilogue.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || bias.rank != 1 || weight.shape[0] != x.shape[1] ||
      bias.shape[0] != weight.shape[1]) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[1];
  const float divisor = 10.0f;
  const float sqrt_2_over_pi = 0.7978845608028654f;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output row at a time in f32, starting from the bias; the i-p-j order reads weight along its
  // rows.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) {
      // A true division, as the program writes it (not a multiply by 0.1).
      const float y = row[j] / divisor;
      const float gelu = 0.5f * y * (1.0f + tanhf(sqrt_2_over_pi * (y + 0.044715f * y * y * y)));
      ys[i * n + j] = kb_f32_to_bf16(gelu);
    }
  }
  return 0;
}
