// 48k_Matmul_BatchNorm_BiasAdd_Divide_Swish: a naive, correct starting point.
//
// KernelBench level 2 problem 97, a linear layer, an inference-mode BatchNorm over the features
// (running statistics), a scalar bias, a division by 1.0, then Swish:
// y = x @ weight + linear_bias;
// z = (y - bn_mean) / sqrt(bn_var + 1e-5) * bn_scale + bn_bias   (per feature);
// s = (z + bias) / 1.0; out = s / (1 + exp(-s)),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (M, K)   M = batch_size, K = in_features
//          weight       bf16  (K, N)   N = out_features ((in, out), not nn.Linear's (out, in))
//          linear_bias  bf16  (N)      added to every row
//          bn_scale     bf16  (N)      BatchNorm's per-feature scale (gamma)
//          bn_bias      bf16  (N)      BatchNorm's per-feature shift (beta)
//          bn_mean      bf16  (N)      BatchNorm's running mean
//          bn_var       bf16  (N)      BatchNorm's running variance
//          bias         bf16  (1)      one scalar added to every element
// Output   out          bf16  (M, N)
// Params   none; read M, K, N from the tensors. bn_eps 1e-5 and divide_value 1.0 are constants of
//          the program.
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops; the BatchNorm folds into one
// per-feature scale and shift, and the whole epilogue fuses.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 8 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& linear_bias = inputs[2];
  const kb_tensor& bn_scale = inputs[3];
  const kb_tensor& bn_bias = inputs[4];
  const kb_tensor& bn_mean = inputs[5];
  const kb_tensor& bn_var = inputs[6];
  const kb_tensor& bias = inputs[7];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || weight.shape[0] != x.shape[1]) return 1;
  const int64_t n = weight.shape[1];
  for (int32_t t = 2; t < 7; ++t)
    if (inputs[t].rank != 1 || inputs[t].shape[0] != n) return 1;
  if (bias.rank != 1 || bias.shape[0] != 1) return 1;

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const float bn_eps = 1e-5f;
  const float divide_value = 1.0f;
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* lbs = static_cast<const uint16_t*>(linear_bias.data);
  const uint16_t* gamma = static_cast<const uint16_t*>(bn_scale.data);
  const uint16_t* beta = static_cast<const uint16_t*>(bn_bias.data);
  const uint16_t* mean = static_cast<const uint16_t*>(bn_mean.data);
  const uint16_t* var = static_cast<const uint16_t*>(bn_var.data);
  const float scalar_bias = kb_bf16_to_f32(static_cast<const uint16_t*>(bias.data)[0]);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One output row at a time in f32, starting from linear_bias; the i-p-j order reads weight along
  // its rows.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(lbs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) {
      const float bn_std = sqrtf(kb_bf16_to_f32(var[j]) + bn_eps);
      const float normalized =
          (row[j] - kb_bf16_to_f32(mean[j])) / bn_std * kb_bf16_to_f32(gamma[j]) +
          kb_bf16_to_f32(beta[j]);
      const float s = (normalized + scalar_bias) / divide_value;
      ys[i * n + j] = kb_f32_to_bf16(s / (1.0f + expf(-s)));
    }
  }
  return 0;
}
