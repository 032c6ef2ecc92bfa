// 14p_Ragged_Dot: a naive, correct starting point.
//
// The grouped matmul of a Mixtral-8x7B MoE layer (tokamax ragged_dot) with every group the same
// size, so a batched GEMM: out[g] = x[g] @ weights[g] for each group g,
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x        bf16  (G, Mg, K)   G = num_groups, Mg = rows per group, K = contraction
//          weights  bf16  (G, K, N)    group g's own (K, N) weight
// Output   out      bf16  (G, Mg, N)
// Params   none; read G, Mg, K, N from the tensors.
// Full size G=8, Mg=1024, K=4096, N=14336: G independent compute-bound GEMMs, 2*G*Mg*K*N flops.
#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& weights = inputs[1];
  kb_tensor& out = outputs[0];
  if (x.rank != 3 || weights.rank != 3 || weights.shape[0] != x.shape[0] ||
      weights.shape[1] != x.shape[2]) {
    return 1;
  }

  const int64_t groups = x.shape[0];
  const int64_t rows = x.shape[1];
  const int64_t k = x.shape[2];
  const int64_t n = weights.shape[2];
  std::vector<float> row(n);

  // One output row at a time in f32; the i-p-j order reads the group's weight along its rows.
  for (int64_t g = 0; g < groups; ++g) {
    const uint16_t* xs = static_cast<const uint16_t*>(x.data) + g * rows * k;
    const uint16_t* ws = static_cast<const uint16_t*>(weights.data) + g * k * n;
    uint16_t* ys = static_cast<uint16_t*>(out.data) + g * rows * n;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
        for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
      }
      for (int64_t j = 0; j < n; ++j) ys[i * n + j] = kb_f32_to_bf16(row[j]);
    }
  }
  return 0;
}
