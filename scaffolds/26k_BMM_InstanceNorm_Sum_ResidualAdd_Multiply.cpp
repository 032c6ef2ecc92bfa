// 26k_BMM_InstanceNorm_Sum_ResidualAdd_Multiply: a naive, correct starting point.
//
// KernelBench level 2 problem 28, a linear layer, an instance norm over each row's features, a
// residual add and a product:
// v = x @ bmm_weight.T + bmm_bias,
// u = (v - mean_j v) / sqrt(var_j v + 1e-5) * in_weight + in_bias   (per row; biased variance),
// out = (u + y) * y, accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x           bf16  (M, K)   M = batch_size, K = in_features
//          y           bf16  (M, N)   N = out_features
//          bmm_weight  bf16  (N, K)   nn.Linear's (out, in) layout: x @ bmm_weight.T
//          bmm_bias    bf16  (N)
//          in_weight   bf16  (N)      the norm's per-feature scale
//          in_bias     bf16  (N)      the norm's per-feature shift
// Output   out         bf16  (M, N)
// Params   none; eps 1e-5 is a constant of the program. Read M, K, N from the tensors.
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops; the epilogue needs each row's
//          mean and variance before its elementwise part.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 6 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& y = inputs[1];
  const kb_tensor& bmm_weight = inputs[2];
  const kb_tensor& bmm_bias = inputs[3];
  const kb_tensor& in_weight = inputs[4];
  const kb_tensor& in_bias = inputs[5];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || y.rank != 2 || bmm_weight.rank != 2 || bmm_bias.rank != 1 ||
      in_weight.rank != 1 || in_bias.rank != 1 || bmm_weight.shape[1] != x.shape[1] ||
      y.shape[0] != x.shape[0] || y.shape[1] != bmm_weight.shape[0] ||
      bmm_bias.shape[0] != bmm_weight.shape[0] || in_weight.shape[0] != bmm_weight.shape[0] ||
      in_bias.shape[0] != bmm_weight.shape[0]) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = bmm_weight.shape[0];
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ys = static_cast<const uint16_t*>(y.data);
  const uint16_t* ws = static_cast<const uint16_t*>(bmm_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bmm_bias.data);
  const uint16_t* gamma = static_cast<const uint16_t*>(in_weight.data);
  const uint16_t* beta = static_cast<const uint16_t*>(in_bias.data);
  uint16_t* os = static_cast<uint16_t*>(out.data);

  // bmm_weight is (N, K): a transposed (K, N) copy lets the i-p-j order read it along its rows, as
  // for a (K, N) weight.
  std::vector<uint16_t> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = ws[j * k + p];

  // One row v of x @ bmm_weight.T + bmm_bias at a time in f32, kept whole: its statistics come
  // before its elementwise part.
  std::vector<float> v(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) v[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) v[j] += x_ip * kb_bf16_to_f32(wt[p * n + j]);
    }
    // Two passes, the mean first: summing squares of deviations avoids E[v^2] - E[v]^2's
    // cancellation.
    float total = 0.0f;
    for (int64_t j = 0; j < n; ++j) total += v[j];
    const float mean = total / (float)n;
    float squares = 0.0f;
    for (int64_t j = 0; j < n; ++j) squares += (v[j] - mean) * (v[j] - mean);
    const float inv_std = 1.0f / sqrtf(squares / (float)n + 1e-5f);
    for (int64_t j = 0; j < n; ++j) {
      const float u = (v[j] - mean) * inv_std * kb_bf16_to_f32(gamma[j]) + kb_bf16_to_f32(beta[j]);
      const float y_ij = kb_bf16_to_f32(ys[i * n + j]);
      os[i * n + j] = kb_f32_to_bf16((u + y_ij) * y_ij);
    }
  }
  return 0;
}
