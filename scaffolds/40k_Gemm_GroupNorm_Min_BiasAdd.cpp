// 40k_Gemm_GroupNorm_Min_BiasAdd: a naive, correct starting point.
//
// KernelBench level 2 problem 75, a linear layer, a group norm, the minimum over the features and
// a broadcast bias add:
// y = x @ weight.T + linear_bias;
// g = (y - mean) / sqrt(var + 1e-5) * gn_weight + gn_bias, mean and (biased) var taken per row over
//     each of G groups of N/G consecutive features;
// row_min[m] = min_j g[m, j];  out[0, c, m, 0] = row_min[m] + bias[0, c, 0, 0],
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (M, K)         M = batch_size, K = in_features
//          weight       bf16  (N, K)         N = out_features (nn.Linear's (out, in): note the .T)
//          linear_bias  bf16  (N)
//          gn_weight    bf16  (N)            the group norm's per-feature scale
//          gn_bias      bf16  (N)            the group norm's per-feature shift
//          bias         bf16  (1, N, 1, 1)   one value per output channel c
// Output   out          bf16  (1, N, M, 1)   the (1, 1, M, 1) minima broadcast against bias
// Params   num_groups = G (must divide N); read M, K, N from the tensors.
// Full size M=4096, K=8192, N=8192, G=512: compute-bound, 2*M*K*N flops; each GEMM row reduces to
// one value, then an output as large as the GEMM's is written from M + N values.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& linear_bias = inputs[2];
  const kb_tensor& gn_weight = inputs[3];
  const kb_tensor& gn_bias = inputs[4];
  const kb_tensor& bias = inputs[5];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || linear_bias.rank != 1 || gn_weight.rank != 1 ||
      gn_bias.rank != 1 || bias.rank != 4 || weight.shape[1] != x.shape[1] ||
      linear_bias.shape[0] != weight.shape[0] || gn_weight.shape[0] != weight.shape[0] ||
      gn_bias.shape[0] != weight.shape[0] || bias.shape[0] != 1 ||
      bias.shape[1] != weight.shape[0] || bias.shape[2] != 1 || bias.shape[3] != 1 ||
      out.rank != 4 || out.shape[1] != weight.shape[0] || out.shape[2] != x.shape[0]) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[0];
  const int64_t num_groups = (int64_t)kb_param_or(cfg, "num_groups", 0);
  if (num_groups <= 0 || n % num_groups != 0) return 1;
  const int64_t group_size = n / num_groups;
  const double eps = 1e-5;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* lbs = static_cast<const uint16_t*>(linear_bias.data);
  const uint16_t* gws = static_cast<const uint16_t*>(gn_weight.data);
  const uint16_t* gbs = static_cast<const uint16_t*>(gn_bias.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // weight is (N, K): transposed once into f32 (K, N), so the i-p-j loop below reads it along its
  // rows (a dot product per value would read both operands contiguously, but its serial sum does
  // not vectorize and ran far too slowly).
  std::vector<float> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = kb_bf16_to_f32(ws[j * k + p]);

  // Each row of the linear layer, in f32 starting from linear_bias, is reduced to its group-normed
  // minimum.
  std::vector<float> row(n), row_min(m);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(lbs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * wt[p * n + j];
    }
    float min_g = INFINITY;
    for (int64_t g = 0; g < n; g += group_size) {
      // Two passes (mean, then the mean squared deviation) rather than E[y^2] - E[y]^2, which
      // cancels badly when the mean is large against the spread.
      double mean = 0, var = 0;
      for (int64_t j = g; j < g + group_size; ++j) mean += row[j];
      mean /= (double)group_size;
      for (int64_t j = g; j < g + group_size; ++j) var += (row[j] - mean) * (row[j] - mean);
      var /= (double)group_size;
      const double inv_std = 1.0 / sqrt(var + eps);
      for (int64_t j = g; j < g + group_size; ++j) {
        const float normed =
            (float)((row[j] - mean) * inv_std) * kb_bf16_to_f32(gws[j]) + kb_bf16_to_f32(gbs[j]);
        min_g = fminf(min_g, normed);
      }
    }
    row_min[i] = min_g;
  }

  // The broadcast: out is (1, N, M, 1), so channel c's M values are contiguous.
  for (int64_t c = 0; c < n; ++c) {
    const float b = kb_bf16_to_f32(bs[c]);
    for (int64_t i = 0; i < m; ++i) ys[c * m + i] = kb_f32_to_bf16(row_min[i] + b);
  }
  return 0;
}
