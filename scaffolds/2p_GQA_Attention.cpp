// 2p_GQA_Attention: a naive, correct starting point.
//
// Grouped-query causal attention of Llama-3.1-405B (MaxText) in the (B, S, H, D) layout. Query
// head h reads kv head h / G, G = Hq / Hkv. For each batch b and query head h, query position i
// attends to key positions j <= i (causal):
//   p[i, j] = softmax_j( dot(query[b, i, h], key[b, j, h / G]) * D^-0.5 ),
//   out[b, i, h] = sum_j p[i, j] * value[b, j, h / G],
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   query  bf16  (B, S, Hq, D)    B = batch, S = seq_len, Hq = num_query_heads
//          key    bf16  (B, S, Hkv, D)   Hkv = num_kv_heads, Hq a multiple of Hkv
//          value  bf16  (B, S, Hkv, D)
// Output   out    bf16  (B, S, Hq, D)
// Params   none; read B, S, Hq, Hkv, D from the tensors.
// Full size B=4, S=4096, Hq=128, Hkv=8, D=128: compute-bound; masked positions (j > i) need no
//           work, and each kv head serves G = 16 query heads.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& query = inputs[0];
  const kb_tensor& key = inputs[1];
  const kb_tensor& value = inputs[2];
  if (query.rank != 4 || key.rank != 4 || value.rank != 4) return 1;
  const int64_t batch = query.shape[0];
  const int64_t seq_len = query.shape[1];
  const int64_t q_heads = query.shape[2];
  const int64_t kv_heads = key.shape[2];
  const int64_t head_dim = query.shape[3];
  if (kv_heads <= 0 || q_heads % kv_heads != 0 || key.shape[0] != batch ||
      key.shape[1] != seq_len || key.shape[3] != head_dim || value.shape[0] != batch ||
      value.shape[1] != seq_len || value.shape[2] != kv_heads || value.shape[3] != head_dim) {
    return 1;
  }

  const int64_t group = q_heads / kv_heads;
  const float scale = 1.0f / sqrtf((float)head_dim);
  const uint16_t* qs = static_cast<const uint16_t*>(query.data);
  const uint16_t* ks = static_cast<const uint16_t*>(key.data);
  const uint16_t* vs = static_cast<const uint16_t*>(value.data);
  uint16_t* os = static_cast<uint16_t*>(outputs[0].data);
  std::vector<float> scores(seq_len);
  std::vector<float> acc(head_dim);

  // In (B, S, H, D) a head's rows are H * D elements apart: row s of head h of batch b starts at
  // ((b * S + s) * H + h) * D. The where(mask, s, -1e9) of the original weighs masked keys
  // exp(-1e9 - max) = 0, so they are skipped.
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv_h = h / group;
      for (int64_t i = 0; i < seq_len; ++i) {
        const uint16_t* q = qs + ((b * seq_len + i) * q_heads + h) * head_dim;
        float max_score = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          const uint16_t* k = ks + ((b * seq_len + j) * kv_heads + kv_h) * head_dim;
          float dot = 0.0f;
          for (int64_t d = 0; d < head_dim; ++d) dot += kb_bf16_to_f32(q[d]) * kb_bf16_to_f32(k[d]);
          scores[j] = dot * scale;
          if (scores[j] > max_score) max_score = scores[j];
        }
        float sum = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
        for (int64_t j = 0; j <= i; ++j) {
          const uint16_t* v = vs + ((b * seq_len + j) * kv_heads + kv_h) * head_dim;
          const float weight = expf(scores[j] - max_score);
          sum += weight;
          for (int64_t d = 0; d < head_dim; ++d) acc[d] += weight * kb_bf16_to_f32(v[d]);
        }
        uint16_t* o = os + ((b * seq_len + i) * q_heads + h) * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) o[d] = kb_f32_to_bf16(acc[d] / sum);
      }
    }
  }
  return 0;
}
