// 2p_GQA_Attention expert: causal grouped-query attention softmax(where(tril, q k^T D^-0.5, -1e9))
// v over bf16 BSHD tensors (query (B, S, Hq, D), key and value (B, S, Hkv, D)), query head h
// reading kv head h / G (G = Hq / Hkv), f32 arithmetic, one rounding of the output.
//
// Each (batch, query head) is one item of the shared flash-attention driver
// (include/flash_attention.h: online softmax over BQ x BK score blocks in L1, causal key blocks
// skipped, AMX / AVX-512 / AVX2 / scalar paths chosen at run time). BSHD needs no transpose: a head
// is an S x D matrix with row stride Hq * D (query, output) or Hkv * D (key, value), which the
// driver reads and writes in place. The repeat of K and V is never materialized either: the items
// of one kv head's G query heads are consecutive, so its K and V are widened and packed once per
// thread and reused by all G (a 16x saving of packing at G = 16).
#include <cmath>
#include <cstdint>
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

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* in, int32_t num_inputs, kb_tensor* out,
                      int32_t num_outputs) {
  flash::GqaCall call;
  if (!flash::gqa_call(in, num_inputs, out, num_outputs, /*seq_axis=*/1, call)) return 1;
  const auto [batch, seq, hq, hkv, dim, q, k, v, dst] = call;

  const int64_t group = hq / hkv, q_ld = hq * dim, kv_ld = hkv * dim;
  std::vector<flash::KvHead> kv(batch * hkv);
  std::vector<flash::QueryItem> items(batch * hq);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hkv; ++h) {
      const int64_t offset = b * seq * kv_ld + h * dim;
      kv[b * hkv + h] = {{k + offset, kv_ld}, {v + offset, kv_ld}, seq};
    }
    // Query heads in order: h / G is the kv head, so the G heads of one kv head are consecutive.
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t offset = b * seq * q_ld + h * dim;
      items[b * hq + h] = {q + offset, q_ld, dst + offset, q_ld, seq, 0, b * hkv + h / group};
    }
  }
  const flash::Problem problem{
      dim,       dim,          static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))),
      kv.data(), items.data(), batch * hq};
  return flash::attend(problem, cfg != nullptr ? cfg->num_threads : 1);
}
