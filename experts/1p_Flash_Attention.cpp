// 1p_Flash_Attention expert: causal multi-head attention softmax(where(tril, q k^T D^-0.5, -1e9)) v
// over bf16 (B, H, S, D), f32 arithmetic, one rounding of the output.
//
// Each (batch, head) is one item of the shared flash-attention driver (include/flash_attention.h:
// online softmax over BQ x BK score blocks in L1, causal key blocks skipped, AMX / AVX-512 / AVX2 /
// scalar paths chosen at run time), with its own kv head, row stride D, scale D^-0.5 and causal
// offset 0. See docs/experts.md for the algorithm and the measurements.
#include <cmath>
#include <cstdint>
#include <cstring>
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
  if (num_inputs != 3 || num_outputs != 1) return 1;
  const kb_tensor& query = in[0];
  if (query.rank != 4 || query.shape[2] <= 0 || query.shape[3] <= 0) return 1;
  for (int i = 0; i < 3; ++i)
    if (in[i].dtype != KB_BF16 || in[i].rank != 4 ||
        std::memcmp(in[i].shape, query.shape, sizeof query.shape) != 0)
      return 1;
  if (out[0].dtype != KB_BF16 || std::memcmp(out[0].shape, query.shape, sizeof query.shape) != 0)
    return 1;

  const int64_t heads = query.shape[0] * query.shape[1], seq = query.shape[2], dim = query.shape[3];
  const auto* q = static_cast<const std::uint16_t*>(in[0].data);
  const auto* k = static_cast<const std::uint16_t*>(in[1].data);
  const auto* v = static_cast<const std::uint16_t*>(in[2].data);
  auto* dst = static_cast<std::uint16_t*>(out[0].data);
  std::vector<flash::KvHead> kv(heads);
  std::vector<flash::QueryItem> items(heads);
  for (int64_t h = 0; h < heads; ++h) {
    const int64_t offset = h * seq * dim;
    kv[h] = {{k + offset, dim}, {v + offset, dim}, seq};
    items[h] = {q + offset, dim, dst + offset, dim, seq, 0, h};
  }
  const flash::Problem problem{
      dim,       dim,          static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))),
      kv.data(), items.data(), heads};
  return flash::attend(problem, cfg != nullptr ? cfg->num_threads : 1);
}
