// 16p_Mamba2_SSD: a naive, correct starting point.
//
// The state-space-duality (quadratic) form of Mamba-2's core (Mamba-2-2.7B), per (batch, head)
// with C = query, B = key, x = value:
//   c[i] = sum_{t <= i} log(sigmoid(A_log[t]) + 1e-8);
//   scores[i, j] = (C[i] . B[j]) * exp(c[i] - c[j]) for j <= i, 0 for j > i;
//   r[i] = sum_j scores[i, j];  out[i] = sum_j scores[i, j] x[j] / max(|r[i]|, 1),
// accumulated in f32 (or wider), rounded to bf16 once at the end. (The original also sets r = 1
// where |r| < 1e-6, which max(|r|, 1) makes no difference to.)
//
// Inputs   query (C)  bf16  (B, H, S, D)   B = batch, H = num_heads, S = seq_len, D = head_dim
//          key (B)    bf16  (B, H, S, D)
//          value (x)  bf16  (B, H, S, D)
//          A_log      f32   (B, H, S)      one decay per (batch, head, position)
// Output   out        bf16  (B, H, S, D)
// Params   none; read B, H, S, D from the tensors.
// Full size B=4, H=64, S=4096, D=64: compute-bound and causal-quadratic; the scores above the
// diagonal are 0 and need no work.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 4 || num_outputs != 1) return 1;
  const kb_tensor& query = inputs[0];
  const kb_tensor& a_log = inputs[3];
  if (query.rank != 4 || a_log.rank != 3) return 1;
  for (int32_t w = 1; w < 3; ++w)
    for (int32_t d = 0; d < 4; ++d)
      if (inputs[w].shape[d] != query.shape[d]) return 1;
  for (int32_t d = 0; d < 3; ++d)
    if (a_log.shape[d] != query.shape[d]) return 1;

  const int64_t heads = query.shape[0] * query.shape[1];
  const int64_t seq_len = query.shape[2];
  const int64_t head_dim = query.shape[3];
  std::vector<float> log_decay_sum(seq_len), scores(seq_len), acc(head_dim);

  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t offset = bh * seq_len * head_dim;
    const uint16_t* q = static_cast<const uint16_t*>(inputs[0].data) + offset;
    const uint16_t* k = static_cast<const uint16_t*>(inputs[1].data) + offset;
    const uint16_t* v = static_cast<const uint16_t*>(inputs[2].data) + offset;
    const float* a = static_cast<const float*>(a_log.data) + bh * seq_len;
    uint16_t* o = static_cast<uint16_t*>(outputs[0].data) + offset;

    float running = 0.0f;
    for (int64_t i = 0; i < seq_len; ++i) {
      running += logf(1.0f / (1.0f + expf(-a[i])) + 1e-8f);
      log_decay_sum[i] = running;
    }
    for (int64_t i = 0; i < seq_len; ++i) {
      float row_sum = 0.0f;
      for (int64_t j = 0; j <= i; ++j) {
        float dot = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d)
          dot += kb_bf16_to_f32(q[i * head_dim + d]) * kb_bf16_to_f32(k[j * head_dim + d]);
        scores[j] = dot * expf(log_decay_sum[i] - log_decay_sum[j]);
        row_sum += scores[j];
      }
      // The signed sum: weights of both signs cancel, and a row whose sum is under 1 in magnitude
      // is not scaled down at all.
      const float norm = fabsf(row_sum) > 1.0f ? fabsf(row_sum) : 1.0f;
      for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t d = 0; d < head_dim; ++d)
          acc[d] += scores[j] * kb_bf16_to_f32(v[j * head_dim + d]);
      for (int64_t d = 0; d < head_dim; ++d) o[i * head_dim + d] = kb_f32_to_bf16(acc[d] / norm);
    }
  }
  return 0;
}
