// 29k_Matmul_Swish_Sum_GroupNorm: a naive, correct starting point.
//
// KernelBench level 2 problem 37, a matmul without bias, swish, a bias add, then group norm:
// y = swish(x @ weight) + bias, swish(v) = v * sigmoid(v) = v / (1 + exp(-v));
// out = (y - mean_g) / sqrt(var_g + 1e-5) * gn_weight + gn_bias, where each row's N features form
// G groups of N/G consecutive features and mean_g, var_g are the group's mean and biased variance;
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x          bf16  (M, K)   M = batch_size, K = in_features
//          weight     bf16  (K, N)   N = out_features (note: (in, out), not nn.Linear's (out, in))
//          bias       bf16  (N)      added after the swish, not before it
//          gn_weight  bf16  (N)      the group norm's per-feature scale
//          gn_bias    bf16  (N)      the group norm's per-feature shift
// Output   out        bf16  (M, N)
// Params   num_groups = G (changes with size; G divides N); read M, K, N from the tensors.
// Full size M=8192, K=4096, N=4096, G=64: compute-bound, 2*M*K*N flops; the group norm is a pass
// over each output row while it is in cache.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

// nn.GroupNorm's epsilon.
static const float kEps = 1e-5f;

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  const kb_tensor& gn_weight = inputs[3];
  const kb_tensor& gn_bias = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || bias.rank != 1 || gn_weight.rank != 1 ||
      gn_bias.rank != 1 || weight.shape[0] != x.shape[1] || bias.shape[0] != weight.shape[1] ||
      gn_weight.shape[0] != weight.shape[1] || gn_bias.shape[0] != weight.shape[1]) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[1];
  const int64_t num_groups = (int64_t)kb_param_or(cfg, "num_groups", 0);
  if (num_groups <= 0 || n % num_groups != 0) return 1;
  const int64_t group_size = n / num_groups;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(gn_weight.data);
  const uint16_t* betas = static_cast<const uint16_t*>(gn_bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output row at a time in f32; the i-p-j order reads weight along its rows. The bias comes
  // after the swish, so the accumulator starts from zero.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
    }
    for (int64_t j = 0; j < n; ++j)
      row[j] = row[j] / (1.0f + expf(-row[j])) + kb_bf16_to_f32(bs[j]);

    // The group statistics in two passes (mean, then the biased variance around it), which stays
    // accurate when a group's mean is large next to its spread.
    for (int64_t g = 0; g < n; g += group_size) {
      float mean = 0.0f;
      for (int64_t j = g; j < g + group_size; ++j) mean += row[j];
      mean /= (float)group_size;
      float var = 0.0f;
      for (int64_t j = g; j < g + group_size; ++j) var += (row[j] - mean) * (row[j] - mean);
      var /= (float)group_size;
      const float inv_sd = 1.0f / sqrtf(var + kEps);
      for (int64_t j = g; j < g + group_size; ++j) {
        const float normed = (row[j] - mean) * inv_sd;
        ys[i * n + j] =
            kb_f32_to_bf16(normed * kb_bf16_to_f32(gammas[j]) + kb_bf16_to_f32(betas[j]));
      }
    }
  }
  return 0;
}
