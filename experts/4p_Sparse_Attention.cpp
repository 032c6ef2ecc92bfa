// 4p_Sparse_Attention expert: the dense causal GQA attention of MaxText's splash-attention
// reference, softmax(where(tril, q k^T, -1e30)) v over bf16 (B, H, S, D) (q arrives pre-scaled by
// D^-0.5, so no scale), query head h reading kv head h / G, f32 arithmetic, one rounding of the
// output.
//
// Each (batch, query head) is one item of the shared flash-attention driver
// (include/flash_attention.h: online softmax over BQ x BK score blocks in L1, causal key blocks
// skipped, AMX / AVX-512 / AVX2 / scalar paths chosen at run time) with score scale 1 and causal
// offset 0. The -1e30 mask needs nothing of its own: every row sees key 0, so exp(-1e30 - max) is
// an exact 0 in f32, which is what the lane mask writes. The G query heads of a kv head are
// consecutive items, so its K and V are widened and packed once per thread and reused by all G.
#include <cmath>
#include <cstdint>
#include <vector>

#include "kbench/kernel.h"

// Tunables (the tuner parses these lines). BQ x BK is the block of scores kept in L1; the
// micro-tiles are the AVX-512 path's register tiles (the AVX2 path's are fixed).
// tune: KB_BQ = 32 64 128 (default 64)
// tune: KB_BK = 32 64 128 256 (default 64)
// tune: KB_QK_MR = 4 8 (default 8)
// tune: KB_QK_NV = 2 4 (default 2)
// tune: KB_PV_MR = 4 6 (default 6)
// tune: KB_PV_NV = 2 4 (default 4)
// Not a tunable: KB_MAX_ISA (include/isa.h) caps the path for tests.

#include "include/flash_attention.h"

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* in, int32_t num_inputs, kb_tensor* out,
                      int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1) return 1;
  for (int i = 0; i < 3; ++i)
    if (in[i].dtype != KB_BF16 || in[i].rank != 4) return 1;
  if (out[0].dtype != KB_BF16 || out[0].rank != 4) return 1;
  const int64_t batch = in[0].shape[0], hq = in[0].shape[1], seq = in[0].shape[2];
  const int64_t hkv = in[1].shape[1], dim = in[0].shape[3];
  if (seq <= 0 || dim <= 0 || hkv <= 0 || hq % hkv != 0) return 1;
  for (int i = 1; i < 3; ++i)
    if (in[i].shape[0] != batch || in[i].shape[1] != hkv || in[i].shape[2] != seq ||
        in[i].shape[3] != dim)
      return 1;
  for (int d = 0; d < 4; ++d)
    if (out[0].shape[d] != in[0].shape[d]) return 1;

  const int64_t group = hq / hkv, head = seq * dim;
  const auto* q = static_cast<const std::uint16_t*>(in[0].data);
  const auto* k = static_cast<const std::uint16_t*>(in[1].data);
  const auto* v = static_cast<const std::uint16_t*>(in[2].data);
  auto* dst = static_cast<std::uint16_t*>(out[0].data);
  std::vector<flash::KvHead> kv(batch * hkv);
  std::vector<flash::QueryItem> items(batch * hq);
  for (int64_t h = 0; h < batch * hkv; ++h) kv[h] = {{k + h * head, dim}, {v + h * head, dim}, seq};
  // Query heads in order: h / G is the kv head, so the G heads of one kv head are consecutive.
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t offset = (b * hq + h) * head;
      items[b * hq + h] = {q + offset, dim, dst + offset, dim, seq, 0, b * hkv + h / group};
    }
  const flash::Problem problem{dim, dim, 1.0f, kv.data(), items.data(), batch * hq};
  return flash::attend(problem, cfg != nullptr ? cfg->num_threads : 1);
}
