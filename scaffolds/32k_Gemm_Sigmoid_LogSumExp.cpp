// 32k_Gemm_Sigmoid_LogSumExp: a naive, correct starting point.
//
// KernelBench level 2 problem 45, a linear layer, a sigmoid, a second linear layer, then a
// log-sum-exp over each row's features:
// h = sigmoid(x @ w1^T + b1), z = h @ w2^T + b2, out[i] = log(sum_j exp(z[i][j])),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x    bf16  (M, K)   M = batch_size, K = input_size
//          w1   bf16  (H, K)   H = hidden_size (nn.Linear's (out, in) layout)
//          b1   bf16  (H)
//          w2   bf16  (O, H)   O = output_size (nn.Linear's (out, in) layout)
//          b2   bf16  (O)
// Output   out  bf16  (M)      one value per row
// Params   none; read M, K, H, O from the tensors.
// Full size M=16384, K=2048, H=4096, O=1024: two compute-bound GEMMs, 2*(M*K*H + M*H*O) flops.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& w1 = inputs[1];
  const kb_tensor& b1 = inputs[2];
  const kb_tensor& w2 = inputs[3];
  const kb_tensor& b2 = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || w1.rank != 2 || b1.rank != 1 || w2.rank != 2 || b2.rank != 1 ||
      out.rank != 1 || w1.shape[1] != x.shape[1] || b1.shape[0] != w1.shape[0] ||
      w2.shape[1] != w1.shape[0] || b2.shape[0] != w2.shape[0] || out.shape[0] != x.shape[0] ||
      w2.shape[0] <= 0) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t h = w1.shape[0];
  const int64_t o = w2.shape[0];
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* w1s = static_cast<const uint16_t*>(w1.data);
  const uint16_t* b1s = static_cast<const uint16_t*>(b1.data);
  const uint16_t* w2s = static_cast<const uint16_t*>(w2.data);
  const uint16_t* b2s = static_cast<const uint16_t*>(b2.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // Both weights are (out, in): transposed once into f32 (in, out), so the i-p-j loops below read
  // them along their rows (a dot product per output would read both operands contiguously, but its
  // serial sum does not vectorize and ran far too slowly).
  std::vector<float> w1t(k * h), w2t(h * o);
  for (int64_t j = 0; j < h; ++j)
    for (int64_t p = 0; p < k; ++p) w1t[p * h + j] = kb_bf16_to_f32(w1s[j * k + p]);
  for (int64_t j = 0; j < o; ++j)
    for (int64_t p = 0; p < h; ++p) w2t[p * o + j] = kb_bf16_to_f32(w2s[j * h + p]);

  // One row at a time in f32: its hidden activation, its O logits, then their log-sum-exp.
  std::vector<float> hidden(h), z(o);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < h; ++j) hidden[j] = kb_bf16_to_f32(b1s[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < h; ++j) hidden[j] += x_ip * w1t[p * h + j];
    }
    for (int64_t j = 0; j < h; ++j) hidden[j] = 1.0f / (1.0f + expf(-hidden[j]));
    for (int64_t j = 0; j < o; ++j) z[j] = kb_bf16_to_f32(b2s[j]);
    for (int64_t p = 0; p < h; ++p)
      for (int64_t j = 0; j < o; ++j) z[j] += hidden[p] * w2t[p * o + j];
    // Subtracting the row's maximum keeps every exp at most 1, so the sum cannot overflow.
    float max = z[0];
    for (int64_t j = 1; j < o; ++j) max = z[j] > max ? z[j] : max;
    float total = 0.0f;
    for (int64_t j = 0; j < o; ++j) total += expf(z[j] - max);
    ys[i] = kb_f32_to_bf16(max + logf(total));
  }
  return 0;
}
