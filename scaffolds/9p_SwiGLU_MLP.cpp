// 9p_SwiGLU_MLP: a naive, correct starting point.
//
// The Llama-3.1-70B MLP (MaxText):
// out = (silu(x @ gate_kernel) * (x @ up_kernel)) @ down_kernel, silu(g) = g / (1 + exp(-g)),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x            bf16  (B, S, E)   B = batch, S = seq_len, E = emb_dim
//          gate_kernel  bf16  (E, M)      M = mlp_dim
//          up_kernel    bf16  (E, M)
//          down_kernel  bf16  (M, E)
// Output   out          bf16  (B, S, E)
// Params   none; read B, S, E, M from the tensors.
// Full size B=2, S=4096, E=8192, M=28672: three compute-bound GEMMs, 6*B*S*E*M flops.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 4 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& gate_kernel = inputs[1];
  const kb_tensor& up_kernel = inputs[2];
  const kb_tensor& down_kernel = inputs[3];
  kb_tensor& out = outputs[0];
  if (x.rank != 3 || gate_kernel.rank != 2 || gate_kernel.shape[0] != x.shape[2]) return 1;

  const int64_t tokens = x.shape[0] * x.shape[1];
  const int64_t emb = x.shape[2];
  const int64_t mlp = gate_kernel.shape[1];
  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* wg = static_cast<const uint16_t*>(gate_kernel.data);
  const uint16_t* wu = static_cast<const uint16_t*>(up_kernel.data);
  const uint16_t* wd = static_cast<const uint16_t*>(down_kernel.data);
  uint16_t* ys = static_cast<uint16_t*>(out.data);

  // One token at a time in f32: its gate and up rows, then the down projection of their gated
  // product. The i-p-j loop order reads every weight along its rows.
  std::vector<float> gate(mlp), up(mlp), y(emb);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t j = 0; j < mlp; ++j) gate[j] = up[j] = 0.0f;
    for (int64_t e = 0; e < emb; ++e) {
      const float x_te = kb_bf16_to_f32(xs[t * emb + e]);
      for (int64_t j = 0; j < mlp; ++j) {
        gate[j] += x_te * kb_bf16_to_f32(wg[e * mlp + j]);
        up[j] += x_te * kb_bf16_to_f32(wu[e * mlp + j]);
      }
    }
    for (int64_t e = 0; e < emb; ++e) y[e] = 0.0f;
    for (int64_t j = 0; j < mlp; ++j) {
      const float hidden = gate[j] / (1.0f + expf(-gate[j])) * up[j];
      for (int64_t e = 0; e < emb; ++e) y[e] += hidden * kb_bf16_to_f32(wd[j * emb + e]);
    }
    for (int64_t e = 0; e < emb; ++e) ys[t * emb + e] = kb_f32_to_bf16(y[e]);
  }
  return 0;
}
