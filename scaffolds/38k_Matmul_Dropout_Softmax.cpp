// 38k_Matmul_Dropout_Softmax: a naive, correct starting point.
//
// KernelBench level 2 problem 66, a linear layer, dropout and a softmax over the features. Dropout
// (p = 0.2) is the identity at inference, so:
// out = softmax(x @ weight.T + bias, axis=1), softmax(v)_j = exp(v_j) / sum_l exp(v_l),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x       bf16  (M, K)   M = batch_size, K = in_features
//          weight  bf16  (N, K)   N = out_features (nn.Linear's (out, in) layout: note the .T)
//          bias    bf16  (N)      added to every row
// Output   out     bf16  (M, N)   each row sums to 1
// Params   none; read M, K, N from the tensors (the config's dropout_p is unused).
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops; the softmax needs a whole row's
// maximum and sum before any of it can be written.
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

  // weight is (N, K): transposed once into f32 (K, N), so the i-p-j loop below reads it along its
  // rows (a dot product per logit would read both operands contiguously, but its serial sum does
  // not vectorize and ran far too slowly).
  std::vector<float> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = kb_bf16_to_f32(ws[j * k + p]);

  // One row of logits at a time in f32, starting from the bias.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * wt[p * n + j];
    }
    // Subtracting the row's maximum keeps exp from overflowing; it cancels in the quotient.
    float max_logit = row[0];
    for (int64_t j = 1; j < n; ++j) max_logit = fmaxf(max_logit, row[j]);
    double total = 0;
    for (int64_t j = 0; j < n; ++j) {
      row[j] = expf(row[j] - max_logit);
      total += row[j];
    }
    for (int64_t j = 0; j < n; ++j) ys[i * n + j] = kb_f32_to_bf16((float)(row[j] / total));
  }
  return 0;
}
