// 43k_Gemm_BatchNorm_Scaling_Softmax: a naive, correct starting point.
//
// KernelBench level 2 problem 84, a linear layer, an eval-mode batch norm with running statistics,
// a learned scalar scale and a softmax over the features:
// y = x @ weight + bias;  z = bn_scale * (y - bn_mean) / sqrt(bn_var + bn_eps) + bn_bias;
// out = softmax(scale * z, axis=1), softmax(v)_j = exp(v_j) / sum_l exp(v_l),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x         bf16  (M, K)   M = batch_size, K = in_features
//          weight    bf16  (K, N)   N = out_features (note: (in, out), not nn.Linear's (out, in))
//          bias      bf16  (N)      added to every row
//          bn_scale  bf16  (N)      the batch norm's per-feature scale (gamma)
//          bn_bias   bf16  (N)      the batch norm's per-feature shift (beta)
//          bn_mean   bf16  (N)      running mean
//          bn_var    bf16  (N)      running variance
//          scale     bf16  (1)      one scalar for the whole tensor
// Output   out       bf16  (M, N)   each row sums to 1
// Params   bn_eps (1e-5); read M, K, N from the tensors (the config's bn_momentum is unused).
// Full size M=4096, K=8192, N=8192: compute-bound, 2*M*K*N flops; the batch norm and scale are a
// per-column multiply-add, and the softmax needs a whole row's maximum and sum.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 8 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weight = inputs[1];
  const kb_tensor& bias = inputs[2];
  const kb_tensor& bn_scale = inputs[3];
  const kb_tensor& bn_bias = inputs[4];
  const kb_tensor& bn_mean = inputs[5];
  const kb_tensor& bn_var = inputs[6];
  const kb_tensor& scale = inputs[7];
  kb_tensor& out = outputs[0];
  if (x.rank != 2 || weight.rank != 2 || weight.shape[0] != x.shape[1]) return 1;
  for (int t = 2; t <= 6; ++t)
    if (inputs[t].rank != 1 || inputs[t].shape[0] != weight.shape[1]) return 1;
  if (scale.rank != 1 || scale.shape[0] != 1) return 1;

  const int64_t m = x.shape[0];
  const int64_t k = x.shape[1];
  const int64_t n = weight.shape[1];
  const double bn_eps = kb_param_or(cfg, "bn_eps", 1e-5);
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* ws = static_cast<const uint16_t*>(weight.data);
  const uint16_t* bs = static_cast<const uint16_t*>(bias.data);
  const uint16_t* gammas = static_cast<const uint16_t*>(bn_scale.data);
  const uint16_t* betas = static_cast<const uint16_t*>(bn_bias.data);
  const uint16_t* means = static_cast<const uint16_t*>(bn_mean.data);
  const uint16_t* vars = static_cast<const uint16_t*>(bn_var.data);
  const float s = kb_bf16_to_f32(*static_cast<const uint16_t*>(scale.data));
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One row of y at a time in f32, starting from the bias; the i-p-j order reads weight along its
  // rows.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = kb_bf16_to_f32(bs[j]);
    for (int64_t p = 0; p < k; ++p) {
      const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
    }
    // Eval mode: the running statistics, not the batch's, normalize each feature.
    for (int64_t j = 0; j < n; ++j) {
      const float normalized = (row[j] - kb_bf16_to_f32(means[j])) /
                               (float)sqrt((double)kb_bf16_to_f32(vars[j]) + bn_eps);
      row[j] = s * (kb_bf16_to_f32(gammas[j]) * normalized + kb_bf16_to_f32(betas[j]));
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
