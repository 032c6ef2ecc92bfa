// 11p_Megablox_GMM: a naive, correct starting point.
//
// The grouped matmul of a Qwen3-235B-A22B MoE layer (megablox reference_gmm): the tokens routed to
// expert g are a contiguous run of group_sizes[g] rows of lhs, starting where the previous group's
// run ends, and each of the first min(group_sizes[g], max_expert_size) of them is
// out[row] = lhs[row] @ rhs[g]; every other row of out is zero (rows past max_expert_size in a
// group, and rows after the last group). Accumulated in f32 (or wider), rounded to bf16 once at
// the end.
//
// Inputs   lhs          bf16  (M, K)      M = routed tokens, K = emb_dim
//          rhs          bf16  (G, K, N)   G = num_experts, N = moe_mlp_dim; expert g's (K, N)
//          group_sizes  i32   (G)         uneven, some 0, summing to at most M
// Output   out          bf16  (M, N)
// Params   max_expert_size  the most rows of a group that are multiplied
// Full size M=32768, K=4096, N=1536, G=128, max_expert_size=256: G compute-bound GEMMs of ~256
//           rows, 2*M*K*N flops; each expert's weight is read by its own rows only.
#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& lhs = inputs[0];
  const kb_tensor& rhs = inputs[1];
  const kb_tensor& group_sizes = inputs[2];
  kb_tensor& out = outputs[0];
  if (lhs.rank != 2 || rhs.rank != 3 || group_sizes.rank != 1 || rhs.shape[1] != lhs.shape[1] ||
      group_sizes.shape[0] != rhs.shape[0]) {
    return 1;
  }
  const double max_expert_size = kb_param_or(cfg, "max_expert_size", -1.0);
  if (max_expert_size < 0) return 1;

  const int64_t m = lhs.shape[0];
  const int64_t k = lhs.shape[1];
  const int64_t groups = rhs.shape[0];
  const int64_t n = rhs.shape[2];
  const uint16_t* xs = static_cast<const uint16_t*>(lhs.data);
  const int32_t* sizes = static_cast<const int32_t*>(group_sizes.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // Rows no group multiplies stay zero; the output arrives filled with NaN.
  for (int64_t i = 0; i < m * n; ++i) ys[i] = kb_f32_to_bf16(0.0f);

  // One output row at a time in f32; the i-p-j order reads the group's weight along its rows.
  std::vector<float> row(n);
  int64_t start = 0;
  for (int64_t g = 0; g < groups; ++g) {
    if (sizes[g] < 0 || start + sizes[g] > m) return 1;
    const int64_t rows = sizes[g] < max_expert_size ? sizes[g] : (int64_t)max_expert_size;
    const uint16_t* ws = static_cast<const uint16_t*>(rhs.data) + g * k * n;
    for (int64_t i = start; i < start + rows; ++i) {
      for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float x_ip = kb_bf16_to_f32(xs[i * k + p]);
        for (int64_t j = 0; j < n; ++j) row[j] += x_ip * kb_bf16_to_f32(ws[p * n + j]);
      }
      for (int64_t j = 0; j < n; ++j) ys[i * n + j] = kb_f32_to_bf16(row[j]);
    }
    start += sizes[g];
  }
  return 0;
}
