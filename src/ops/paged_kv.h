// The paged KV cache of the serving-attention workloads (6p decode, 7p ragged prefill+decode):
// page-table checks, shuffled page tables drawn from a seed, the gather of one sequence's pages
// into a contiguous block, and attention of a block of query rows against a visible prefix of that
// block through the machine-best GEMM (ops::gemm) with one softmax pass per row.
#pragma once

#include <cstdint>

#include "core/bf16.h"
#include "kbench/kernel.h"
#include "ops/gemm.h"

namespace kbench::ops {

// A paged cache: num_pages pages of page_size tokens, each token token_elems contiguous bf16 values
// (all its heads, head_dim values each), pages one after another.
struct PagedCache {
  const bf16_t* data = nullptr;
  std::int64_t num_pages = 0, page_size = 0, token_elems = 0;
};

// True when each of page_table[0, count) names a page in [0, num_pages).
bool pages_in_range(const std::int32_t* page_table, std::int64_t count, std::int64_t num_pages);

// Copies tokens [0, num_tokens) of one sequence, whose i-th page is page_table[i], into dst as a
// contiguous (num_tokens, token_elems) block: whole pages by memcpy, the last one cut at
// num_tokens. The page table must hold ceil(num_tokens / page_size) entries in range.
void gather_tokens(const PagedCache& cache, const std::int32_t* page_table, std::int64_t num_tokens,
                   bf16_t* dst);

// As gather_tokens, but only values [first_elem, first_elem + elems) of each token (one KV head's
// keys and values, say), into dst as a contiguous (num_tokens, elems) block.
void gather_token_slice(const PagedCache& cache, const std::int32_t* page_table,
                        std::int64_t num_tokens, std::int64_t first_elem, std::int64_t elems,
                        bf16_t* dst);

// Writes a uniformly shuffled permutation of [0, n) into out (Fisher-Yates on Philox draws of
// (seed, stream)): a serving engine's page table after pages were freed and reused. A pure
// function of (seed, stream, n).
void shuffled_pages(std::uint64_t seed, std::uint32_t stream, std::int32_t* out, std::int64_t n);

// Which keys each query row sees: row r of a block sees keys [0, first + r * step), clipped to the
// keys present. A row that sees none attends uniformly to every key present: the softmax of a row
// where every score carries the same huge negative mask value (as the originals' masks give).
struct Visibility {
  std::int64_t first = 0, step = 0;
  std::int64_t keys(std::int64_t row, std::int64_t present) const;  // visible count, 0 = none
};

// out[r] = softmax_j(scale * q[r] . k[j]) @ v over the keys row r sees, for a bf16 block of query
// rows (rows x head_dim) against `present` contiguous keys and values (rows kv_ld elements apart).
// Scores and the softmax stay f32; the probabilities are rounded to `probability_dtype` (bf16 as a
// bf16 program holds them before the second einsum, f32 for the oracle) before the value GEMM,
// which writes `out` (bf16 or f32) once.
void attend(const ops::Matrix& q, const bf16_t* k, const bf16_t* v, std::int64_t kv_ld,
            std::int64_t present, Visibility visibility, float scale, kb_dtype probability_dtype,
            const ops::MutableMatrix& out);

}  // namespace kbench::ops
