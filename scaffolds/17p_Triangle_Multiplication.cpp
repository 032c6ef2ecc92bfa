// 17p_Triangle_Multiplication: a naive, correct starting point.
//
// AlphaFold2's outgoing triangle multiplicative update of the pair representation (tokamax):
//   act = pair_act * mask;
//   left  = (act @ left_proj_w)  * sigmoid(act @ left_gate_w);
//   right = (act @ right_proj_w) * sigmoid(act @ right_gate_w);
//   r[i, j, c] = sum_k left[i, k, c] * right[j, k, c];
//   r = r / sqrt(mean_c(r^2) + 1e-6) * center_scale   (RMS only, no mean subtracted);
//   out = (r @ out_proj_w) * sigmoid(pair_act @ out_gate_w)   (the gate reads the unmasked
//   pair_act),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   pair_act      bf16  (N, N, C)   N = residues, C = channels
//          mask          bf16  (N, N, 1)   0 or 1 per pair
//          left_proj_w   bf16  (C, C)      every weight (in, out): rows @ w
//          right_proj_w  bf16  (C, C)
//          left_gate_w   bf16  (C, C)
//          right_gate_w  bf16  (C, C)
//          center_scale  bf16  (C)
//          out_proj_w    bf16  (C, C)
//          out_gate_w    bf16  (C, C)
// Output   out           bf16  (N, N, C)
// Params   none; read N and C from the tensors.
// Full size N=1536, C=128: compute-bound; six (N^2, C) x (C, C) projections around the
// contraction, one (N, N) x (N, N) product per channel (2/3 of the FLOPs).
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

static float sigmoid(float v) {
  return 1.0f / (1.0f + expf(-v));
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 9 || num_outputs != 1) return 1;
  const kb_tensor& pair_act = inputs[0];
  const kb_tensor& mask = inputs[1];
  if (pair_act.rank != 3 || pair_act.shape[1] != pair_act.shape[0] || mask.rank != 3 ||
      mask.shape[0] != pair_act.shape[0] || mask.shape[1] != pair_act.shape[0] ||
      mask.shape[2] != 1 || inputs[6].rank != 1 || inputs[6].shape[0] != pair_act.shape[2]) {
    return 1;
  }
  const int64_t n = pair_act.shape[0];
  const int64_t c = pair_act.shape[2];
  for (int w : {2, 3, 4, 5, 7, 8})
    if (inputs[w].rank != 2 || inputs[w].shape[0] != c || inputs[w].shape[1] != c) return 1;

  const int64_t positions = n * n;
  const uint16_t* pair = static_cast<const uint16_t*>(pair_act.data);
  const uint16_t* ms = static_cast<const uint16_t*>(mask.data);
  const uint16_t* w_left = static_cast<const uint16_t*>(inputs[2].data);
  const uint16_t* w_right = static_cast<const uint16_t*>(inputs[3].data);
  const uint16_t* w_left_gate = static_cast<const uint16_t*>(inputs[4].data);
  const uint16_t* w_right_gate = static_cast<const uint16_t*>(inputs[5].data);
  const uint16_t* center_scale = static_cast<const uint16_t*>(inputs[6].data);
  const uint16_t* w_out = static_cast<const uint16_t*>(inputs[7].data);
  const uint16_t* w_out_gate = static_cast<const uint16_t*>(inputs[8].data);
  uint16_t* ys = static_cast<uint16_t*>(outputs[0].data);

  // left and right, (N * N, C) in f32, one position at a time; the i-p-j order reads the weights
  // along their rows.
  std::vector<float> left(positions * c), right(positions * c);
  std::vector<float> lp(c), rp(c), lg(c), rg(c);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t d = 0; d < c; ++d) lp[d] = rp[d] = lg[d] = rg[d] = 0.0f;
    const float m = kb_bf16_to_f32(ms[p]);
    for (int64_t k = 0; k < c; ++k) {
      const float a = kb_bf16_to_f32(pair[p * c + k]) * m;
      for (int64_t d = 0; d < c; ++d) {
        lp[d] += a * kb_bf16_to_f32(w_left[k * c + d]);
        rp[d] += a * kb_bf16_to_f32(w_right[k * c + d]);
        lg[d] += a * kb_bf16_to_f32(w_left_gate[k * c + d]);
        rg[d] += a * kb_bf16_to_f32(w_right_gate[k * c + d]);
      }
    }
    for (int64_t d = 0; d < c; ++d) {
      left[p * c + d] = lp[d] * sigmoid(lg[d]);
      right[p * c + d] = rp[d] * sigmoid(rg[d]);
    }
  }

  // Per output pair (i, j): the contraction over k with the channels innermost (contiguous in
  // both rows), its RMS norm, then the output projection and gate.
  std::vector<float> r(c), o(c), g(c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t d = 0; d < c; ++d) r[d] = 0.0f;
      for (int64_t k = 0; k < n; ++k) {
        const float* l_ik = &left[(i * n + k) * c];
        const float* r_jk = &right[(j * n + k) * c];
        for (int64_t d = 0; d < c; ++d) r[d] += l_ik[d] * r_jk[d];
      }
      float sum_sq = 0.0f;
      for (int64_t d = 0; d < c; ++d) sum_sq += r[d] * r[d];
      const float inv_rms = 1.0f / sqrtf(sum_sq / (float)c + 1e-6f);
      for (int64_t d = 0; d < c; ++d) r[d] *= inv_rms * kb_bf16_to_f32(center_scale[d]);

      const int64_t p = i * n + j;
      for (int64_t e = 0; e < c; ++e) o[e] = g[e] = 0.0f;
      for (int64_t d = 0; d < c; ++d) {
        const float pair_d = kb_bf16_to_f32(pair[p * c + d]);
        for (int64_t e = 0; e < c; ++e) {
          o[e] += r[d] * kb_bf16_to_f32(w_out[d * c + e]);
          g[e] += pair_d * kb_bf16_to_f32(w_out_gate[d * c + e]);
        }
      }
      for (int64_t e = 0; e < c; ++e) ys[p * c + e] = kb_f32_to_bf16(o[e] * sigmoid(g[e]));
    }
  return 0;
}
