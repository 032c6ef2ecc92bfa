// 10p_Sparse_MoE: a naive, correct starting point.
//
// The top-2 mixture-of-experts feed-forward layer of Mixtral-8x7B (MaxText), per token x:
//   logits = bf16(x @ router_weights) (routing reads the logits rounded to bf16);
//   a, b = the two largest logits' experts (top_k: ties go to the lower expert index);
//   p_a, p_b = softmax([logit_a, logit_b]);
//   out = p_a * expert_a(x) + p_b * expert_b(x),
//   expert_n(x) = (silu(x @ gate[n]) * (x @ up[n])) @ down[n], silu(g) = g / (1 + exp(-g)),
// accumulated in f32 (or wider), rounded to bf16 once at the end. The other experts' outputs are
// weighted by exactly 0, so only the two routed experts need computing.
//
// Inputs   x                    bf16  (B, S, E)    B = batch, S = seq_len, E = emb_dim
//          router_weights       bf16  (E, NE)      NE = num_experts
//          expert_gate_kernels  bf16  (NE, E, M)   M = mlp_dim
//          expert_up_kernels    bf16  (NE, E, M)
//          expert_down_kernels  bf16  (NE, M, E)
// Output   out                  bf16  (B, S, E)
// Params   none; read B, S, E, M, NE from the tensors.
// Full size B=2, S=4096, E=4096, M=14336, NE=8: a tiny routing GEMM, then three compute-bound
// GEMMs per expert over the ~B*S*2/NE tokens routed to it.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 5 || num_outputs != 1) return 1;
  const kb_tensor& x = inputs[0];
  const kb_tensor& router = inputs[1];
  const kb_tensor& gate_kernels = inputs[2];
  const kb_tensor& up_kernels = inputs[3];
  const kb_tensor& down_kernels = inputs[4];
  if (x.rank != 3 || router.rank != 2 || gate_kernels.rank != 3 || up_kernels.rank != 3 ||
      down_kernels.rank != 3)
    return 1;
  const int64_t tokens = x.shape[0] * x.shape[1];
  const int64_t emb = x.shape[2];
  const int64_t experts = gate_kernels.shape[0];
  const int64_t mlp = gate_kernels.shape[2];
  if (experts < 2 || router.shape[0] != emb || router.shape[1] != experts ||
      gate_kernels.shape[1] != emb || up_kernels.shape[0] != experts ||
      up_kernels.shape[1] != emb || up_kernels.shape[2] != mlp ||
      down_kernels.shape[0] != experts || down_kernels.shape[1] != mlp ||
      down_kernels.shape[2] != emb) {
    return 1;
  }

  const uint16_t* xs = static_cast<const uint16_t*>(x.data);
  const uint16_t* wr = static_cast<const uint16_t*>(router.data);
  const uint16_t* wg = static_cast<const uint16_t*>(gate_kernels.data);
  const uint16_t* wu = static_cast<const uint16_t*>(up_kernels.data);
  const uint16_t* wd = static_cast<const uint16_t*>(down_kernels.data);
  uint16_t* ys = static_cast<uint16_t*>(outputs[0].data);

  std::vector<double> logit_sums(experts);
  std::vector<float> logits(experts), gate(mlp), up(mlp), y(emb);
  for (int64_t t = 0; t < tokens; ++t) {
    const uint16_t* x_t = xs + t * emb;
    // The route is discontinuous in the bf16 logits: summed in double so that their rounding
    // matches the oracle's even where a sum lies near a bf16 rounding boundary.
    for (int64_t n = 0; n < experts; ++n) logit_sums[n] = 0.0;
    for (int64_t e = 0; e < emb; ++e) {
      const double x_e = kb_bf16_to_f32(x_t[e]);
      for (int64_t n = 0; n < experts; ++n)
        logit_sums[n] += x_e * kb_bf16_to_f32(wr[e * experts + n]);
    }
    for (int64_t n = 0; n < experts; ++n)
      logits[n] = kb_bf16_to_f32(kb_f32_to_bf16((float)logit_sums[n]));
    // lax.top_k: the largest, then the largest of the rest, each the lowest index among equals.
    int64_t first = 0, second = -1;
    for (int64_t n = 1; n < experts; ++n)
      if (logits[n] > logits[first]) first = n;
    for (int64_t n = 0; n < experts; ++n)
      if (n != first && (second < 0 || logits[n] > logits[second])) second = n;
    const float e_second = expf(logits[second] - logits[first]);
    const int64_t routed[2] = {first, second};
    const float weight[2] = {1.0f / (1.0f + e_second), e_second / (1.0f + e_second)};

    for (int64_t e = 0; e < emb; ++e) y[e] = 0.0f;
    for (int r = 0; r < 2; ++r) {
      const int64_t n = routed[r];
      const uint16_t* g_n = wg + n * emb * mlp;
      const uint16_t* u_n = wu + n * emb * mlp;
      const uint16_t* d_n = wd + n * mlp * emb;
      // The i-p-j order reads every weight along its rows.
      for (int64_t j = 0; j < mlp; ++j) gate[j] = up[j] = 0.0f;
      for (int64_t e = 0; e < emb; ++e) {
        const float x_e = kb_bf16_to_f32(x_t[e]);
        for (int64_t j = 0; j < mlp; ++j) {
          gate[j] += x_e * kb_bf16_to_f32(g_n[e * mlp + j]);
          up[j] += x_e * kb_bf16_to_f32(u_n[e * mlp + j]);
        }
      }
      for (int64_t j = 0; j < mlp; ++j) {
        const float hidden = weight[r] * (gate[j] / (1.0f + expf(-gate[j])) * up[j]);
        for (int64_t e = 0; e < emb; ++e) y[e] += hidden * kb_bf16_to_f32(d_n[j * emb + e]);
      }
    }
    for (int64_t e = 0; e < emb; ++e) ys[t * emb + e] = kb_f32_to_bf16(y[e]);
  }
  return 0;
}
