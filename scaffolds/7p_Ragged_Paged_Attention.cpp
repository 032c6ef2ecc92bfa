// 7p_Ragged_Paged_Attention: a naive, correct starting point.
//
// One mixed prefill + decode serving step of Llama-3.1-70B over a paged KV cache (JAX's
// ref_ragged_paged_attention): queries packs T tokens; sequence i < num_seqs owns tokens
// [cu_q_lens[i], cu_q_lens[i + 1]) (q_len of them) and kv_len = kv_lens[i] cached keys; token j of
// its cache is at page page_indices[i, j / P], slot j % P, where combined head 2 h holds KV head
// h's key and 2 h + 1 its value; query head h reads KV head h / G, G = H_q / H_kv. Its query t
// (0-based in the sequence) sees keys j < L = clamp(kv_len - q_len + 1 + t, 0, S_max):
//   out[token, h] = sum_{j < L} softmax_j(q[h] . k[j] * D^-0.5) v[j],
// and where L = 0 (every key masked alike) the mean of all S_max values. Rows of tokens no active
// sequence owns are zero. Accumulated in f32 (or wider), rounded to bf16 once at the end.
//
// Inputs   queries       bf16  (T, H_q, D)                  T = max_num_batched_tokens
//          kv_pages      bf16  (num_pages, P, 2 H_kv, D)    K and V interleaved per KV head
//          kv_lens       i32   (max_seqs)                   cached keys per sequence
//          page_indices  i32   (max_seqs, pages_per_seq)    S_max = pages_per_seq * P
//          cu_q_lens     i32   (max_seqs + 1)               cumulative query lengths
//          num_seqs      i32   (1)                          active sequences
// Output   out           bf16  (T, H_q, D)
// Params   none; read every extent from the tensors.
// Full size T=4096, 64 slots, H_q=64, H_kv=8, D=128, P=16, pages_per_seq=256: 48 one-token
// decodes and eight ~512-token prefill chunks with up to 4095 keys; the chunks are compute-bound
// (causal inside the chunk), the decodes bandwidth-bound; the page table is shuffled.
#include <math.h>

#include <vector>

#include "kbench/kernel.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  (void)cfg;
  if (num_inputs != 6 || num_outputs != 1) return 1;
  const kb_tensor& queries = inputs[0];
  const kb_tensor& kv_pages = inputs[1];
  const kb_tensor& kv_lens = inputs[2];
  const kb_tensor& page_indices = inputs[3];
  const kb_tensor& cu_q_lens = inputs[4];
  if (queries.rank != 3 || kv_pages.rank != 4 || page_indices.rank != 2 ||
      kv_pages.shape[2] % 2 != 0)
    return 1;
  const int64_t max_tokens = queries.shape[0];
  const int64_t q_heads = queries.shape[1];
  const int64_t head_dim = queries.shape[2];
  const int64_t num_pages = kv_pages.shape[0];
  const int64_t page_size = kv_pages.shape[1];
  const int64_t kv_heads = kv_pages.shape[2] / 2;
  const int64_t max_seqs = page_indices.shape[0];
  const int64_t pages_per_seq = page_indices.shape[1];
  if (kv_heads <= 0 || q_heads % kv_heads != 0 || kv_pages.shape[3] != head_dim ||
      kv_lens.shape[0] != max_seqs || cu_q_lens.shape[0] != max_seqs + 1) {
    return 1;
  }
  const int64_t num_seqs = *static_cast<const int32_t*>(inputs[5].data);
  const int32_t* lens = static_cast<const int32_t*>(kv_lens.data);
  const int32_t* table = static_cast<const int32_t*>(page_indices.data);
  const int32_t* cu = static_cast<const int32_t*>(cu_q_lens.data);
  if (num_seqs < 0 || num_seqs > max_seqs || cu[0] < 0 || cu[num_seqs] > max_tokens) return 1;
  for (int64_t i = 0; i < num_seqs; ++i)
    if (cu[i + 1] < cu[i]) return 1;
  for (int64_t i = 0; i < num_seqs * pages_per_seq; ++i)
    if (table[i] < 0 || table[i] >= num_pages) return 1;

  const int64_t group = q_heads / kv_heads;
  const int64_t capacity = pages_per_seq * page_size;
  const int64_t token_elems = 2 * kv_heads * head_dim;
  const uint16_t* qs = static_cast<const uint16_t*>(queries.data);
  const uint16_t* kvs = static_cast<const uint16_t*>(kv_pages.data);
  uint16_t* ys = static_cast<uint16_t*>(outputs[0].data);

  // The original scatters into a zeros buffer: tokens no sequence owns stay 0.
  for (int64_t i = 0; i < max_tokens * q_heads * head_dim; ++i) ys[i] = 0;

  const float scale = 1.0f / sqrtf((float)head_dim);
  std::vector<float> scores(capacity), acc(head_dim);
  for (int64_t i = 0; i < num_seqs; ++i) {
    const int64_t q_start = cu[i];
    const int64_t q_len = cu[i + 1] - q_start;
    const int64_t kv_len = lens[i];
    // Token j of this sequence's cache: its key (c = 0) or value (c = 1) of KV head h.
    const auto at = [&](int64_t j, int64_t h, int64_t c) {
      const int64_t page = table[i * pages_per_seq + j / page_size];
      return kvs + (page * page_size + j % page_size) * token_elems + (2 * h + c) * head_dim;
    };
    for (int64_t t = 0; t < q_len; ++t) {
      // The mask (kv_len - q_len + t < j) | (j >= kv_len) leaves keys j < kv_len - q_len + 1 + t.
      int64_t visible = kv_len - q_len + 1 + t;
      if (visible < 0) visible = 0;
      if (visible > capacity) visible = capacity;
      // Masked keys weigh 0 beside any visible key; with none visible all S_max scores carry the
      // same mask value and every key weighs 1.
      const int64_t keys = visible > 0 ? visible : capacity;
      for (int64_t h = 0; h < q_heads; ++h) {
        const int64_t kv_head = h / group;
        const uint16_t* q = qs + ((q_start + t) * q_heads + h) * head_dim;
        float max_score = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          const uint16_t* k = at(j, kv_head, 0);
          float dot = 0.0f;
          for (int64_t d = 0; d < head_dim; ++d) dot += kb_bf16_to_f32(q[d]) * kb_bf16_to_f32(k[d]);
          scores[j] = visible > 0 ? dot * scale : 0.0f;
          if (scores[j] > max_score) max_score = scores[j];
        }
        float sum = 0.0f;
        for (int64_t d = 0; d < head_dim; ++d) acc[d] = 0.0f;
        for (int64_t j = 0; j < keys; ++j) {
          const uint16_t* v = at(j, kv_head, 1);
          const float weight = expf(scores[j] - max_score);
          sum += weight;
          for (int64_t d = 0; d < head_dim; ++d) acc[d] += weight * kb_bf16_to_f32(v[d]);
        }
        uint16_t* o = ys + ((q_start + t) * q_heads + h) * head_dim;
        for (int64_t d = 0; d < head_dim; ++d) o[d] = kb_f32_to_bf16(acc[d] / sum);
      }
    }
  }
  return 0;
}
