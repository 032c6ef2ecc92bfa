// 49k_Matmul_AvgPool_GELU_Scale_Max: a naive, correct starting point.
//
// KernelBench level 2 problem 98, a linear layer, an average pool over the features, GELU, a
// scaling and a max over the pooled features:
// v = x @ weight + bias;
// p[i, q] = mean of v[i, 16q .. 16q + 15] (AvgPool1d, kernel = stride = 16), q < N/16;
// out[i] = max over q of 2 * gelu(p[i, q]),
// gelu(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))) (jax.nn.gelu's default tanh form),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x       bf16  (M, K)   M = batch_size, K = in_features
//          weight  bf16  (K, N)   N = out_features, a multiple of 16 (note: (in, out), not
//                                 nn.Linear's (out, in))
//          bias    bf16  (N)      added to every row
// Output   out     bf16  (M)      one value per row
// Params   none; read M, K, N from the tensors. pool_kernel_size 16 and scale_factor 2 are
//          constants of the program.
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops as written; pooling is linear, so
// it can be folded into the weight first (a 16x smaller GEMM).
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  const int64_t pool = 16;
  const float scale_factor = 2.0f;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || bias.rank != 1 || out.rank != 1 ||
      weight.shape[0] != x.shape[1] || bias.shape[0] != weight.shape[1] ||
      out.shape[0] != x.shape[0] || weight.shape[1] % pool != 0) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[1];
  const float sqrt_2_over_pi = 0.7978845608028654f;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One row of v at a time in f32, starting from the bias; the i-p-j order reads weight along its
  // rows.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
    }
    float best = -INFINITY;
    for (int64_t q = 0; q < n / pool; ++q) {
      float window = 0.0f;
      for (int64_t j = q * pool; j < (q + 1) * pool; ++j) window += row[j];
      const float u = window / (float)pool;
      const float gelu = 0.5f * u * (1.0f + tanhf(sqrt_2_over_pi * (u + 0.044715f * u * u * u)));
      best = fmaxf(best, scale_factor * gelu);
    }
    ys[i] = kb_f32_to_bf16(best);
  }
  return 0;
}
