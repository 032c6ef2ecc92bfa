// 6p_Paged_Attention: a naive, correct starting point.
//
// Decode attention over a paged KV cache with GQA (Llama-3.1-70B serving, MaxText): for each
// sequence s, its one query token q = queries[clamp(cu_q_lens[s], 0, N - 1)]; its cache is the
// pages page_indices[s, :], token j of it at page page_indices[s, j / P], slot j % P; query head h
// reads KV head h / G, G = H_q / H_kv; with L = clamp(kv_lens[s], 0, S_max):
//   out[s, h] = sum_{j < L} softmax_j(q[h] . k[j] * D^-0.5) v[j],
// and where L = 0 (every key masked alike) the mean of all S_max values. Accumulated in f32 (or
// wider), rounded to bf16 once at the end.
//
// Inputs   queries       bf16  (N, H_q, D)                  N = num_seqs, D = head_dim
//          k_pages       bf16  (num_pages, P, H_kv, D)      P = page_size
//          v_pages       bf16  (num_pages, P, H_kv, D)
//          kv_lens       i32   (N)                          keys per sequence
//          page_indices  i32   (N, pages_per_seq)           S_max = pages_per_seq * P
//          cu_q_lens     i32   (N + 1)                      the query row of sequence s
// Output   out           bf16  (N, H_q, D)
// Params   none; read every extent from the tensors.
// Full size N=64, H_q=64, H_kv=8, D=128, P=16, pages_per_seq=256 (S_max=4096): bandwidth-bound,
// every K/V byte read once for G=8 query heads; the page table is a shuffled permutation.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 6 || num_outputs != 1) return 1;
  const kb_tensor& queries = inputs[0];
  const kb_tensor& k_pages = inputs[1];
  const kb_tensor& v_pages = inputs[2];
  const kb_tensor& kv_lens = inputs[3];
  const kb_tensor& page_indices = inputs[4];
  const kb_tensor& cu_q_lens = inputs[5];
  if (queries.rank != 3 || k_pages.rank != 4 || v_pages.rank != 4 || page_indices.rank != 2)
    return 1;
  const int64_t num_seqs = queries.shape[0];
  const int64_t q_heads = queries.shape[1];
  const int64_t head_dim = queries.shape[2];
  const int64_t num_pages = k_pages.shape[0];
  const int64_t page_size = k_pages.shape[1];
  const int64_t kv_heads = k_pages.shape[2];
  const int64_t pages_per_seq = page_indices.shape[1];
  if (kv_heads <= 0 || q_heads % kv_heads != 0 || k_pages.shape[3] != head_dim ||
      kv_lens.shape[0] != num_seqs || page_indices.shape[0] != num_seqs ||
      cu_q_lens.shape[0] != num_seqs + 1) {
    return 1;
  }
  for (int32_t w = 1; w < 3; ++w)
    for (int32_t d = 0; d < 4; ++d)
      if (inputs[w].shape[d] != k_pages.shape[d]) return 1;

  const int64_t group = q_heads / kv_heads;
  const int64_t capacity = pages_per_seq * page_size;
  const uint16_t* qs = static_cast<const uint16_t*>(queries.data);
  const uint16_t* ks = static_cast<const uint16_t*>(k_pages.data);
  const uint16_t* vs = static_cast<const uint16_t*>(v_pages.data);
  const int32_t* lens = static_cast<const int32_t*>(kv_lens.data);
  const int32_t* table = static_cast<const int32_t*>(page_indices.data);
  const int32_t* cu = static_cast<const int32_t*>(cu_q_lens.data);
  uint16_t* ys = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < num_seqs * pages_per_seq; ++i)
    if (table[i] < 0 || table[i] >= num_pages) return 1;

  const float scale = 1.0f / sqrtf((float)head_dim);
  std::vector<float> scores(capacity), acc(head_dim);
  for (int64_t s = 0; s < num_seqs; ++s) {
    // dynamic_slice clamps the query row into the array; the length mask clamps to the cache.
    int64_t row = cu[s];
    if (row < 0) row = 0;
    if (row > num_seqs - 1) row = num_seqs - 1;
    int64_t visible = lens[s];
    if (visible < 0) visible = 0;
    if (visible > capacity) visible = capacity;
    // Masked keys weigh exp(-1e30 - max) = 0 beside any visible key; with none visible all S_max
    // scores are the same -1e30 and every key weighs 1.
    const int64_t keys = visible > 0 ? visible : capacity;
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t kv_head = h / group;
      const uint16_t* q = qs + (row * q_heads + h) * head_dim;
      float max_score = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        const int64_t page = table[s * pages_per_seq + j / page_size];
        const uint16_t* k =
            ks + ((page * page_size + j % page_size) * kv_heads + kv_head) * head_dim;
        float dot = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) dot += kb_bf16_to_f32(q[d]) * kb_bf16_to_f32(k[d]);
        scores[j] = visible > 0 ? dot * scale : 0.0f;
        if (scores[j] > max_score) max_score = scores[j];
      }
      float sum = 0.0f;
      for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
      for (int64_t j = 0; j < keys; ++j) {
        const int64_t page = table[s * pages_per_seq + j / page_size];
        const uint16_t* v =
            vs + ((page * page_size + j % page_size) * kv_heads + kv_head) * head_dim;
        const float weight = expf(scores[j] - max_score);
        sum += weight;
        for (int64_t d = 0; d < head_dim; ++d) acc[d] += weight * kb_bf16_to_f32(v[d]);
      }
      uint16_t* o = ys + (s * q_heads + h) * head_dim;
      for (int64_t d = 0; d < head_dim; ++d) o[d] = kb_f32_to_bf16(acc[d] / sum);
    }
  }
  return 0;
}
