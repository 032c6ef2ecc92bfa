// 7p_Ragged_Paged_Attention expert: one mixed prefill + decode serving step over a paged KV cache.
// Packed ragged queries (T, Hq, D) bf16; sequence i owns tokens [cu_q_lens[i], cu_q_lens[i+1]) and
// kv_lens[i] cached keys in the pages page_indices[i] of kv_pages (pages, P, 2 Hkv, D), K of kv
// head h at slot 2h and its V at 2h + 1; query t of a sequence sees key j iff
// j <= kv_len - q_len + t and j < kv_len; scores scaled by D^-0.5; output bf16 (T, Hq, D), rows of
// tokens no active sequence owns zero.
//
// Everything runs on the shared flash-attention driver (include/flash_attention.h: online softmax
// over BQ x BK score blocks in L1, key blocks no row sees skipped, AMX / AVX-512 / AVX2 / scalar
// paths chosen at run time), with one kv head per (sequence, kv head):
//   - The pages are read in place: the driver's K/V rows are paged (row j is row j % P of page
//     page_indices[i][j / P]), so the gather happens inside the f32 widening and packing of K and V
//     that the driver does anyway, once per kv head and thread, reused by its G query heads.
//   - Prefill chunks (~99% of the FLOPs) are one item per query head: q_len rows at row stride
//     Hq * D, causal with offset kv_len - q_len, so only the key blocks left of each query block's
//     diagonal are computed.
//   - A decode (one token) stacks its G query heads of one kv head as the G rows of one block at
//     the same position (offset kv_len - 1: every row sees all kv_len keys), so a key block is one
//     G-row GEMM instead of G one-row dot products; the block computes G rounded up to 16 rows.
// Not supported (returns 1): a sequence with kv_len < q_len, whose first rows see no key (the
// original then averages all S_max keys); the workload's presets have none.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "kbench/kernel.h"

// Tunables (the tuner parses these lines). BQ x BK is the block of scores kept in L1; the
// micro-tiles are the AVX-512 path's register tiles (the AVX2 path's are fixed).
// tune paths: amx avx512 avx2 scalar
// tune: KB_BQ = 32 64 128 (default 64)
// tune: KB_BK = 32 64 128 256 (default 64)
// tune: KB_QK_MR = 4 8 (default 8) [avx512]
// tune: KB_QK_NV = 2 4 (default 2) [avx512]
// tune: KB_PV_MR = 4 6 (default 6) [avx512]
// tune: KB_PV_NV = 2 4 (default 4) [avx512]
// Not a tunable: KB_MAX_ISA (include/isa.h) caps the path for tests.

#include "include/flash_attention.h"

namespace {

// The extents of a call whose tensors have the workload's signature and whose run lengths and
// page indices are in range.
struct CallShape {
  int64_t tokens, hq, hkv, dim, num_pages, page_size, max_seqs, pages_per_seq, num_seqs;
};

std::optional<CallShape> shape_of_call(const kb_tensor* in, int32_t num_inputs,
                                       const kb_tensor* out, int32_t num_outputs) {
  if (num_inputs != 6 || num_outputs != 1) return std::nullopt;
  if (in[0].dtype != KB_BF16 || in[0].rank != 3 || in[1].dtype != KB_BF16 || in[1].rank != 4 ||
      in[2].dtype != KB_I32 || in[2].rank != 1 || in[3].dtype != KB_I32 || in[3].rank != 2 ||
      in[4].dtype != KB_I32 || in[4].rank != 1 || in[5].dtype != KB_I32 || in[5].rank != 1 ||
      in[5].shape[0] != 1 || out[0].dtype != KB_BF16 || out[0].rank != 3)
    return std::nullopt;
  CallShape s{};
  s.tokens = in[0].shape[0], s.hq = in[0].shape[1], s.dim = in[0].shape[2];
  s.num_pages = in[1].shape[0], s.page_size = in[1].shape[1];
  s.max_seqs = in[3].shape[0], s.pages_per_seq = in[3].shape[1];
  if (in[1].shape[2] % 2 != 0 || in[1].shape[3] != s.dim || s.dim <= 0 || s.page_size <= 0)
    return std::nullopt;
  s.hkv = in[1].shape[2] / 2;
  if (s.hkv <= 0 || s.hq % s.hkv != 0 || in[2].shape[0] != s.max_seqs ||
      in[4].shape[0] != s.max_seqs + 1)
    return std::nullopt;
  for (int d = 0; d < 3; ++d)
    if (out[0].shape[d] != in[0].shape[d]) return std::nullopt;
  const auto* page_indices = static_cast<const std::int32_t*>(in[3].data);
  const auto* cu_q_lens = static_cast<const std::int32_t*>(in[4].data);
  s.num_seqs = *static_cast<const std::int32_t*>(in[5].data);
  if (s.num_seqs < 0 || s.num_seqs > s.max_seqs || cu_q_lens[0] < 0 ||
      cu_q_lens[s.num_seqs] > s.tokens)
    return std::nullopt;
  for (int64_t i = 0; i < s.num_seqs; ++i)
    if (cu_q_lens[i + 1] < cu_q_lens[i]) return std::nullopt;
  for (int64_t e = 0; e < s.num_seqs * s.pages_per_seq; ++e)
    if (page_indices[e] < 0 || page_indices[e] >= s.num_pages) return std::nullopt;
  return s;
}

// The flash problem's kv heads and query items: per active sequence and kv head, one item per
// query head, or one item of G rows for a decode (its G query heads share one position). False
// where a sequence has query rows that see no key, which the flash kernel does not support.
bool plan_items(const CallShape& s, const kb_tensor* in, std::uint16_t* dst,
                std::vector<flash::KvHead>& kv, std::vector<flash::QueryItem>& items) {
  const auto* kv_lens = static_cast<const std::int32_t*>(in[2].data);
  const auto* page_indices = static_cast<const std::int32_t*>(in[3].data);
  const auto* cu_q_lens = static_cast<const std::int32_t*>(in[4].data);
  const auto* queries = static_cast<const std::uint16_t*>(in[0].data);
  const auto* pages = static_cast<const std::uint16_t*>(in[1].data);
  const int64_t group = s.hq / s.hkv, row_elems = s.hq * s.dim, token_elems = 2 * s.hkv * s.dim;
  const int64_t capacity = s.page_size * s.pages_per_seq;
  kv.reserve(s.num_seqs * s.hkv);
  items.reserve(s.num_seqs * s.hq);
  for (int64_t i = 0; i < s.num_seqs; ++i) {
    const int64_t q_start = cu_q_lens[i], q_len = cu_q_lens[i + 1] - q_start;
    if (q_len == 0) continue;
    const int64_t kv_len = kv_lens[i], keys = std::min<int64_t>(kv_len, capacity);
    if (kv_len < q_len || keys <= 0) return false;
    for (int64_t h = 0; h < s.hkv; ++h) {
      const flash::Rows k{pages + 2 * h * s.dim, token_elems, page_indices + i * s.pages_per_seq,
                          s.page_size, s.page_size * token_elems};
      flash::Rows v = k;
      v.base += s.dim;
      const int64_t id = static_cast<int64_t>(kv.size());
      kv.push_back({k, v, keys});
      const int64_t head0 = (q_start * s.hq + h * group) * s.dim;
      if (q_len == 1) {
        items.push_back({queries + head0, s.dim, dst + head0, s.dim, group, kv_len - 1, id});
        continue;
      }
      for (int64_t g = 0; g < group; ++g)
        items.push_back({queries + head0 + g * s.dim, row_elems, dst + head0 + g * s.dim, row_elems,
                         q_len, kv_len - q_len, id});
    }
  }
  return true;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* in, int32_t num_inputs, kb_tensor* out,
                      int32_t num_outputs) {
  const std::optional<CallShape> shape = shape_of_call(in, num_inputs, out, num_outputs);
  if (!shape) return 1;
  const CallShape& s = *shape;
  const auto* cu_q_lens = static_cast<const std::int32_t*>(in[4].data);
  const int64_t row_elems = s.hq * s.dim;
  auto* dst = static_cast<std::uint16_t*>(out[0].data);
  // Rows no active sequence owns keep the original's zeros (bf16 0 is all-zero bits).
  std::memset(dst, 0, static_cast<size_t>(cu_q_lens[0] * row_elems) * sizeof(std::uint16_t));
  std::memset(
      dst + cu_q_lens[s.num_seqs] * row_elems, 0,
      static_cast<size_t>((s.tokens - cu_q_lens[s.num_seqs]) * row_elems) * sizeof(std::uint16_t));

  std::vector<flash::KvHead> kv;
  std::vector<flash::QueryItem> items;
  if (!plan_items(s, in, dst, kv, items)) return 1;
  const flash::Problem problem{
      s.dim,     s.dim,        static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.dim))),
      kv.data(), items.data(), static_cast<int64_t>(items.size())};
  return flash::attend(problem, cfg != nullptr ? cfg->num_threads : 1);
}
