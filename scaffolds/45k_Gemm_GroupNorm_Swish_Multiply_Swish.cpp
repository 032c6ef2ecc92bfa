// 45k_Gemm_GroupNorm_Swish_Multiply_Swish: a naive, correct starting point.
//
// KernelBench level 2 problem 88, a linear layer, a group norm, swish, a per-feature multiply and
// swish again:
// y = x @ gemm_weight.T + gemm_bias;
// g = (y - mean) / sqrt(var + 1e-5) * gn_weight + gn_bias, mean and biased var over each of the G
//     groups of N/G consecutive features of a row;
// out = swish(swish(g) * multiply_weight), swish(v) = v / (1 + exp(-v)),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x                bf16  (M, K)   M = batch_size, K = in_features
//          gemm_weight      bf16  (N, K)   N = out_features (nn.Linear's (out, in) layout)
//          gemm_bias        bf16  (N)      added to every row
//          gn_weight        bf16  (N)      the group norm's per-feature scale
//          gn_bias          bf16  (N)      the group norm's per-feature shift
//          multiply_weight  bf16  (N)      per-feature factor between the two swishes
// Output   out              bf16  (M, N)
// Params   num_groups = G, which divides N; read M, K, N from the tensors.
// Full size M=4096, K=8192, N=8192, G=256 (groups of 32): compute-bound, 2*M*K*N flops; the group
// norm needs a whole group of a row before it can write any of it.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& gemm_weight = inputs[1];
  const kb_tensor& gemm_bias = inputs[2];
  const kb_tensor& gn_weight = inputs[3];
  const kb_tensor& gn_bias = inputs[4];
  const kb_tensor& multiply_weight = inputs[5];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || gemm_weight.rank != 2 || gemm_weight.shape[1] != x.shape[1]) return 1;
  const int64_t n = gemm_weight.shape[0];
  for (int32_t t = 2; t < 6; ++t)
    if (inputs[t].rank != 1 || inputs[t].shape[0] != n) return 1;
  const int64_t num_groups = (int64_t)kb_param_or(cfg, "num_groups", 0);
  if (num_groups <= 0 || n % num_groups != 0) return 1;

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t group_size = n / num_groups;
  const float eps = 1e-5f;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(gemm_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(gemm_bias.data);
  const uint16_t* gamma = static_cast<const uint16_t*>(gn_weight.data);
  const uint16_t* beta = static_cast<const uint16_t*>(gn_bias.data);
  const uint16_t* mul = static_cast<const uint16_t*>(multiply_weight.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // The weight transposed once to (K, N) in f32, so that the i-p-j loop below reads it along its
  // rows (a dot product per output would be a serial chain of adds, far slower).
  std::vector<float> weight_t(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) weight_t[p * n + j] = kb_bf16_to_f32(ws[j * k + p]);

  // One output row at a time in f32, starting from the bias.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * weight_t[p * n + j];
    }
    for (int64_t g = 0; g < n; g += group_size) {
      // Two passes: the variance about the mean, which a one-pass sum of squares would lose to
      // cancellation.
      float mean = 0.0f;
      for (int64_t j = g; j < g + group_size; ++j) mean += row[j];
      mean /= (float)group_size;
      float var = 0.0f;
      for (int64_t j = g; j < g + group_size; ++j) var += (row[j] - mean) * (row[j] - mean);
      var /= (float)group_size;
      const float inv_std = 1.0f / sqrtf(var + eps);
      for (int64_t j = g; j < g + group_size; ++j) {
        const float normed =
            (row[j] - mean) * inv_std * kb_bf16_to_f32(gamma[j]) + kb_bf16_to_f32(beta[j]);
        const float s = normed / (1.0f + expf(-normed)) * kb_bf16_to_f32(mul[j]);
        ys[i * n + j] = kb_f32_to_bf16(s / (1.0f + expf(-s)));
      }
    }
  }
  return 0;
}
