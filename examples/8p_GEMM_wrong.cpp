// 8p_GEMM, WRONG on purpose: a plausible layout bug that a correctness check must catch.
//
// The bug: B is read as if it were stored (N,K) -- the nn.Linear weight layout, "out = A @ W^T" --
// so out[i][j] = sum_k A[i][k] * B_flat[j*K + k] instead of sum_k A[i][k] * B[k][j]. The code looks
// like a cache-friendly GEMM (both operands walked contiguously, f32 accumulation, correct bf16
// rounding) and it never reads out of bounds, because B holds K*N elements either way. Only the
// values are wrong: for random inputs the result is uncorrelated with A @ B (relative L2 error
// about 1.4), so allclose(1e-2, 1e-2) fails at every shape where K > 1 and N > 1, including the
// smoke shape (37, 45, 61). (With K = 1 or N = 1 the two layouts coincide and the bug hides.)
#include <cstdint>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
  const auto* a = static_cast<const uint16_t*>(inputs[0].data);
  const auto* b = static_cast<const uint16_t*>(inputs[1].data);
  auto* out = static_cast<uint16_t*>(outputs[0].data);

  for (int64_t i = 0; i < m; ++i) {
    const uint16_t* a_row = a + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const uint16_t* b_row = b + j * k;  // BUG: row j of a (N,K) matrix, not column j of B (K,N)
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) acc += kb_bf16_to_f32(a_row[p]) * kb_bf16_to_f32(b_row[p]);
      out[i * n + j] = kb_f32_to_bf16(acc);
    }
  }
  return 0;
}
