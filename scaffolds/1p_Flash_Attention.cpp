// Naive but correct candidate for 1p_Flash_Attention
// (causal multi-head attention, Llama-3.1-70B config), a starting point.
//
// For each batch b and head h, query position i attends to key positions j <= i (causal):
//   p[i, j] = softmax_j( dot(query[i], key[j]) * D^-0.5 ),  out[i] = sum_j p[i, j] * value[j]
//
// Inputs   query  bf16  (B, H, S, D)
//          key    bf16  (B, H, S, D)
//          value  bf16  (B, H, S, D)
// Output   out    bf16  (B, H, S, D)
// Full size B=4, H=64, S=4096, D=128: compute-bound; masked positions (j > i) need no work.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& query = inputs[0];
  if (query.rank != 4) return 1;

  const int64_t heads = query.shape[0] * query.shape[1];
  const int64_t seq_len = query.shape[2];
  const int64_t head_dim = query.shape[3];
  const float scale = 1.0f / sqrtf((float)head_dim);
  std::vector<float> scores(seq_len);
  std::vector<float> acc(head_dim);

  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t offset = bh * seq_len * head_dim;
    const uint16_t* q = static_cast<const uint16_t*>(inputs[0].data) + offset;
    const uint16_t* k = static_cast<const uint16_t*>(inputs[1].data) + offset;
    const uint16_t* v = static_cast<const uint16_t*>(inputs[2].data) + offset;
    uint16_t* o = static_cast<uint16_t*>(outputs[0].data) + offset;
    for (int64_t i = 0; i < seq_len; ++i) {
      float max_score = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        float dot = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d)
          dot += kb_bf16_to_f32(q[i * head_dim + d]) * kb_bf16_to_f32(k[j * head_dim + d]);
        scores[j] = dot * scale;
        if (scores[j] > max_score) max_score = scores[j];
      }
      float sum = 0.0f;
      for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
      for (int64_t j = 0; j <= i; ++j) {
        const float weight = expf(scores[j] - max_score);
        sum += weight;
        for (int64_t d = 0; d < head_dim; ++d)
          acc[d] += weight * kb_bf16_to_f32(v[j * head_dim + d]);
      }
      for (int64_t d = 0; d < head_dim; ++d) o[i * head_dim + d] = kb_f32_to_bf16(acc[d] / sum);
    }
  }
  return 0;
}
