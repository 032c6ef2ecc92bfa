// 8p_GEMM: a naive, correct starting point.
//
// The Llama-3.1-70B FFN projection out = A @ B, accumulated in f32 (or wider), rounded to bf16
// once at the end.
//
// Inputs   A    bf16  (M, K)
//          B    bf16  (K, N)
// Output   out  bf16  (M, N)
// Params   none; read M, K, N from the tensors.
// Full size M=8192, K=8192, N=28672: compute-bound, 2*M*K*N flops.
#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& a = inputs[0];
  const kb_tensor& b = inputs[1];
  kb_tensor& out = outputs[0];
  if (a.rank != 2 || b.rank != 2 || b.shape[0] != a.shape[1]) return 1;

  const int64_t m = a.shape[0];
  const int64_t k = a.shape[1];
  const int64_t n = b.shape[1];
  const uint16_t* as = static_cast<const uint16_t*>(a.data);
  const uint16_t* bs = static_cast<const uint16_t*>(b.data);
  uint16_t* cs = static_cast<uint16_t*>(out.data);

  // One output row at a time in f32; the i-p-j order reads B along its rows.
  std::vector<float> row(n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = kb_bf16_to_f32(as[i * k + p]);
      for (int64_t j = 0; j < n; ++j) row[j] += a_ip * kb_bf16_to_f32(bs[p * n + j]);
    }
    for (int64_t j = 0; j < n; ++j) cs[i * n + j] = kb_f32_to_bf16(row[j]);
  }
  return 0;
}
