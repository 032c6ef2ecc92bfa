// 3p_MLA_Attention: a naive, correct starting point.
//
// Multi-head latent attention of DeepSeek-V3-671B (MaxText), for every token t at position
// s = t % S of its sequence:
//   q = (x @ q_down) @ q_up, per head [q_nope (nope) | q_rope (rope)];
//   kv = x @ kv_down = [latent (kvl) | k_rope (rope, one for all heads)];
//   k_nope = latent @ k_up, v = latent @ v_up (per head nope and vd wide);
//   q_rope, k_rope rotated by RoPE at position s: halves x1, x2 -> [x1 c - x2 s, x1 s + x2 c],
//     c, s = cos, sin of s * 10000^(-2i / rope), i < rope / 2, rounded to bf16;
//   per head: p = softmax over keys j <= i (causal) of [q_nope, q_rope] . [k_nope, k_rope] *
//     (nope + rope)^-0.5, attn = p @ v;
//   out = attn (heads concatenated, H * vd) @ o_proj,
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   x        bf16  (B, S, E)              B = batch, S = seq_len, E = emb_dim
//          q_down   bf16  (E, ql)                ql = q_lora_rank
//          q_up     bf16  (ql, H * (nope + rope)) H = num_heads
//          kv_down  bf16  (E, kvl + rope)        kvl = kv_lora_rank
//          k_up     bf16  (kvl, H * nope)
//          v_up     bf16  (kvl, H * vd)
//          o_proj   bf16  (H * vd, E)
// Output   out      bf16  (B, S, E)
// Params   none; read the extents from the tensors: kvl = k_up rows, rope = kv_down width - kvl,
//          H = (q_up width - k_up width) / rope, nope = k_up width / H, vd = v_up width / H.
// Full size B=4, S=2048, E=7168, H=128, ql=1536, kvl=512, nope=128, rope=64, vd=128:
// compute-bound, six projection GEMMs and per-head causal attention.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

// c (rows, n) = a (rows, k) @ w (k, n), a in f32 and w bf16; the i-p-j order reads w along its
// rows.
static void matmul(const float* a, int64_t rows, int64_t k, const uint16_t* w, int64_t n,
                   float* c) {
  for (int64_t i = 0; i < rows; ++i) {
    float* c_row = c + i * n;
    for (int64_t j = 0; j < n; ++j) c_row[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float a_ip = a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c_row[j] += a_ip * kb_bf16_to_f32(w[p * n + j]);
    }
  }
}

// In place on r[0, rope): the half-split rotation with this position's bf16 cos and sin.
static void rotate(float* r, int64_t half, const float* cos_row, const float* sin_row) {
  for (int64_t i = 0; i < half; ++i) {
    const float x1 = r[i], x2 = r[i + half];
    r[i] = x1 * cos_row[i] - x2 * sin_row[i];
    r[i + half] = x1 * sin_row[i] + x2 * cos_row[i];
  }
}

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 7 || num_outputs != 1 || inputs[0].rank != 3) return 1;
  for (int w = 1; w < 7; ++w)
    if (inputs[w].rank != 2) return 1;
  const int64_t batch = inputs[0].shape[0];
  const int64_t seq_len = inputs[0].shape[1];
  const int64_t emb = inputs[0].shape[2];
  const int64_t q_lora = inputs[1].shape[1];
  const int64_t kv_lora = inputs[4].shape[0];
  const int64_t rope = inputs[3].shape[1] - kv_lora;
  if (rope <= 0 || rope % 2 != 0 || (inputs[2].shape[1] - inputs[4].shape[1]) % rope != 0) return 1;
  const int64_t heads = (inputs[2].shape[1] - inputs[4].shape[1]) / rope;
  if (heads <= 0 || inputs[4].shape[1] % heads != 0 || inputs[5].shape[1] % heads != 0) return 1;
  const int64_t nope = inputs[4].shape[1] / heads;
  const int64_t v_dim = inputs[5].shape[1] / heads;
  const int64_t qk = nope + rope;
  const int64_t kv_width = kv_lora + rope;
  if (inputs[1].shape[0] != emb || inputs[2].shape[0] != q_lora || inputs[3].shape[0] != emb ||
      inputs[5].shape[0] != kv_lora || inputs[6].shape[0] != heads * v_dim ||
      inputs[6].shape[1] != emb) {
    return 1;
  }

  const int64_t tokens = batch * seq_len;
  const uint16_t* xs = static_cast<const uint16_t*>(inputs[0].data);
  const uint16_t* q_down = static_cast<const uint16_t*>(inputs[1].data);
  const uint16_t* q_up = static_cast<const uint16_t*>(inputs[2].data);
  const uint16_t* kv_down = static_cast<const uint16_t*>(inputs[3].data);
  const uint16_t* k_up = static_cast<const uint16_t*>(inputs[4].data);
  const uint16_t* v_up = static_cast<const uint16_t*>(inputs[5].data);
  const uint16_t* o_proj = static_cast<const uint16_t*>(inputs[6].data);
  uint16_t* ys = static_cast<uint16_t*>(outputs[0].data);

  // The projections, every token at once, in f32. k_up and v_up read the latent part of kv, so it
  // is copied out densely first.
  std::vector<float> x(tokens * emb);
  for (int64_t i = 0; i < tokens * emb; ++i) x[i] = kb_bf16_to_f32(xs[i]);
  std::vector<float> cq(tokens * q_lora), q(tokens * heads * qk), kv(tokens * kv_width);
  matmul(x.data(), tokens, emb, q_down, q_lora, cq.data());
  matmul(cq.data(), tokens, q_lora, q_up, heads * qk, q.data());
  matmul(x.data(), tokens, emb, kv_down, kv_width, kv.data());
  std::vector<float> latent(tokens * kv_lora);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t p = 0; p < kv_lora; ++p) latent[t * kv_lora + p] = kv[t * kv_width + p];
  std::vector<float> k_nope(tokens * heads * nope), v(tokens * heads * v_dim);
  matmul(latent.data(), tokens, kv_lora, k_up, heads * nope, k_nope.data());
  matmul(latent.data(), tokens, kv_lora, v_up, heads * v_dim, v.data());

  // RoPE tables per position, rounded to bf16 as the original casts them to x.dtype.
  const int64_t half = rope / 2;
  std::vector<float> cos_table(seq_len * half), sin_table(seq_len * half);
  for (int64_t pos = 0; pos < seq_len; ++pos)
    for (int64_t i = 0; i < half; ++i) {
      const double freq = 1.0 / pow(10000.0, (double)(2 * i) / (double)rope);
      const double angle = (double)pos * freq;
      cos_table[pos * half + i] = kb_bf16_to_f32(kb_f32_to_bf16((float)cos(angle)));
      sin_table[pos * half + i] = kb_bf16_to_f32(kb_f32_to_bf16((float)sin(angle)));
    }
  for (int64_t t = 0; t < tokens; ++t) {
    const int64_t pos = t % seq_len;
    const float* c = &cos_table[pos * half];
    const float* s = &sin_table[pos * half];
    for (int64_t h = 0; h < heads; ++h) rotate(&q[(t * heads + h) * qk + nope], half, c, s);
    rotate(&kv[t * kv_width + kv_lora], half, c, s);
  }

  // Causal attention per (batch, head, query): keys j > i get exp(-1e9 - max) = 0, so only j <= i
  // are visited. The rope part of every key is the token's shared k_rope.
  const float scale = 1.0f / sqrtf((float)qk);
  std::vector<float> attn(tokens * heads * v_dim), scores(seq_len);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < seq_len; ++i) {
        const float* qi = &q[((b * seq_len + i) * heads + h) * qk];
        float max_score = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          const int64_t tj = b * seq_len + j;
          const float* kj_nope = &k_nope[(tj * heads + h) * nope];
          const float* kj_rope = &kv[tj * kv_width + kv_lora];
          float dot = 0.0f;
          for (int64_t d = 0; d < nope; ++d) dot += qi[d] * kj_nope[d];
          for (int64_t d = 0; d < rope; ++d) dot += qi[nope + d] * kj_rope[d];
          scores[j] = dot * scale;
          if (scores[j] > max_score) max_score = scores[j];
        }
        float sum = 0.0f;
        float* o = &attn[((b * seq_len + i) * heads + h) * v_dim];
        for (int64_t d = 0; d < v_dim; ++d) o[d] = 0.0f;
        for (int64_t j = 0; j <= i; ++j) {
          const float weight = expf(scores[j] - max_score);
          sum += weight;
          const float* vj = &v[((b * seq_len + j) * heads + h) * v_dim];
          for (int64_t d = 0; d < v_dim; ++d) o[d] += weight * vj[d];
        }
        for (int64_t d = 0; d < v_dim; ++d) o[d] /= sum;
      }

  std::vector<float> y(tokens * emb);
  matmul(attn.data(), tokens, heads * v_dim, o_proj, emb, y.data());
  for (int64_t i = 0; i < tokens * emb; ++i) ys[i] = kb_f32_to_bf16(y[i]);
  return 0;
}
