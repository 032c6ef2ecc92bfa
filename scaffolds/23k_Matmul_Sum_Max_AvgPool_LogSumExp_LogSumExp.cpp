// 23k_Matmul_Sum_Max_AvgPool_LogSumExp_LogSumExp: a naive, correct starting point.
//
// KernelBench level 2 problem 18, a linear layer, a sum over the features, then max, mean,
// logsumexp and logsumexp over the resulting size-1 axis, which are identities:
// out[i] = sum_j (x @ weight.T + bias)[i, j], one value per row, accumulated in f32 (or wider),
// rounded to bf16 once at the end.
//
// Inputs   x       bf16  (M, K)   M = batch_size, K = in_features
//          weight  bf16  (N, K)   N = out_features (nn.Linear's (out, in) layout: x @ weight.T)
//          bias    bf16  (N)      added to every row before the sum
// Output   out     bf16  (M, 1)
// Params   none; read M, K, N from the tensors.
// Full size M=4096, K=8192, N=8192: compute-bound as written, 2*M*K*N flops; the row sums need not
//          store the (M, N) product (and sum_j (x W^T)_ij = x_i . sum_j W_j).
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
  if (x.rank != 2 || weight.rank != 2 || bias.rank != 1 || weight.shape[1] != x.shape[1] ||
      bias.shape[0] != weight.shape[0]) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[0];
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // weight is (N, K): a transposed (K, N) copy lets the i-p-j order read it along its rows, as
  // for a (K, N) weight.
  std::vector<uint16_t> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = ws[j * k + p];

  // One row of x @ weight.T + bias at a time in f32, then its sum. The max / mean / logsumexp of
  // one value leave the sum unchanged.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(wt[p * n + j]);
    }
    float total = 0.0f;
    for (int64_t j = 0; j < n; ++j) total += row[j];
    ys[i] = kb_f32_to_bf16(total);
  }
  return 0;
}
