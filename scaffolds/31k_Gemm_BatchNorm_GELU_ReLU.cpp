// 31k_Gemm_BatchNorm_GELU_ReLU: a naive, correct starting point.
//
// KernelBench level 2 problem 41, a linear layer, training-mode batch norm, GELU, ReLU:
// y = x @ gemm_weight^T + gemm_bias;
// mean[j], var[j] = the mean and biased variance of column j of y over all M rows (the batch's own
// statistics, not running ones);
// z = (y - mean) / sqrt(var + 1e-5) * bn_weight + bn_bias;
// out = relu(gelu(z)), gelu(z) = 0.5 z (1 + tanh(sqrt(2/pi) (z + 0.044715 z^3))) (the tanh form);
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (M, K)   M = batch_size, K = in_features
//          gemm_weight  bf16  (N, K)   N = out_features (nn.Linear's (out, in) layout)
//          gemm_bias    bf16  (N)      added to every row (it cancels in y - mean)
//          bn_weight    bf16  (N)      the batch norm's per-feature scale
//          bn_bias      bf16  (N)      the batch norm's per-feature shift
// Output   out          bf16  (M, N)
// Params   none; read M, K, N from the tensors.
// Full size M=16384, K=8192, N=8192: compute-bound, 2*M*K*N flops; every output depends on its
// whole column, so the statistics need the complete product before any output is written.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

// The BatchNorm's epsilon.
static const double kEps = 1e-5;

// The tanh approximation of GELU (what jax.nn.gelu computes by default), not the erf form.
static float gelu_tanh(float z) {
  return 0.5f * z * (1.0f + tanhf(0.7978845608028654f * (z + 0.044715f * z * z * z)));
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& gemm_weight = inputs[1];
  const kb_tensor& gemm_bias = inputs[2];
  const kb_tensor& bn_weight = inputs[3];
  const kb_tensor& bn_bias = inputs[4];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || gemm_weight.rank != 2 || gemm_bias.rank != 1 || bn_weight.rank != 1 ||
      bn_bias.rank != 1 || gemm_weight.shape[1] != x.shape[1] ||
      gemm_bias.shape[0] != gemm_weight.shape[0] || bn_weight.shape[0] != gemm_weight.shape[0] ||
      bn_bias.shape[0] != gemm_weight.shape[0] || x.shape[0] <= 0) {
    return 1;
  }

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = gemm_weight.shape[0];
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(gemm_weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(gemm_bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(bn_weight.data);
  const uint16_t* betas = static_cast<const uint16_t*>(bn_bias.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // gemm_weight is (N, K): transposed once into f32 (K, N), so the i-p-j loop below reads it along
  // its rows (a dot product per output would read both operands contiguously, but its serial sum
  // does not vectorize and ran far too slowly).
  std::vector<float> wt(k * n);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t p = 0; p < k; ++p) wt[p * n + j] = kb_bf16_to_f32(ws[j * k + p]);

  // The whole (M, N) product in f32, each row starting from the bias: the batch statistics need
  // every row before any output.
  std::vector<float> y(m * n);
  for (int64_t i = 0; i < m; ++i) {
    float* row = &y[i * n];
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * wt[p * n + j];
    }
  }

  // Column by column: the statistics over M rows, accumulated in double since M is long, in two
  // passes (mean, then the biased variance around it); then each element normalized, scaled,
  // shifted, GELU'd and ReLU'd.
  for (int64_t j = 0; j < n; ++j) {
    double mean = 0;
    for (int64_t i = 0; i < m; ++i) mean += y[i * n + j];
    mean /= (double)m;
    double var = 0;
    for (int64_t i = 0; i < m; ++i) var += (y[i * n + j] - mean) * (y[i * n + j] - mean);
    var /= (double)m;
    const float scale = (float)(kb_bf16_to_f32(gammas[j]) / sqrt(var + kEps));
    const float shift = kb_bf16_to_f32(betas[j]);
    for (int64_t i = 0; i < m; ++i) {
      const float z = (float)(y[i * n + j] - mean) * scale + shift;
      const float gelu = gelu_tanh(z);
      ys[i * n + j] = kb_f32_to_bf16(gelu > 0.0f ? gelu : 0.0f);
    }
  }
  return 0;
}
