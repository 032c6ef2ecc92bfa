// 4p_Sparse_Attention: a naive, correct starting point.
//
// The dense causal grouped-query attention that MaxText's splash attention kernel computes, as
// Llama-3.1-70B runs it. Query head h reads kv head h / G, G = Hq / Hkv, and q arrives pre-scaled
// by D^-0.5, so the scores get no scale. For each batch b and query head h, query position i
// attends to key positions j <= i (causal):
//   p[i, j] = softmax_j( dot(q[b, h, i], k[b, h / G, j]) ),
//   out[b, h, i] = sum_j p[i, j] * v[b, h / G, j],
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   q    bf16  (B, Hq, S, D)    B = batch, Hq = num_query_heads, S = seq_len
//          k    bf16  (B, Hkv, S, D)   Hkv = num_kv_heads, Hq a multiple of Hkv
//          v    bf16  (B, Hkv, S, D)   values ~0.02, so the outputs are small too
// Output   out  bf16  (B, Hq, S, D)
// Params   none; read B, Hq, Hkv, S, D from the tensors.
// Full size B=4, Hq=64, Hkv=8, S=4096, D=128: compute-bound; masked positions (j > i) need no
//           work, and each kv head serves G = 8 query heads.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& q = inputs[0];
  const kb_tensor& k = inputs[1];
  const kb_tensor& v = inputs[2];
  if (q.rank != 4 || k.rank != 4 || v.rank != 4) return 1;
  const int64_t batch = q.shape[0];
  const int64_t q_heads = q.shape[1];
  const int64_t kv_heads = k.shape[1];
  const int64_t seq_len = q.shape[2];
  const int64_t head_dim = q.shape[3];
  if (kv_heads <= 0 || q_heads % kv_heads != 0 || k.shape[0] != batch || k.shape[2] != seq_len ||
      k.shape[3] != head_dim || v.shape[0] != batch || v.shape[1] != kv_heads ||
      v.shape[2] != seq_len || v.shape[3] != head_dim) {
    return 1;
  }

  const int64_t group = q_heads / kv_heads;
  const int64_t head_size = seq_len * head_dim;
  std::vector<float> scores(seq_len);
  std::vector<float> acc(head_dim);

  // Each head is a dense S x D matrix. The where(mask, s, -1e30) of the original weighs masked
  // keys exp(-1e30 - max) = 0, so they are skipped.
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv_h = h / group;
      const uint16_t* qh = static_cast<const uint16_t*>(q.data) + (b * q_heads + h) * head_size;
      const uint16_t* kh = static_cast<const uint16_t*>(k.data) + (b * kv_heads + kv_h) * head_size;
      const uint16_t* vh = static_cast<const uint16_t*>(v.data) + (b * kv_heads + kv_h) * head_size;
      uint16_t* oh = static_cast<uint16_t*>(outputs[0].data) + (b * q_heads + h) * head_size;
      for (int64_t i = 0; i < seq_len; ++i) {
        float max_score = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          float dot = 0.0f;
          for (int64_t d = 0; d < head_dim; ++d)
            dot += kb_bf16_to_f32(qh[i * head_dim + d]) * kb_bf16_to_f32(kh[j * head_dim + d]);
          scores[j] = dot;
          if (dot > max_score) max_score = dot;
        }
        float sum = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
        for (int64_t j = 0; j <= i; ++j) {
          const float weight = expf(scores[j] - max_score);
          sum += weight;
          for (int64_t d = 0; d < head_dim; ++d)
            acc[d] += weight * kb_bf16_to_f32(vh[j * head_dim + d]);
        }
        for (int64_t d = 0; d < head_dim; ++d) oh[i * head_dim + d] = kb_f32_to_bf16(acc[d] / sum);
      }
    }
  }
  return 0;
}
