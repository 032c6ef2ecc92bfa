// Flash attention over bf16 query, key and value rows with f32 arithmetic (on the AMX path, f32
// accumulation of bf16 products, the probabilities rounded to bf16 for P V): the block kernels
// (AMX-BF16, AVX-512, AVX2+FMA, scalar), the path chosen at run time, and a generic driver shared
// by the causal-attention experts (1p, 2p, 4p, 7p). Each expert declares its search space over the
// tunables (KB_BQ, KB_BK, KB_QK_MR, KB_QK_NV, KB_PV_MR, KB_PV_NV; and KB_MAX_ISA, include/isa.h,
// for tests) in its `// tune:` lines; the defaults are defined here, once.
//
// The driver takes query items, one per (batch, query head) or packed sequence: a strided block of
// query rows, the kv head it reads (K and V rows at any row stride, optionally scattered over
// pages), its output rows, and a causal position offset: query row t of an item sees key j iff j <=
// offset + t and j < keys. Per item and query block of BQ rows (the OpenMP work units):
//   widen the block's query rows to f32, pre-multiplied by scale * log2(e) (the softmax then
//   runs on exp2, and the scale costs nothing per score)
//   for each key block of BK keys that some row of the block sees (the rest is fully masked:
//   skipping it halves the work of a causal operator):
//     S = Q K^T (BQ x BK, f32)               register-tiled micro-kernel, QK_MR x 16*QK_NV
//     per row: m' = max(m, max_j S), p = exp2(S - m'), l = l * exp2(m - m') + sum p
//     O = O * exp2(m - m') + P V (BQ x Dv)   register-tiled micro-kernel, PV_MR x 16*PV_NV
//   out = bf16(O / l), round to nearest even as kb_f32_to_bf16
// Only the key blocks that straddle a row's limit are masked element by element (a lane mask on
// the exp2 result, which writes exact zeros as exp(mask - max) does in f32 for the originals'
// -1e9 / -1e30 / -0.7 * FLT_MAX masks); micro-tiles of them that no row of the tile sees are
// skipped in both products.
//
// The row sums stay 16 partial sums per row until the block's end, and the rescale factors are
// computed 16 rows per vector: no horizontal sum and no scalar exp per row and key block.
//
// K and V of a kv head are widened to f32 once per call and per thread (K transposed into key
// panels, so the QK micro-kernel loads 16 keys of one dimension per vector and broadcasts one query
// element per row; V row-major, Dv padded to whole vectors), and reused by every query block of
// every query head that reads that kv head (GQA): the work units are ordered kv head by kv head.
// Widening in the micro-kernels instead would cost a shuffle per vector on the port AVX-512 also
// needs for its second FMA. The packs are keys * (Dk + Dv) * 4 bytes; each key block is
// BK * (Dk + Dv) * 4 bytes.
//
// Threads: when cfg->num_threads divides the number of items and the items are alike (same rows,
// keys and offset), contiguous runs of whole items per thread (equal work, each kv head packed
// once per thread); otherwise (item, query block) units by a dynamic schedule, each item's longest
// (last) query blocks first, since the causal triangle makes block i cost about i + 1 key blocks.
//
// Paths, chosen at the first call by isa::best_isa() (isa.h):
//   AMX-BF16 (with AVX-512): both products on tiles (16 rows x 64 bytes, amx_tiles.h), bf16
//     operands and f32 accumulators; the driver's algorithm with these differences:
//       Q stays bf16 (16 x 32 A tiles; no pre-scaling, which would round Q a second time), and
//       the softmax multiplies each score by scale * log2(e) as it reads it (one more FMA input);
//       K is packed once per kv head and thread into pair-interleaved B tiles (16 keys x 32
//       dimensions, a 16 x 16 transpose of 32-bit pairs), V into B tiles of 32 keys x 16 columns
//       (key pairs interleaved), Dk padded to 32 and Dv to 16 with zeros, keys to the block;
//       S in 32 x 32 blocks of four f32 tiles over all of Dk, stored to the f32 score block;
//       the online softmax of the AVX-512 path, P rounded to bf16 (nearest even) into 16 x 32 A
//       tiles, the row sums adding the rounded values (so the weights P V sees sum to 1);
//       O scaled by alpha in AVX-512, then loaded as the C tiles of P V and stored back, over the
//       32-key tiles up to the last key its rows see.
//     Rounding P to bf16 is the one new error: each weight within a relative 2^-8 (before
//     normalization), so an output within 2^-7 of sum_j w_j |v_j| of the f32 result (the bound
//     tests/experts/flash_attention_check.cpp checks). The packs are half the f32 ones; the tile
//     configuration is loaded once per call and thread and released after its last block.
//   AVX-512F (+BW/VL/DQ): 16-lane tiles above; exp2 as vreduceps (x - floor x), a degree-5
//     polynomial and vscalefps (relative error 1.2e-7 from the fit, f32 rounding on top);
//     K transposed 16 x 16 in registers;
//   AVX2+FMA: 8-lane tiles 4 x 16 (QK) and 4 x 16 (PV), exp2 with the exponent built in integers;
//   scalar: plain loops, for x86-64 without AVX2.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "amx_tiles.h"
#include "kbench/kernel.h"
#include "vector_math.h"

// The driver's defaults, which the experts' `// tune:` lines name as theirs: a configured source
// defines every tunable ahead of the expert's text; an expert compiled as it is gets these.
#ifndef KB_BQ
#define KB_BQ 64
#endif
#ifndef KB_BK
#define KB_BK 64
#endif
#ifndef KB_QK_MR
#define KB_QK_MR 8
#endif
#ifndef KB_QK_NV
#define KB_QK_NV 2
#endif
#ifndef KB_PV_MR
#define KB_PV_MR 6
#endif
#ifndef KB_PV_NV
#define KB_PV_NV 4
#endif

// GCC 12 flags its own _mm512_undefined_*() placeholders inside intrinsics as "maybe
// uninitialized" (and -Wuninitialized in _mm512_reduce_*_ps) under -Wall: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// 32 zmm registers hold the accumulators, the NV loaded vectors and a broadcast.
static_assert(KB_QK_MR * KB_QK_NV <= 28, "QK micro-tile: at most 28 accumulators");
static_assert(KB_PV_MR * KB_PV_NV <= 28, "PV micro-tile: at most 28 accumulators");
// Key panels are 16 * QK_NV keys wide (AVX-512) and 16 keys (AVX2); a key block is whole panels.
static_assert(KB_BK % (16 * KB_QK_NV) == 0, "KB_BK: whole QK micro-tiles");
// The AMX path's P tiles are 32 keys wide.
static_assert(KB_BK % 32 == 0, "KB_BK: whole 32-key P tiles");
// A block's live rows are a multiple of 16 (the rescale factors go 16 rows per vector); QK tiles
// of MR rows, then 4-row tails.
static_assert(KB_BQ % 16 == 0 && KB_QK_MR % 4 == 0,
              "KB_BQ, KB_QK_MR: whole QK tiles or 4-row tails");
static_assert(KB_PV_MR <= 7, "PV row tails up to 6 rows");

namespace flash {

using std::int64_t;

// Rows of one head's K or V: row j at base + j * ld, or, paged, row j of the sequence is row
// j % page_rows of page pages[j / page_rows], pages page_ld elements apart.
struct Rows {
  const std::uint16_t* base = nullptr;
  int64_t ld = 0;
  const std::int32_t* pages = nullptr;
  int64_t page_rows = 0, page_ld = 0;
  const std::uint16_t* row(int64_t j) const {
    if (pages == nullptr) return base + j * ld;
    return base + pages[j / page_rows] * page_ld + (j % page_rows) * ld;
  }
};

// One kv head: `keys` rows of K (Dk values each) and of V (Dv values each).
struct KvHead {
  Rows k, v;
  int64_t keys;
};

// One item of query rows against kv head `kv`: rows t < `rows` at q + t * q_ld (Dk values), output
// rows at out + t * out_ld (Dv values); row t sees key j iff j <= offset + t and j < keys.
struct QueryItem {
  const std::uint16_t* q;
  int64_t q_ld;
  std::uint16_t* out;
  int64_t out_ld;
  int64_t rows, offset;
  int64_t kv;
};

// A call: items of the same kv head should be consecutive (its pack is reused between them).
struct Problem {
  int64_t dim_k, dim_v;
  float scale;  // multiplies every score before the softmax
  const KvHead* kv;
  const QueryItem* items;
  int64_t num_items;
};

namespace detail {

using namespace vector_math;

constexpr int kBQ = KB_BQ;
constexpr int kBK = KB_BK;
constexpr float kLog2e = 1.44269504088896340736f;

// Lanes of a row's partial sum: the vector paths keep l per lane and add the lanes once per block
// of queries, not once per key block.
constexpr int kSumLanes = 16;

// The K pack of one kv head: `keys` rows rounded up to `keys_pad` (whole key blocks, zero rows),
// Dk = `dim`, panels of `key_panel` keys.
struct PackGeometry {
  int64_t keys, keys_pad, dim;
  int key_panel;
};

// One query block against one key block, all in one thread's scratch.
//   q  BQ x Dk f32, scaled; kt: the key block's panels (key_panel keys x Dk each, d-major);
//   s  BQ x BK scores then probabilities; v: the key block's rows (BK x dim_pad);
//   (the AMX path: q, kt and v hold bf16 tiles instead, see its section; its scores are unscaled,
//   score_scale multiplies them in the softmax, and p receives the probabilities as bf16 tiles)
//   o  BQ x dim_pad accumulator; m, alpha: per-row running max and this block's rescale;
//   l  per-row running sum as kSumLanes partial sums (BQ x kSumLanes).
// `i0` is the position of the block's first row (row r sees keys < min(i0 + r + 1, key_end)),
// `j0` the block's first key; `diagonal` when some key of the block is hidden from row 0. Only the
// first `rows` rows (the block's real rows rounded up to 16) are computed: a decode block of G
// stacked heads or a sequence's last block does not pay for BQ rows.
struct BlockArgs {
  const float* q;
  const float* kt;
  float* s;
  const float* v;
  float* o;
  float* m;
  float* l;
  float* alpha;
  int64_t dim;      // Dk
  int64_t dim_v;    // Dv
  int64_t dim_pad;  // Dv rounded up to whole zmm vectors: V and O rows
  int64_t i0, j0, key_end;
  int rows;
  bool diagonal;
  float score_scale;  // 1, or the AMX path's scale * log2(e)
  std::uint16_t* p;   // AMX: BQ x BK bf16 probabilities
};

// A path: its operand layouts, the packing of K and V (once per kv head and thread) and of a
// query block, the three inner steps over one (query block, key block) pair, and what a thread
// does around its work (the AMX tile configuration).
struct Path {
  isa::Isa isa;
  int key_panel;
  bool bf16_tiles;  // the AMX layouts: q, kt and v hold bf16
  // K (see pack_keys_scalar) and V (BK x dim_pad rows) of one kv head; past the last key zero.
  void (*pack_kv)(const PackGeometry&, const KvHead&, int64_t dim_v, int64_t dim_pad, float* kt,
                  float* v);
  // Query rows t0.. (`rows` of them) of an item into q, BQ rows, zero past `rows`.
  void (*load_queries)(const QueryItem&, int64_t t0, int64_t rows, int64_t dim, float scale,
                       float* q);
  void (*scores)(const BlockArgs&);      // s = q kt
  void (*softmax)(const BlockArgs&);     // online softmax update of s, m, l, alpha
  void (*accumulate)(const BlockArgs&);  // o = o * alpha + s v
  void (*begin_thread)();
  void (*end_thread)();
};

// Elements of f32 that a row of each pack takes: K per key, V per key, Q per query row.
struct Layout {
  int64_t k_row, v_row, q_row;
};

// Keys of the block row tile (r0.., rows) can see: all BK, or up to its last row's limit.
inline int visible_keys(const BlockArgs& a, int r0, int rows) {
  if (!a.diagonal) return kBK;
  const int64_t limit = std::min(a.i0 + r0 + rows, a.key_end);
  return static_cast<int>(std::clamp<int64_t>(limit - a.j0, 0, kBK));
}

// A micro-tile (rows r0.., keys c0..) of a diagonal block is entirely masked when its first key is
// hidden from its last row.
inline bool tile_masked(const BlockArgs& a, int r0, int rows, int c0) {
  return a.diagonal && a.j0 + c0 >= std::min(a.i0 + r0 + rows, a.key_end);
}

// ---- Scalar path ----

// K of one kv head as f32 panels of `key_panel` keys, d-major within a panel (element (j, d) at
// kt[(j / panel) * panel * Dk + d * panel + j % panel]); keys past the last zero. Each panel row is
// written contiguously (the panel's keys, a few KiB of K, stay in L1 while the loop walks down Dk).
void pack_keys_scalar(const PackGeometry& g, const Rows& k, float* kt) {
  const int panel = g.key_panel;
  for (int64_t j0 = 0; j0 < g.keys_pad; j0 += panel) {
    float* dst = kt + j0 * g.dim;
    const int64_t keys = std::clamp<int64_t>(g.keys - j0, 0, panel);
    for (int64_t jj = 0; jj < keys; ++jj) {
      const std::uint16_t* row = k.row(j0 + jj);
      for (int64_t d = 0; d < g.dim; ++d) dst[d * panel + jj] = kb_bf16_to_f32(row[d]);
    }
    for (int64_t d = 0; d < g.dim; ++d)
      for (int64_t jj = keys; jj < panel; ++jj) dst[d * panel + jj] = 0.0f;
  }
}

void scores_scalar(const BlockArgs& a) {
  for (int c0 = 0; c0 < kBK; c0 += 16) {
    const float* panel = a.kt + static_cast<int64_t>(c0) * a.dim;
    for (int r = 0; r < a.rows; ++r) {
      if (tile_masked(a, r, 1, c0)) continue;
      float acc[16] = {};
      for (int64_t d = 0; d < a.dim; ++d)
        for (int c = 0; c < 16; ++c) acc[c] += a.q[r * a.dim + d] * panel[d * 16 + c];
      std::memcpy(a.s + r * kBK + c0, acc, sizeof acc);
    }
  }
}

void softmax_scalar(const BlockArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    float mx = -INFINITY;
    for (int c = 0; c < n; ++c) mx = std::max(mx, s[c]);
    const float m_new = std::max(a.m[r], mx);
    float sum = 0.0f;
    for (int c = 0; c < n; ++c) sum += (s[c] = std::exp2(s[c] - m_new));
    for (int c = n; c < kBK; ++c) s[c] = 0.0f;
    a.alpha[r] = std::exp2(a.m[r] - m_new);
    a.l[r * kSumLanes] = a.l[r * kSumLanes] * a.alpha[r] + sum;
    a.m[r] = m_new;
  }
}

void accumulate_scalar(const BlockArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    float* o = a.o + r * a.dim_pad;
    for (int64_t d = 0; d < a.dim_v; ++d) o[d] *= a.alpha[r];
    const int n = visible_keys(a, r, 1);
    for (int c = 0; c < n; ++c) {
      const float p = a.s[r * kBK + c];
      const float* v = a.v + c * a.dim_pad;
      for (int64_t d = 0; d < a.dim_v; ++d) o[d] += p * v[d];
    }
  }
}

// ---- AVX-512 path ----

// t[c] = column c of the 16 x 16 matrix of 32-bit elements whose row i is r[i] (r is clobbered):
// three shuffle stages (32-bit, 64-bit, then 128-bit lanes twice). Shuffles move bits only, so
// the elements may be f32 or pairs of bf16.
KB_TARGET_AVX512 __attribute__((always_inline)) inline void transpose_16x16(__m512 r[16],
                                                                            __m512 t[16]) {
  // Rows (2i, 2i+1) interleaved within 128-bit lanes.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4q + c]: in lane L, rows 4q..4q+3 of column 4L + c.
  for (int q = 0; q < 4; ++q) {
    const __m512d a0 = _mm512_castps_pd(t[4 * q]), a1 = _mm512_castps_pd(t[4 * q + 1]);
    const __m512d a2 = _mm512_castps_pd(t[4 * q + 2]), a3 = _mm512_castps_pd(t[4 * q + 3]);
    r[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    r[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    r[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    r[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
  // Column 4L + c gathers lane L of u[c], u[4 + c], u[8 + c], u[12 + c].
  for (int c = 0; c < 4; ++c) {
    const __m512 x_even = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x88);
    const __m512 x_odd = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xDD);
    const __m512 y_even = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x88);
    const __m512 y_odd = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xDD);
    t[c] = _mm512_shuffle_f32x4(x_even, y_even, 0x88);
    t[8 + c] = _mm512_shuffle_f32x4(x_even, y_even, 0xDD);
    t[4 + c] = _mm512_shuffle_f32x4(x_odd, y_odd, 0x88);
    t[12 + c] = _mm512_shuffle_f32x4(x_odd, y_odd, 0xDD);
  }
}

// The K panels of pack_keys_scalar by 16 x 16 transposes in registers: 16 keys x 16 dimensions
// widened, transposed, stored as 16 panel rows. The strided scalar loop costs ~5% of the whole
// kernel at the cpu size.
KB_TARGET_AVX512 void pack_keys_avx512(const PackGeometry& g, const Rows& k, float* kt) {
  const int panel = g.key_panel;
  for (int64_t j0 = 0; j0 < g.keys_pad; j0 += 16) {
    float* dst = kt + (j0 / panel) * panel * g.dim + j0 % panel;
    for (int64_t d0 = 0; d0 < g.dim; d0 += 16) {
      const int cols = static_cast<int>(std::min<int64_t>(16, g.dim - d0));
      const __mmask16 col_mask = static_cast<__mmask16>((1u << cols) - 1u);
      __m512 r[16], t[16];
      for (int i = 0; i < 16; ++i)
        r[i] =
            j0 + i < g.keys
                ? _mm512_castsi512_ps(_mm512_slli_epi32(
                      _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(col_mask, k.row(j0 + i) + d0)),
                      16))
                : _mm512_setzero_ps();
      transpose_16x16(r, t);
      for (int c = 0; c < cols; ++c) _mm512_store_ps(dst + (d0 + c) * panel, t[c]);
    }
  }
}

// S tile (MR rows from r0, 16 * NV keys from c0) = Q rows . K panel, over all D.
template <int MR, int NV>
KB_TARGET_AVX512 void scores_tile_avx512(const BlockArgs& a, int r0, int c0) {
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) acc[r][n] = _mm512_setzero_ps();
  const float* panel = a.kt + static_cast<int64_t>(c0) * a.dim;
  const float* q = a.q + r0 * a.dim;
  for (int64_t d = 0; d < a.dim; ++d) {
    __m512 k[NV];
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) k[n] = _mm512_load_ps(panel + d * 16 * NV + 16 * n);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      const __m512 qb = _mm512_set1_ps(q[r * a.dim + d]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) acc[r][n] = _mm512_fmadd_ps(qb, k[n], acc[r][n]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) _mm512_store_ps(a.s + (r0 + r) * kBK + c0 + 16 * n, acc[r][n]);
}

KB_TARGET_AVX512 void scores_avx512(const BlockArgs& a) {
  constexpr int kMR = KB_QK_MR, kNR = 16 * KB_QK_NV;
  const int full = a.rows / kMR * kMR;
  for (int c0 = 0; c0 < kBK; c0 += kNR) {
    for (int r0 = 0; r0 < full; r0 += kMR)
      if (!tile_masked(a, r0, kMR, c0)) scores_tile_avx512<kMR, KB_QK_NV>(a, r0, c0);
    // Live rows are a multiple of 4; a row tail of a tile goes 4 rows at a time.
    for (int r0 = full; r0 < a.rows; r0 += 4)
      if (!tile_masked(a, r0, 4, c0)) scores_tile_avx512<4, KB_QK_NV>(a, r0, c0);
  }
}

// The softmax goes in three passes over the block: row maxima (one horizontal reduction per row),
// the rescale factors 16 rows per vector, then exp2 with per-lane sums (no horizontal sum per key
// block). The first two are shared with the AMX path, whose scores arrive unscaled (kScaled: each
// is multiplied by score_scale as it is read).

// alpha[r] = the new running maximum of row r, max(m[r], max_j s[r][j]).
template <bool kScaled>
KB_TARGET_AVX512 void row_maxima_avx512(const BlockArgs& a) {
  const __m512 scale = _mm512_set1_ps(a.score_scale);
  for (int r = 0; r < a.rows; ++r) {
    const float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int c0 = 0; c0 < n; c0 += 16) {
      __m512 x = _mm512_load_ps(s + c0);
      if constexpr (kScaled) x = _mm512_mul_ps(x, scale);
      mx = _mm512_mask_max_ps(mx, first_lanes(n, c0), mx, x);
    }
    // alpha holds the new maximum until rescale_factors_avx512 turns it into exp2(m - m_new).
    a.alpha[r] = std::max(a.m[r], _mm512_reduce_max_ps(mx));
  }
}

// m = the new maxima, alpha = exp2(m_old - m_new), 16 rows per vector (rows % 16 == 0).
KB_TARGET_AVX512 void rescale_factors_avx512(const BlockArgs& a) {
  for (int r0 = 0; r0 < a.rows; r0 += 16) {
    const __m512 m_old = _mm512_loadu_ps(a.m + r0), m_new = _mm512_loadu_ps(a.alpha + r0);
    _mm512_storeu_ps(a.m + r0, m_new);
    // m_old is -inf on the first key block: clamped, exp2 gives the exact 0 that empties O and l.
    _mm512_storeu_ps(a.alpha + r0,
                     exp2_avx512(_mm512_max_ps(_mm512_sub_ps(m_old, m_new), _mm512_set1_ps(-256))));
  }
}

KB_TARGET_AVX512 void softmax_avx512(const BlockArgs& a) {
  row_maxima_avx512<false>(a);
  rescale_factors_avx512(a);
  for (int r = 0; r < a.rows; ++r) {
    float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    const __m512 mv = _mm512_set1_ps(a.m[r]);
    __m512 sum = _mm512_mul_ps(_mm512_load_ps(a.l + r * kSumLanes), _mm512_set1_ps(a.alpha[r]));
    int c0 = 0;
    for (; c0 + 16 <= n; c0 += 16) {
      const __m512 p = exp2_avx512(_mm512_sub_ps(_mm512_load_ps(s + c0), mv));
      sum = _mm512_add_ps(sum, p);
      _mm512_store_ps(s + c0, p);
    }
    if (c0 < n) {  // the diagonal vector: masked lanes become exact zeros
      const __m512 p = _mm512_maskz_mov_ps(first_lanes(n, c0),
                                           exp2_avx512(_mm512_sub_ps(_mm512_load_ps(s + c0), mv)));
      sum = _mm512_add_ps(sum, p);
      _mm512_store_ps(s + c0, p);
      c0 += 16;
    }
    // accumulate_avx512 reads a row up to the last visible key of its tile's last row.
    for (; c0 < kBK; c0 += 16) _mm512_store_ps(s + c0, _mm512_setzero_ps());
    _mm512_store_ps(a.l + r * kSumLanes, sum);
  }
}

// O tile (MR rows from r0, 16 * NV columns from d0) = O * alpha + P . V over `keys` keys.
template <int MR, int NV>
KB_TARGET_AVX512 void accumulate_tile_avx512(const BlockArgs& a, int r0, int64_t d0, int keys) {
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r) {
    const __m512 alpha = _mm512_set1_ps(a.alpha[r0 + r]);
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      acc[r][n] = _mm512_mul_ps(alpha, _mm512_load_ps(a.o + (r0 + r) * a.dim_pad + d0 + 16 * n));
  }
  const float* p = a.s + r0 * kBK;
  for (int c = 0; c < keys; ++c) {
    __m512 v[NV];
    const float* vrow = a.v + c * a.dim_pad + d0;
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n) v[n] = _mm512_load_ps(vrow + 16 * n);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) {
      const __m512 pb = _mm512_set1_ps(p[r * kBK + c]);
#pragma GCC unroll 8
      for (int n = 0; n < NV; ++n) acc[r][n] = _mm512_fmadd_ps(pb, v[n], acc[r][n]);
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 8
    for (int n = 0; n < NV; ++n)
      _mm512_store_ps(a.o + (r0 + r) * a.dim_pad + d0 + 16 * n, acc[r][n]);
}

// All D columns of one MR-row tile: NV-vector pieces, then the remaining 1..NV-1 vectors.
template <int MR>
KB_TARGET_AVX512 void accumulate_rows_avx512(const BlockArgs& a, int r0) {
  constexpr int kNV = KB_PV_NV;
  const int keys = visible_keys(a, r0, MR);
  if (keys == 0) {  // whole tile masked: only the rescale (alpha is 1 unless the max moved)
    for (int r = 0; r < MR; ++r)
      for (int64_t d = 0; d < a.dim_pad; ++d) a.o[(r0 + r) * a.dim_pad + d] *= a.alpha[r0 + r];
    return;
  }
  const int64_t vectors = a.dim_pad / 16;
  int64_t d0 = 0;
  for (; d0 + 16 * kNV <= a.dim_pad; d0 += 16 * kNV)
    accumulate_tile_avx512<MR, kNV>(a, r0, d0, keys);
  switch (vectors - d0 / 16) {
    case 0:
      break;
    case 1:
      accumulate_tile_avx512<MR, 1>(a, r0, d0, keys);
      break;
    case 2:
      accumulate_tile_avx512<MR, 2>(a, r0, d0, keys);
      break;
    case 3:
      accumulate_tile_avx512<MR, 3>(a, r0, d0, keys);
      break;
    case 4:
      accumulate_tile_avx512<MR, 4>(a, r0, d0, keys);
      break;
    case 5:
      accumulate_tile_avx512<MR, 5>(a, r0, d0, keys);
      break;
    case 6:
      accumulate_tile_avx512<MR, 6>(a, r0, d0, keys);
      break;
    default:
      accumulate_tile_avx512<MR, 7>(a, r0, d0, keys);
      break;
  }
}

KB_TARGET_AVX512 void accumulate_avx512(const BlockArgs& a) {
  constexpr int kMR = KB_PV_MR;
  int r0 = 0;
  for (; r0 + kMR <= a.rows; r0 += kMR) accumulate_rows_avx512<kMR>(a, r0);
  switch (a.rows - r0) {  // the row tail, 0..MR-1 rows
    case 0:
      break;
    case 1:
      accumulate_rows_avx512<1>(a, r0);
      break;
    case 2:
      accumulate_rows_avx512<2>(a, r0);
      break;
    case 3:
      accumulate_rows_avx512<3>(a, r0);
      break;
    case 4:
      accumulate_rows_avx512<4>(a, r0);
      break;
    case 5:
      accumulate_rows_avx512<5>(a, r0);
      break;
    default:
      accumulate_rows_avx512<6>(a, r0);
      break;
  }
}

// ---- AVX2 path ----

// 4 rows x 16 keys (one K panel): 8 ymm accumulators.
KB_TARGET_AVX2 void scores_avx2(const BlockArgs& a) {
  for (int c0 = 0; c0 < kBK; c0 += 16) {
    const float* panel = a.kt + static_cast<int64_t>(c0) * a.dim;
    for (int r0 = 0; r0 < a.rows; r0 += 4) {
      if (tile_masked(a, r0, 4, c0)) continue;
      __m256 acc[4][2];
      for (int r = 0; r < 4; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
      const float* q = a.q + r0 * a.dim;
      for (int64_t d = 0; d < a.dim; ++d) {
        const __m256 k0 = _mm256_load_ps(panel + d * 16), k1 = _mm256_load_ps(panel + d * 16 + 8);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
          const __m256 qb = _mm256_broadcast_ss(q + r * a.dim + d);
          acc[r][0] = _mm256_fmadd_ps(qb, k0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(qb, k1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        _mm256_store_ps(a.s + (r0 + r) * kBK + c0, acc[r][0]);
        _mm256_store_ps(a.s + (r0 + r) * kBK + c0 + 8, acc[r][1]);
      }
    }
  }
}

KB_TARGET_AVX2 void softmax_avx2(const BlockArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    const float m_new = row_max_avx2(s, n, a.m[r]);
    const __m256 mv = _mm256_set1_ps(m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int c0 = 0; c0 < kBK; c0 += 8) {
      __m256 p = _mm256_setzero_ps();
      if (c0 < n)
        p = _mm256_and_ps(exp2_avx2(_mm256_sub_ps(_mm256_load_ps(s + c0), mv)),
                          first_lanes_avx2(n, c0));
      sum = _mm256_add_ps(sum, p);
      _mm256_store_ps(s + c0, p);
    }
    a.alpha[r] = std::exp2(a.m[r] - m_new);
    float* l = a.l + r * kSumLanes;  // lanes 8..15 stay 0
    _mm256_store_ps(l, _mm256_fmadd_ps(_mm256_load_ps(l), _mm256_set1_ps(a.alpha[r]), sum));
    a.m[r] = m_new;
  }
}

// 4 rows x 16 columns of O: 8 ymm accumulators; D padded to 16 so the tiles are whole.
KB_TARGET_AVX2 void accumulate_avx2(const BlockArgs& a) {
  for (int r0 = 0; r0 < a.rows; r0 += 4) {
    const int keys = visible_keys(a, r0, 4);
    const float* p = a.s + r0 * kBK;
    for (int64_t d0 = 0; d0 < a.dim_pad; d0 += 16) {
      __m256 acc[4][2];
      for (int r = 0; r < 4; ++r) {
        const __m256 alpha = _mm256_set1_ps(a.alpha[r0 + r]);
        const float* o = a.o + (r0 + r) * a.dim_pad + d0;
        acc[r][0] = _mm256_mul_ps(alpha, _mm256_load_ps(o));
        acc[r][1] = _mm256_mul_ps(alpha, _mm256_load_ps(o + 8));
      }
      for (int c = 0; c < keys; ++c) {
        const float* vrow = a.v + c * a.dim_pad + d0;
        const __m256 v0 = _mm256_load_ps(vrow), v1 = _mm256_load_ps(vrow + 8);
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) {
          const __m256 pb = _mm256_broadcast_ss(p + r * kBK + c);
          acc[r][0] = _mm256_fmadd_ps(pb, v0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(pb, v1, acc[r][1]);
        }
      }
      for (int r = 0; r < 4; ++r) {
        float* o = a.o + (r0 + r) * a.dim_pad + d0;
        _mm256_store_ps(o, acc[r][0]);
        _mm256_store_ps(o + 8, acc[r][1]);
      }
    }
  }
}

// ---- AMX path ----
//
// Tiles of 16 rows x 64 bytes (amx_tiles.h). The operands are bf16, the accumulators f32:
//   Q block:  BQ x Dk_pad bf16 rows (Dk_pad = Dk rounded up to 32, zeros past Dk and past the
//             block's rows); A tile (16 rows, 32 dims) at q + r0 * Dk_pad + 32 t.
//   K pack:   per 16 keys, Dk_pad / 32 B tiles of 1 KiB; row i of tile t holds the pairs
//             (K[j][32t + 2i], K[j][32t + 2i + 1]) of its 16 keys j: a 16 x 16 transpose of the
//             keys' rows read as 32-bit pairs. Key block j0 starts at j0 * Dk_pad.
//   V pack:   per 32 keys, dim_pad / 16 B tiles; row i of tile n holds the pairs
//             (V[2i][16n + c], V[2i + 1][16n + c]) of 16 value columns c. Key block j0 starts at
//             j0 * dim_pad.
//   P:        BQ x BK bf16 rows, A tile (16 rows, 32 keys) at p + r0 * BK + 32 g.
// The C tiles of S are stored to s (f32, BK apart); those of O are loaded from o, accumulated and
// stored back after AVX-512 has scaled o by alpha.

using amx_tiles::kDepth;
using amx_tiles::kElems;
using amx_tiles::kPairs;
using amx_tiles::kRows;

inline int64_t amx_dim_k(int64_t dim) {
  return round_up(dim, kDepth);
}

// C (mt x nt tiles, mt and nt 1 or 2) = [C +] sum over `steps` of A_t B_t. Row tile 1 of A is
// 16 rows below row tile 0; column tile 1 of B is b_col elements after column tile 0; step t
// moves A by a_step and B by b_step elements.
struct TileProduct {
  const std::uint16_t* a;
  int64_t a_ld, a_step;
  const std::uint16_t* b;
  int64_t b_col, b_step;
  float* c;
  int64_t c_ld;
};

// The tile numbers are part of the instructions: tmm0-3 hold C, tmm4-5 A, tmm6-7 B.
template <int kMt, int kNt>
KB_TARGET_AMX __attribute__((noinline)) void tile_product(const TileProduct& op, int64_t steps,
                                                          bool load_c) {
  const long a_stride = op.a_ld * 2, b_stride = amx_tiles::kRowBytes, c_stride = op.c_ld * 4;
  const std::uint16_t* a1 = op.a + kRows * op.a_ld;
  const std::uint16_t* b1 = op.b + op.b_col;
  float* c1 = op.c + kRows * op.c_ld;
  asm volatile("" : : : "memory");  // the operands were stored before this call
  if (load_c) {
    _tile_loadd(0, op.c, c_stride);
    if constexpr (kNt == 2) _tile_loadd(1, op.c + kPairs, c_stride);
    if constexpr (kMt == 2) _tile_loadd(2, c1, c_stride);
    if constexpr (kMt == 2 && kNt == 2) _tile_loadd(3, c1 + kPairs, c_stride);
  } else {
    _tile_zero(0);
    if constexpr (kNt == 2) _tile_zero(1);
    if constexpr (kMt == 2) _tile_zero(2);
    if constexpr (kMt == 2 && kNt == 2) _tile_zero(3);
  }
  for (int64_t t = 0; t < steps; ++t) {
    _tile_loadd(4, op.a + t * op.a_step, a_stride);
    _tile_loadd(6, op.b + t * op.b_step, b_stride);
    _tile_dpbf16ps(0, 4, 6);
    if constexpr (kNt == 2) {
      _tile_loadd(7, b1 + t * op.b_step, b_stride);
      _tile_dpbf16ps(1, 4, 7);
    }
    if constexpr (kMt == 2) {
      _tile_loadd(5, a1 + t * op.a_step, a_stride);
      _tile_dpbf16ps(2, 5, 6);
      if constexpr (kNt == 2) _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, op.c, c_stride);
  if constexpr (kNt == 2) _tile_stored(1, op.c + kPairs, c_stride);
  if constexpr (kMt == 2) _tile_stored(2, c1, c_stride);
  if constexpr (kMt == 2 && kNt == 2) _tile_stored(3, c1 + kPairs, c_stride);
  asm volatile("" : : : "memory");  // the stores above precede the caller's reads of C
}

inline void tile_product(const TileProduct& op, int64_t steps, bool load_c, int mt, int nt) {
  if (mt == 2)
    nt == 2 ? tile_product<2, 2>(op, steps, load_c) : tile_product<2, 1>(op, steps, load_c);
  else
    nt == 2 ? tile_product<1, 2>(op, steps, load_c) : tile_product<1, 1>(op, steps, load_c);
}

// The K and V packs above. Every AMX CPU has AVX-512 (and best_isa asks for both).
KB_TARGET_AVX512 void pack_keys_amx(const PackGeometry& g, const Rows& k, std::uint16_t* kt) {
  const int64_t dim_pad = amx_dim_k(g.dim);
  for (int64_t j0 = 0; j0 < g.keys_pad; j0 += kRows) {
    std::uint16_t* dst = kt + j0 * dim_pad;
    for (int64_t d0 = 0; d0 < dim_pad; d0 += kDepth) {
      const int64_t cols = std::clamp<int64_t>(g.dim - d0, 0, kDepth);
      const __mmask32 col_mask = cols == kDepth ? ~0u : (1u << cols) - 1u;
      __m512 r[16], t[16];
      for (int i = 0; i < 16; ++i)
        r[i] = j0 + i < g.keys
                   ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(col_mask, k.row(j0 + i) + d0))
                   : _mm512_setzero_ps();
      transpose_16x16(r, t);
      for (int i = 0; i < kRows; ++i) _mm512_store_ps(dst + i * kDepth, t[i]);
      dst += kElems;
    }
  }
}

KB_TARGET_AVX512 void pack_values_amx(const Rows& v, int64_t keys, int64_t keys_pad, int64_t dim_v,
                                      int64_t dim_pad, std::uint16_t* vp) {
  const __m256i zero = _mm256_setzero_si256();
  for (int64_t j0 = 0; j0 < keys_pad; j0 += kDepth)
    for (int64_t n0 = 0; n0 < dim_pad; n0 += kPairs) {
      const int64_t cols = std::clamp<int64_t>(dim_v - n0, 0, kPairs);
      const __mmask16 col_mask = static_cast<__mmask16>((1u << cols) - 1u);
      for (int i = 0; i < kRows; ++i) {
        const int64_t j = j0 + 2 * i;
        const __m256i even = j < keys ? _mm256_maskz_loadu_epi16(col_mask, v.row(j) + n0) : zero;
        const __m256i odd =
            j + 1 < keys ? _mm256_maskz_loadu_epi16(col_mask, v.row(j + 1) + n0) : zero;
        _mm512_store_si512(vp + i * kDepth, amx_tiles::interleave_pairs(even, odd));
      }
      vp += kElems;
    }
}

void pack_kv_amx(const PackGeometry& g, const KvHead& kv, int64_t dim_v, int64_t dim_pad, float* kt,
                 float* v) {
  pack_keys_amx(g, kv.k, reinterpret_cast<std::uint16_t*>(kt));
  pack_values_amx(kv.v, g.keys, g.keys_pad, dim_v, dim_pad, reinterpret_cast<std::uint16_t*>(v));
}

// The bf16 query rows as they are (the scale goes to the scores), zero past Dk and `rows`.
void load_queries_amx(const QueryItem& it, int64_t t0, int64_t rows, int64_t dim, float, float* q) {
  const int64_t dim_pad = amx_dim_k(dim);
  auto* dst = reinterpret_cast<std::uint16_t*>(q);
  std::fill(dst, dst + kBQ * dim_pad, std::uint16_t{0});
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * dim_pad, it.q + (t0 + r) * it.q_ld, dim * sizeof(std::uint16_t));
}

// S in blocks of 32 rows x 32 keys (16-row blocks for a 16-row tail), skipping the key tiles no
// row of the block sees.
void scores_amx(const BlockArgs& a) {
  const int64_t dim_pad = amx_dim_k(a.dim), steps = dim_pad / kDepth;
  const auto* q = reinterpret_cast<const std::uint16_t*>(a.q);
  const auto* kt = reinterpret_cast<const std::uint16_t*>(a.kt);
  for (int r0 = 0; r0 < a.rows; r0 += 2 * kRows) {
    const int mt = std::min(2, (a.rows - r0) / kRows), rows = mt * kRows;
    for (int c0 = 0; c0 < kBK; c0 += 2 * kPairs) {
      if (tile_masked(a, r0, rows, c0)) continue;
      const int nt = tile_masked(a, r0, rows, c0 + kPairs) ? 1 : 2;
      const TileProduct op{
          q + r0 * dim_pad,    dim_pad, kDepth, kt + c0 * dim_pad, kPairs * dim_pad, kElems,
          a.s + r0 * kBK + c0, kBK};
      tile_product(op, steps, false, mt, nt);
    }
  }
}

// The AVX-512 softmax on scaled scores, with the probabilities rounded to bf16 into p by one
// vcvtneps2bf16 per 16 (to nearest even, as kb_f32_to_bf16; it flushes f32 subnormals, which are
// probabilities below 2^-126, to zero), against six integer instructions: 1p and 4p 5-6% faster
// on the AMX Xeon. The row sums add the rounded values, so the output is a weighted mean of V with
// weights that sum to 1 exactly as P V sees them.
KB_TARGET_AVX512_BF16 void softmax_amx(const BlockArgs& a) {
  row_maxima_avx512<true>(a);
  rescale_factors_avx512(a);
  const __m512 scale = _mm512_set1_ps(a.score_scale);
  for (int r = 0; r < a.rows; ++r) {
    const float* s = a.s + r * kBK;
    std::uint16_t* p = a.p + r * kBK;
    const int n = visible_keys(a, r, 1);
    const __m512 mv = _mm512_set1_ps(a.m[r]);
    __m512 sum = _mm512_mul_ps(_mm512_load_ps(a.l + r * kSumLanes), _mm512_set1_ps(a.alpha[r]));
    int c0 = 0;
    for (; c0 < n; c0 += 16) {
      const __m512 e = _mm512_maskz_mov_ps(
          first_lanes(n, c0), exp2_avx512(_mm512_fmsub_ps(_mm512_load_ps(s + c0), scale, mv)));
      const auto rounded = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(e));
      sum = _mm512_add_ps(
          sum, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(rounded), 16)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(p + c0), rounded);
    }
    // P V reads whole 32-key tiles up to the last visible key of its block's last row.
    for (; c0 < kBK; c0 += 16)
      _mm256_store_si256(reinterpret_cast<__m256i*>(p + c0), _mm256_setzero_si256());
    _mm512_store_ps(a.l + r * kSumLanes, sum);
  }
}

KB_TARGET_AVX512 void rescale_output_avx512(const BlockArgs& a) {
  for (int r = 0; r < a.rows; ++r) {
    const __m512 alpha = _mm512_set1_ps(a.alpha[r]);
    float* o = a.o + r * a.dim_pad;
    for (int64_t d0 = 0; d0 < a.dim_pad; d0 += 16)
      _mm512_store_ps(o + d0, _mm512_mul_ps(alpha, _mm512_load_ps(o + d0)));
  }
}

// O = O * alpha, then O += P V in blocks of 32 rows x 32 columns, over the 32-key tiles up to the
// last key some row of the block sees (P is zero past each row's own).
void accumulate_amx(const BlockArgs& a) {
  rescale_output_avx512(a);
  const auto* v = reinterpret_cast<const std::uint16_t*>(a.v);
  const int64_t col_tiles = a.dim_pad / kPairs;
  for (int r0 = 0; r0 < a.rows; r0 += 2 * kRows) {
    const int mt = std::min(2, (a.rows - r0) / kRows);
    const int64_t steps = (visible_keys(a, r0, mt * kRows) + kDepth - 1) / kDepth;
    if (steps == 0) continue;
    for (int64_t n0 = 0; n0 < col_tiles; n0 += 2) {
      const int nt = static_cast<int>(std::min<int64_t>(2, col_tiles - n0));
      const TileProduct op{a.p + r0 * kBK,
                           kBK,
                           kDepth,
                           v + n0 * kElems,
                           kElems,
                           col_tiles * kElems,
                           a.o + r0 * a.dim_pad + n0 * kPairs,
                           a.dim_pad};
      tile_product(op, steps, true, mt, nt);
    }
  }
}

void begin_amx() {
  amx_tiles::configure();
}

void end_amx() {
  amx_tiles::release();
}

// ---- Driver ----

// K by `PackKeys`, V as dim_pad-wide f32 rows; keys past the last and columns past Dv zero.
template <void (*PackKeys)(const PackGeometry&, const Rows&, float*)>
void pack_kv_f32(const PackGeometry& g, const KvHead& kv, int64_t dim_v, int64_t dim_pad, float* kt,
                 float* vp) {
  PackKeys(g, kv.k, kt);
  for (int64_t j = 0; j < g.keys; ++j) {
    float* vrow = vp + j * dim_pad;
    const std::uint16_t* vs = kv.v.row(j);
    for (int64_t d = 0; d < dim_v; ++d) vrow[d] = kb_bf16_to_f32(vs[d]);
    for (int64_t d = dim_v; d < dim_pad; ++d) vrow[d] = 0.0f;
  }
  std::fill(vp + g.keys * dim_pad, vp + g.keys_pad * dim_pad, 0.0f);
}

// The query rows widened to f32 and multiplied by `scale` (the softmax then needs no scale).
void load_queries_f32(const QueryItem& it, int64_t t0, int64_t rows, int64_t dim, float scale,
                      float* q) {
  for (int64_t r = 0; r < rows; ++r) {
    const std::uint16_t* qs = it.q + (t0 + r) * it.q_ld;
    for (int64_t d = 0; d < dim; ++d) q[r * dim + d] = kb_bf16_to_f32(qs[d]) * scale;
  }
  std::fill(q + rows * dim, q + kBQ * dim, 0.0f);
}

void no_tiles() {}

inline Path select_path() {
  using isa::Isa;
  switch (isa::best_isa(Isa::kAmx)) {
    case Isa::kAmx:
      return {Isa::kAmx,  kPairs,      true,           pack_kv_amx, load_queries_amx,
              scores_amx, softmax_amx, accumulate_amx, begin_amx,   end_amx};
    case Isa::kAvx512:
      return {Isa::kAvx512,     16 * KB_QK_NV, false,          pack_kv_f32<pack_keys_avx512>,
              load_queries_f32, scores_avx512, softmax_avx512, accumulate_avx512,
              no_tiles,         no_tiles};
    case Isa::kAvx2:
      return {Isa::kAvx2,       16,          false,        pack_kv_f32<pack_keys_scalar>,
              load_queries_f32, scores_avx2, softmax_avx2, accumulate_avx2,
              no_tiles,         no_tiles};
    case Isa::kScalar:
      break;
  }
  return {Isa::kScalar,
          16,
          false,
          pack_kv_f32<pack_keys_scalar>,
          load_queries_f32,
          scores_scalar,
          softmax_scalar,
          accumulate_scalar,
          no_tiles,
          no_tiles};
}

inline Layout layout(const Path& path, int64_t dim_k, int64_t dim_pad) {
  if (path.bf16_tiles) return {amx_dim_k(dim_k) / 2, dim_pad / 2, amx_dim_k(dim_k) / 2};
  return {dim_k, dim_pad, dim_k};
}

// One thread's scratch. `packed_call` / `packed_kv` name the kv head whose K and V are in `kt` and
// `v`: packs are reused between query blocks and query heads of the same kv head within one call
// only.
struct Scratch {
  AlignedBuffer kt, v, q, s, p, o, state;
  std::uint64_t packed_call = 0;
  int64_t packed_kv = -1;
};

inline std::atomic<std::uint64_t> g_call{0};

inline Scratch& thread_scratch() {
  static thread_local Scratch scratch;
  return scratch;
}

// Query block `qb` of item `it`: all the key blocks its rows see, then its output rows.
inline void run_block(const Path& path, const Problem& p, const QueryItem& it, int64_t qb,
                      std::uint64_t call, Scratch& sc) {
  const KvHead& kv = p.kv[it.kv];
  const PackGeometry g{kv.keys, round_up(kv.keys, kBK), p.dim_k, path.key_panel};
  const int64_t dim_pad = round_up(p.dim_v, 16);
  const Layout lay = layout(path, g.dim, dim_pad);
  float* kt = sc.kt.get(g.keys_pad * lay.k_row);
  float* v = sc.v.get(g.keys_pad * lay.v_row);
  if (sc.packed_call != call || sc.packed_kv != it.kv) {
    path.pack_kv(g, kv, p.dim_v, dim_pad, kt, v);
    sc.packed_call = call;
    sc.packed_kv = it.kv;
  }
  float* q = sc.q.get(kBQ * lay.q_row);
  float* s = sc.s.get(kBQ * kBK);
  std::uint16_t* probs = path.bf16_tiles ? sc.p.get<std::uint16_t>(kBQ * kBK) : nullptr;
  float* o = sc.o.get(kBQ * dim_pad);
  float* state = sc.state.get((2 + kSumLanes) * kBQ);
  float *l = state, *m = state + kSumLanes * kBQ, *alpha = m + kBQ;

  const int64_t t0 = qb * kBQ;
  const int64_t rows = std::min<int64_t>(kBQ, it.rows - t0);
  const float scale = p.scale * kLog2e;
  path.load_queries(it, t0, rows, g.dim, scale, q);
  std::fill(o, o + kBQ * dim_pad, 0.0f);
  std::fill(m, m + kBQ, -INFINITY);
  std::fill(l, l + kSumLanes * kBQ, 0.0f);

  const int64_t i0 = it.offset + t0;
  BlockArgs a{.q = q,
              .kt = nullptr,
              .s = s,
              .v = nullptr,
              .o = o,
              .m = m,
              .l = l,
              .alpha = alpha,
              .dim = g.dim,
              .dim_v = p.dim_v,
              .dim_pad = dim_pad,
              .i0 = i0,
              .j0 = 0,
              .key_end = kv.keys,
              .rows = static_cast<int>(round_up(rows, 16)),
              .diagonal = false,
              .score_scale = path.bf16_tiles ? scale : 1.0f,
              .p = probs};
  // Keys the block's last real row sees; rows past `rows` (the zero padding of the last block)
  // are masked like real ones and discarded.
  const int64_t key_limit = std::min(i0 + rows, kv.keys);
  for (int64_t j0 = 0; j0 < key_limit; j0 += kBK) {
    a.j0 = j0;
    a.kt = kt + j0 * lay.k_row;
    a.v = v + j0 * lay.v_row;
    a.diagonal = j0 + kBK > std::min(i0 + 1, kv.keys);
    path.scores(a);
    path.softmax(a);
    path.accumulate(a);
  }

  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int lane = 0; lane < kSumLanes; ++lane) sum += l[r * kSumLanes + lane];
    const float inv = 1.0f / sum;
    std::uint16_t* dst = it.out + (t0 + r) * it.out_ld;
    for (int64_t d = 0; d < p.dim_v; ++d) dst[d] = kb_f32_to_bf16(o[r * dim_pad + d] * inv);
  }
}

}  // namespace detail

// Runs every item of `p` on `threads` threads (OpenMP). Returns 0, or 1 when an item has an
// offset < 0 or reads a kv head with no keys (a row that sees no key has no softmax).
inline int attend(const Problem& p, int threads) {
  using namespace detail;
  for (int64_t i = 0; i < p.num_items; ++i)
    if (p.items[i].rows > 0 && (p.items[i].offset < 0 || p.kv[p.items[i].kv].keys <= 0)) return 1;
  static const Path path = select_path();
  const std::uint64_t call = ++g_call;

  // Work units (item, query block), each item's last (longest) query blocks first.
  struct Unit {
    int64_t item, block;
  };
  std::vector<Unit> units;
  bool alike = true;
  for (int64_t i = 0; i < p.num_items; ++i) {
    const QueryItem& it = p.items[i];
    const QueryItem& first = p.items[0];
    alike = alike && it.rows == first.rows && it.offset == first.offset &&
            p.kv[it.kv].keys == p.kv[first.kv].keys;
    for (int64_t b = (it.rows + kBQ - 1) / kBQ - 1; b >= 0; --b) units.push_back({i, b});
  }
  const int64_t count = static_cast<int64_t>(units.size());
  const auto unit = [&](int64_t k, Scratch& sc) {
    run_block(path, p, p.items[units[k].item], units[k].block, call, sc);
  };
  if (threads <= 1) {
    path.begin_thread();
    for (int64_t k = 0; k < count; ++k) unit(k, thread_scratch());
    path.end_thread();
    return 0;
  }
  if (alike && p.num_items % threads == 0) {
    // Whole items per thread, consecutive ones: equal work, and each kv head is packed once per
    // thread that reads it.
#pragma omp parallel num_threads(threads)
    {
      Scratch& sc = thread_scratch();
      path.begin_thread();
#pragma omp for schedule(static) nowait
      for (int64_t k = 0; k < count; ++k) unit(k, sc);
      path.end_thread();
    }
  } else {
    // Uneven work: units handed out in order, an item's largest first; a thread that moves to
    // another kv head repacks it (O(keys * D) against the unit's O(BQ * keys * D)).
#pragma omp parallel num_threads(threads)
    {
      Scratch& sc = thread_scratch();
      path.begin_thread();
#pragma omp for schedule(dynamic, 1) nowait
      for (int64_t k = 0; k < count; ++k) unit(k, sc);
      path.end_thread();
    }
  }
  return 0;
}

// The extents of a GQA attention call (2p, 4p): q (in[0]), k, v (in[1], in[2]) and the one output,
// all bf16 and rank 4, with the batch first, the head dim last, and the sequence on `seq_axis` (1
// for BSHD, 2 for BHSD) and the heads on the other axis; k and v have hkv heads where q and the
// output have hq, and hkv divides hq.
struct GqaCall {
  int64_t batch, seq, hq, hkv, dim;
  const std::uint16_t *q, *k, *v;
  std::uint16_t* dst;
};

// The call's extents and data when its tensors are as GqaCall says; false otherwise.
inline bool gqa_call(const kb_tensor* in, int32_t num_inputs, const kb_tensor* out,
                     int32_t num_outputs, int seq_axis, GqaCall& c) {
  if (num_inputs != 3 || num_outputs != 1) return false;
  for (int i = 0; i < 3; ++i)
    if (in[i].dtype != KB_BF16 || in[i].rank != 4) return false;
  if (out[0].dtype != KB_BF16 || out[0].rank != 4) return false;
  const int head_axis = 3 - seq_axis;
  c = {in[0].shape[0],
       in[0].shape[seq_axis],
       in[0].shape[head_axis],
       in[1].shape[head_axis],
       in[0].shape[3],
       static_cast<const std::uint16_t*>(in[0].data),
       static_cast<const std::uint16_t*>(in[1].data),
       static_cast<const std::uint16_t*>(in[2].data),
       static_cast<std::uint16_t*>(out[0].data)};
  if (c.seq <= 0 || c.dim <= 0 || c.hkv <= 0 || c.hq % c.hkv != 0) return false;
  for (int i = 1; i < 3; ++i)
    if (in[i].shape[0] != c.batch || in[i].shape[seq_axis] != c.seq ||
        in[i].shape[head_axis] != c.hkv || in[i].shape[3] != c.dim)
      return false;
  for (int d = 0; d < 4; ++d)
    if (out[0].shape[d] != in[0].shape[d]) return false;
  return true;
}

}  // namespace flash
