// Causal attention over one (batch, head) slice, the block the attention workloads (1p, 2p, 4p, 5p)
// compose: the fused baseline (GEMMs through ops::gemm, one softmax pass per score row), the
// emulation of the original bf16 JAX program, and a double-precision reference.
#pragma once

#include <cstdint>
#include <optional>

#include "core/bf16.h"
#include "kbench/kernel.h"

namespace kbench::ops {

// The (query, key) pairs a causal mask leaves visible to `queries` queries that end at the last of
// `keys` keys (query t sees keys j <= keys - queries + t): what a kernel that skips masked scores
// computes, for Problem::essential_flops.
constexpr double causal_pairs(std::int64_t queries, std::int64_t keys) {
  const double q = static_cast<double>(queries);
  return q * static_cast<double>(keys - queries) + q * (q + 1) / 2;
}

// The essential FLOPs of `batch_heads` causal heads of seq_len queries and keys: 4 D per visible
// pair, for q k^T and the product with v. Causal attention's, and that of the causal quadratic
// forms whose masked scores are exact zeros (RetNet's retention, Mamba-2's SSD).
constexpr double causal_head_flops(std::int64_t batch_heads, std::int64_t seq_len,
                                   std::int64_t head_dim) {
  return 4.0 * static_cast<double>(batch_heads) * causal_pairs(seq_len, seq_len) *
         static_cast<double>(head_dim);
}

// One head: q, k, v are seq_len x head_dim row-major bf16 matrices whose rows are `*_ld` elements
// apart (BHSD heads are dense, ld = D; BSHD heads are strided, ld = H * D). `bias`, when set, is a
// seq_len x seq_len row-major bf16 matrix added to the scaled scores. `out` is seq_len x head_dim
// in `out_dtype` (bf16 or f32), rows `out_ld` elements apart.
struct HeadView {
  const bf16_t* q = nullptr;
  std::int64_t q_ld = 0;
  const bf16_t* k = nullptr;
  std::int64_t k_ld = 0;
  const bf16_t* v = nullptr;
  std::int64_t v_ld = 0;
  const bf16_t* bias = nullptr;
  void* out = nullptr;
  kb_dtype out_dtype = KB_BF16;
  std::int64_t out_ld = 0;
};

// The score step of the original program: s = (q . k) [* scale] [+ bias], then
// where(tril, s, masked_score). No scale (nullopt) where the program multiplies by nothing (4p
// pre-scales q in its inputs); the distinction matters to the bf16 emulation, which rounds after
// each op the program runs.
struct ScoreSteps {
  std::optional<double> scale;
  double masked_score = -1e9;
};

// Rows of scores the baseline keeps at a time: 1 MiB of f32 scores (256 rows at S = 1024, most of
// a 1.25 MiB L2), and at least 64 rows so the GEMMs keep a full M panel. Measured at 1p's cpu size
// on one Ice Lake core: 256-row blocks 44-46 ms, 128 rows 49-52 ms, 512 rows 50-51 ms, the whole
// 1024-row head 52-55 ms. The block size moves results only in the last f32 bits (the GEMM's
// kernel choice depends on M).
std::int64_t attention_rows_per_block(std::int64_t seq_len);

// What a fusing compiler emits for one head, a block of query rows at a time: the full-width
// scores block (rows x S, masked keys included, as the program computes them) by ops::gemm with the
// scale as its alpha, in f32; per row the bias added, max, exp with sum and normalization while the
// row is in cache, the masked keys written as the exact zeros exp(masked - max) gives; then the
// block's probabilities @ v by ops::gemm into the head's output rows. With a bf16 output the
// probabilities (the program's bf16 operand of the second einsum) are stored in bf16; with f32 (the
// oracle) nothing is rounded.
void attention_baseline(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                        const ScoreSteps& steps, std::int64_t rows_per_block = 0);

// The original JAX program's arithmetic on bf16 tensors, op by op: scores = bf16(q . k) (a bf16
// einsum accumulating in f32), then bf16(s * bf16(scale)) (a weak-typed Python float keeps the
// bf16 dtype), bf16(s + bias), where(mask, s, bf16(masked_score)); jax.nn.softmax on bf16 with
// each elementwise op computed in f32 and rounded: d = bf16(s - max), e = bf16(exp(d)),
// sum = bf16(f32 sum of e), p = bf16(e / sum); out = bf16(p @ v), accumulated in f32. `head.out`
// must be bf16.
void attention_bf16_program(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                            const ScoreSteps& steps);

// The truth: the same operator in double, only the causal prefix of each row visited, written to
// an f32 `head.out`.
void attention_reference(const HeadView& head, std::int64_t seq_len, std::int64_t head_dim,
                         const ScoreSteps& steps);

}  // namespace kbench::ops
