// 15p_RetNet_Retention: a naive, correct starting point.
//
// Multi-scale retention in its parallel form, RetNet-6.7B (Sun et al. 2023). Head h (of H) decays
// at gamma_h = 1 - 2^(-5-h). For each batch b and head h, query position i weighs key positions
// j <= i (causal; the decay is 0 above the diagonal):
//   w[i, j] = dot(query[b, h, i], key[b, h, j]) * gamma_h^(i-j),
//   out[b, h, i] = sum_j w[i, j] * value[b, h, j] / max(sum_j |w[i, j]|, 1),
// accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   query  bf16  (B, H, S, D)   B = batch, H = num_heads, S = seq_len, D = head_dim
//          key    bf16  (B, H, S, D)
//          value  bf16  (B, H, S, D)
// Output   out    bf16  (B, H, S, D)
// Params   none; read B, H, S, D from the tensors.
// Full size B=4, H=16, S=4096, D=256: compute-bound; masked positions (j > i) need no work.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& query = inputs[0];
  if (query.rank != 4) return 1;
  const int64_t batch = query.shape[0];
  const int64_t heads = query.shape[1];
  const int64_t seq_len = query.shape[2];
  const int64_t head_dim = query.shape[3];
  for (int i = 1; i < 3; ++i) {
    const kb_tensor& t = inputs[i];
    if (t.rank != 4 || t.shape[0] != batch || t.shape[1] != heads || t.shape[2] != seq_len ||
        t.shape[3] != head_dim) {
      return 1;
    }
  }

  const int64_t head_size = seq_len * head_dim;
  std::vector<float> decay(seq_len);
  std::vector<float> scores(seq_len);
  std::vector<float> acc(head_dim);

  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      // decay[t] = gamma_h^t, in double: head 15's gamma is 1 - 2^-20.
      const double gamma = 1.0 - exp2(-5.0 - (double)h);
      for (int64_t t = 0; t < seq_len; ++t) decay[t] = (float)pow(gamma, (double)t);
      const int64_t offset = (b * heads + h) * head_size;
      const uint16_t* q = static_cast<const uint16_t*>(query.data) + offset;
      const uint16_t* k = static_cast<const uint16_t*>(inputs[1].data) + offset;
      const uint16_t* v = static_cast<const uint16_t*>(inputs[2].data) + offset;
      uint16_t* o = static_cast<uint16_t*>(outputs[0].data) + offset;
      for (int64_t i = 0; i < seq_len; ++i) {
        float abs_sum = 0.0f;
        for (int64_t j = 0; j <= i; ++j) {
          float dot = 0.0f;
          for (int64_t d = 0; d < head_dim; ++d)
            dot += kb_bf16_to_f32(q[i * head_dim + d]) * kb_bf16_to_f32(k[j * head_dim + d]);
          scores[j] = dot * decay[i - j];
          abs_sum += fabsf(scores[j]);
        }
        // The norm is floored at 1, so short or weak rows are not scaled up.
        const float norm = abs_sum > 1.0f ? abs_sum : 1.0f;
        for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < head_dim; ++d)
            acc[d] += scores[j] * kb_bf16_to_f32(v[j * head_dim + d]);
        for (int64_t d = 0; d < head_dim; ++d) o[i * head_dim + d] = kb_f32_to_bf16(acc[d] / norm);
      }
    }
  }
  return 0;
}
