// 1p_Flash_Attention expert: causal multi-head attention softmax(where(tril, q k^T D^-0.5, -1e9)) v
// over bf16 (B, H, S, D), f32 arithmetic, one rounding of the output.
//
// Flash-attention blocking with an online softmax, so the S x S scores never leave L1:
//   for each (batch, head), query block of BQ rows (the OpenMP items):
//     widen the block's query rows to f32, pre-multiplied by D^-0.5 * log2(e) (the softmax then
//     runs on exp2, and the scale costs nothing per score)
//     for each key block of BK keys at or left of the block's last row (the rest is fully masked:
//     skipping it halves the work of the causal operator):
//       S = Q K^T (BQ x BK, f32)               register-tiled micro-kernel, QK_MR x 16*QK_NV
//       per row: m' = max(m, max_j S), p = exp2(S - m'), l = l * exp2(m - m') + sum p
//       O = O * exp2(m - m') + P V (BQ x D)    register-tiled micro-kernel, PV_MR x 16*PV_NV
//     out = bf16(O / l), round to nearest even as kb_f32_to_bf16
// Only the key blocks that straddle the diagonal are masked element by element (a lane mask on
// the exp2 result, which writes exact zeros as exp(-1e9 - max) does in f32); micro-tiles of them
// entirely above the diagonal are skipped in both products.
//
// The row sums stay 16 partial sums per row until the block's end, and the rescale factors are
// computed 16 rows per vector: no horizontal sum and no scalar exp per row and key block.
//
// K and V are widened to f32 once per head and per thread (K transposed into key panels, so the
// QK micro-kernel loads 16 keys of one dimension per vector and broadcasts one query element per
// row; V row-major, D padded to whole vectors). Widening in the micro-kernels instead would cost a
// shuffle per vector on the port AVX-512 also needs for its second FMA. The per-head packs are
// 2 * S * D * 4 bytes (1 MiB at the cpu size), L2-resident; each key block is 2 * BK * D * 4 bytes.
//
// Threads: whole heads per thread when cfg->num_threads divides B * H (equal work, one pack per
// head); otherwise (batch, head, query block) items by a dynamic schedule, each head's longest
// (last) query blocks first, since the causal triangle makes block i cost i + 1 key blocks.
//
// Paths, chosen at the first call with __builtin_cpu_supports:
//   AVX-512F (+BW/VL/DQ): 16-lane tiles above; exp2 as vreduceps (x - floor x), a degree-5
//     polynomial and vscalefps (relative error 1.2e-7 from the fit, f32 rounding on top);
//     K transposed 16 x 16 in registers;
//   AVX2+FMA: 8-lane tiles 4 x 16 (QK) and 4 x 16 (PV), exp2 with the exponent built in integers;
//   scalar: plain loops, for x86-64 without AVX2.
// No AVX512-BF16 / AMX path (none could be run here, an Ice Lake without either); see
// docs/experts-1p_Flash_Attention.md for what one would change.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "kbench/kernel.h"

// GCC 12 flags its own _mm512_undefined_*() placeholders inside intrinsics as "maybe
// uninitialized" (and -Wuninitialized in _mm512_reduce_*_ps) under -Wall: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

// Tunables (the tuner parses these lines). BQ x BK is the block of scores kept in L1; the
// micro-tiles are the AVX-512 path's register tiles (the AVX2 path's are fixed).
// tune: KB_BQ = 32 64 128 (default 64)
// tune: KB_BK = 32 64 128 256 (default 64)
// tune: KB_QK_MR = 4 8 (default 8)
// tune: KB_QK_NV = 2 4 (default 2)
// tune: KB_PV_MR = 4 6 (default 6)
// tune: KB_PV_NV = 2 4 (default 4)
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
// Not a tunable: caps the path (2 AVX-512, 1 AVX2, 0 scalar) so the slower paths can be checked on
// a machine that has the faster ones.
#ifndef KB_MAX_PATH
#define KB_MAX_PATH 2
#endif

// 32 zmm registers hold the accumulators, the NV loaded vectors and a broadcast.
static_assert(KB_QK_MR * KB_QK_NV <= 28, "QK micro-tile: at most 28 accumulators");
static_assert(KB_PV_MR * KB_PV_NV <= 28, "PV micro-tile: at most 28 accumulators");
// Key panels are 16 * QK_NV keys wide (AVX-512) and 16 keys (AVX2); a key block is whole panels.
static_assert(KB_BK % (16 * KB_QK_NV) == 0, "KB_BK: whole QK micro-tiles");
static_assert(KB_BQ % 16 == 0 && KB_BQ % KB_QK_MR % 4 == 0, "KB_BQ: whole QK tiles or 4-row tails");
static_assert(KB_PV_MR <= 7, "PV row tails up to 6 rows");

#define KB_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
#define KB_TARGET_AVX2 __attribute__((target("avx2,fma")))

namespace {

using std::int64_t;

constexpr int kBQ = KB_BQ;
constexpr int kBK = KB_BK;
constexpr float kLog2e = 1.44269504088896340736f;

// 2^f on [0, 1): degree-5 polynomial interpolating 2^f at the Chebyshev nodes of [0, 1] (max
// relative error 1.2e-7 in f32, fitted for this file); 2^floor(x) goes into the exponent.
constexpr float kExp2C0 = 9.999998808e-01f, kExp2C1 = 6.931545138e-01f, kExp2C2 = 2.401418239e-01f,
                kExp2C3 = 5.586033687e-02f, kExp2C4 = 8.949590847e-03f, kExp2C5 = 1.893754001e-03f;
// Lanes of a row's partial sum: the vector paths keep l per lane and add the lanes once per block
// of queries, not once per key block.
constexpr int kSumLanes = 16;

int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// A grow-only, 64-byte aligned f32 buffer: packed operands and per-block partial state only,
// never results across calls. Kept per thread so every call does not fault in fresh pages.
class Buffer {
 public:
  float* get(int64_t count) {
    const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + 63) / 64 * 64;
    if (bytes > size_) {
      mem_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      size_ = mem_ ? bytes : 0;
    }
    return mem_.get();
  }

 private:
  std::unique_ptr<float[], FreeDeleter> mem_;
  size_t size_ = 0;
};

// The geometry of one call.
struct Geometry {
  int64_t heads, seq, dim;
  int64_t seq_pad;  // keys rounded up to whole key blocks (the padding keys are zero)
  int64_t dim_pad;  // V and O rows: D rounded up to whole zmm vectors (zero columns)
  int key_panel;    // keys per K panel: the QK micro-tile width of the path
};

// One query block against one key block, all in one thread's scratch.
//   q  BQ x D f32, scaled; kt: the key block's panels (key_panel keys x D each, d-major);
//   s  BQ x BK scores then probabilities; v: the key block's rows (BK x dim_pad);
//   o  BQ x dim_pad accumulator; m, alpha: per-row running max and this block's rescale;
//   l  per-row running sum as kSumLanes partial sums (BQ x kSumLanes).
// `i0` and `j0` are the first query row and key; `diagonal` when some key is right of row i0.
struct BlockArgs {
  const float* q;
  const float* kt;
  float* s;
  const float* v;
  float* o;
  float* m;
  float* l;
  float* alpha;
  int64_t dim, dim_pad;
  int64_t i0, j0;
  bool diagonal;
};

// A path: the K packing and the three inner steps over one (query block, key block) pair.
struct Path {
  int key_panel;
  void (*pack_keys)(const Geometry&, const std::uint16_t* k, float* kt);  // see pack_keys_scalar
  void (*scores)(const BlockArgs&);                                       // s = q kt
  void (*softmax)(const BlockArgs&);     // online softmax update of s, m, l, alpha
  void (*accumulate)(const BlockArgs&);  // o = o * alpha + s v
};

// A micro-tile (rows r0.., keys c0..) of a diagonal block is entirely masked when its first key is
// right of its last row.
bool tile_masked(const BlockArgs& a, int r0, int rows, int c0) {
  return a.diagonal && a.j0 + c0 > a.i0 + r0 + rows - 1;
}

// Keys of the block row tile (r0.., rows) can see: all BK, or up to its last row's diagonal.
int visible_keys(const BlockArgs& a, int r0, int rows) {
  if (!a.diagonal) return kBK;
  return static_cast<int>(std::clamp<int64_t>(a.i0 + r0 + rows - a.j0, 0, kBK));
}

// ---- Scalar path ----

// K of one head as f32 panels of `key_panel` keys, d-major within a panel (element (j, d) at
// kt[(j / panel) * panel * D + d * panel + j % panel]); keys past S zero. Each panel row is written
// contiguously (the panel's keys, a few KiB of K, stay in L1 while the loop walks down D).
void pack_keys_scalar(const Geometry& g, const std::uint16_t* k, float* kt) {
  const int panel = g.key_panel;
  for (int64_t j0 = 0; j0 < g.seq_pad; j0 += panel) {
    float* dst = kt + j0 * g.dim;
    const int64_t keys = std::clamp<int64_t>(g.seq - j0, 0, panel);
    for (int64_t d = 0; d < g.dim; ++d) {
      for (int64_t jj = 0; jj < keys; ++jj)
        dst[d * panel + jj] = kb_bf16_to_f32(k[(j0 + jj) * g.dim + d]);
      for (int64_t jj = keys; jj < panel; ++jj) dst[d * panel + jj] = 0.0f;
    }
  }
}

void scores_scalar(const BlockArgs& a) {
  for (int c0 = 0; c0 < kBK; c0 += 16) {
    const float* panel = a.kt + static_cast<int64_t>(c0) * a.dim;
    for (int r = 0; r < kBQ; ++r) {
      if (tile_masked(a, r, 1, c0)) continue;
      float acc[16] = {};
      for (int64_t d = 0; d < a.dim; ++d)
        for (int c = 0; c < 16; ++c) acc[c] += a.q[r * a.dim + d] * panel[d * 16 + c];
      std::memcpy(a.s + r * kBK + c0, acc, sizeof acc);
    }
  }
}

void softmax_scalar(const BlockArgs& a) {
  for (int r = 0; r < kBQ; ++r) {
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
  for (int r = 0; r < kBQ; ++r) {
    float* o = a.o + r * a.dim_pad;
    for (int64_t d = 0; d < a.dim; ++d) o[d] *= a.alpha[r];
    const int n = visible_keys(a, r, 1);
    for (int c = 0; c < n; ++c) {
      const float p = a.s[r * kBK + c];
      const float* v = a.v + c * a.dim_pad;
      for (int64_t d = 0; d < a.dim; ++d) o[d] += p * v[d];
    }
  }
}

// ---- AVX-512 path ----

// The K panels of pack_keys_scalar by 16 x 16 transposes in registers: 16 keys x 16 dimensions
// widened, transposed in three shuffle stages (32-bit, 64-bit, then 128-bit lanes twice), stored
// as 16 panel rows. The strided scalar loop costs ~5% of the whole kernel at the cpu size.
KB_TARGET_AVX512 void pack_keys_avx512(const Geometry& g, const std::uint16_t* k, float* kt) {
  const int panel = g.key_panel;
  for (int64_t j0 = 0; j0 < g.seq_pad; j0 += 16) {
    float* dst = kt + (j0 / panel) * panel * g.dim + j0 % panel;
    for (int64_t d0 = 0; d0 < g.dim; d0 += 16) {
      const int cols = static_cast<int>(std::min<int64_t>(16, g.dim - d0));
      const __mmask16 col_mask = static_cast<__mmask16>((1u << cols) - 1u);
      __m512 r[16], t[16];
      for (int i = 0; i < 16; ++i)
        r[i] = j0 + i < g.seq ? _mm512_castsi512_ps(_mm512_slli_epi32(
                                    _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(
                                        col_mask, k + (j0 + i) * g.dim + d0)),
                                    16))
                              : _mm512_setzero_ps();
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
      for (int c = 0; c < cols; ++c) _mm512_store_ps(dst + (d0 + c) * panel, t[c]);
    }
  }
}

// 2^x for finite x <= 0: f = x - floor(x) in one vreduceps, the polynomial, and vscalefps, which
// multiplies by 2^floor(x) itself (an exact 0 below the subnormals).
KB_TARGET_AVX512 inline __m512 exp2_avx512(__m512 x) {
  const __m512 f = _mm512_reduce_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p = _mm512_set1_ps(kExp2C5);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C4));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C3));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C2));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C1));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2C0));
  return _mm512_scalef_ps(p, x);
}

// Lanes of the 16 keys from c0 a row with `n` visible keys keeps.
KB_TARGET_AVX512 inline __mmask16 visible_lanes(int n, int c0) {
  const int k = std::clamp(n - c0, 0, 16);
  return static_cast<__mmask16>((1u << k) - 1u);
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
  constexpr int kFull = kBQ / kMR * kMR;
  for (int c0 = 0; c0 < kBK; c0 += kNR) {
    for (int r0 = 0; r0 < kFull; r0 += kMR)
      if (!tile_masked(a, r0, kMR, c0)) scores_tile_avx512<kMR, KB_QK_NV>(a, r0, c0);
    // BQ is a multiple of 4; a row tail of a tile goes 4 rows at a time.
    for (int r0 = kFull; r0 < kBQ; r0 += 4)
      if (!tile_masked(a, r0, 4, c0)) scores_tile_avx512<4, KB_QK_NV>(a, r0, c0);
  }
}

// Three passes over the block: row maxima (one horizontal reduction per row), the rescale
// factors 16 rows per vector, then exp2 with per-lane sums (no horizontal sum per key block).
KB_TARGET_AVX512 void softmax_avx512(const BlockArgs& a) {
  for (int r = 0; r < kBQ; ++r) {
    const float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int c0 = 0; c0 < n; c0 += 16)
      mx = _mm512_mask_max_ps(mx, visible_lanes(n, c0), mx, _mm512_load_ps(s + c0));
    // alpha holds the new maximum until the next pass turns it into exp2(m - m_new).
    a.alpha[r] = std::max(a.m[r], _mm512_reduce_max_ps(mx));
  }
  for (int r0 = 0; r0 < kBQ; r0 += 16) {  // BQ % 16 == 0
    const __m512 m_old = _mm512_loadu_ps(a.m + r0), m_new = _mm512_loadu_ps(a.alpha + r0);
    _mm512_storeu_ps(a.m + r0, m_new);
    // m_old is -inf on the first key block: clamped, exp2 gives the exact 0 that empties O and l.
    _mm512_storeu_ps(a.alpha + r0,
                     exp2_avx512(_mm512_max_ps(_mm512_sub_ps(m_old, m_new), _mm512_set1_ps(-256))));
  }
  for (int r = 0; r < kBQ; ++r) {
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
      const __m512 p = _mm512_maskz_mov_ps(visible_lanes(n, c0),
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
  for (; r0 + kMR <= kBQ; r0 += kMR) accumulate_rows_avx512<kMR>(a, r0);
  switch (kBQ - r0) {  // the row tail, 0..MR-1 rows
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

// 2^x for x <= 0 (finite): x clamped at -127, where the built exponent field is 0 and the result
// an exact zero (the masked scores' exp(-1e9 - max) is 0 too).
KB_TARGET_AVX2 inline __m256 exp2_avx2(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-127.0f));
  const __m256 n = _mm256_floor_ps(x);
  const __m256 f = _mm256_sub_ps(x, n);
  __m256 p = _mm256_set1_ps(kExp2C5);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C4));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C3));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C2));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C1));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(kExp2C0));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// All-ones lanes for the 8 keys from c0 a row with `n` visible keys keeps.
KB_TARGET_AVX2 inline __m256 visible_lanes_avx2(int n, int c0) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n - c0), lane));
}

// 4 rows x 16 keys (one K panel): 8 ymm accumulators.
KB_TARGET_AVX2 void scores_avx2(const BlockArgs& a) {
  for (int c0 = 0; c0 < kBK; c0 += 16) {
    const float* panel = a.kt + static_cast<int64_t>(c0) * a.dim;
    for (int r0 = 0; r0 < kBQ; r0 += 4) {
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
  for (int r = 0; r < kBQ; ++r) {
    float* s = a.s + r * kBK;
    const int n = visible_keys(a, r, 1);
    __m256 mx = _mm256_set1_ps(-INFINITY);
    for (int c0 = 0; c0 < n; c0 += 8)
      mx = _mm256_max_ps(mx, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_load_ps(s + c0),
                                              visible_lanes_avx2(n, c0)));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, mx);
    float m_new = a.m[r];
    for (float x : lanes) m_new = std::max(m_new, x);
    const __m256 mv = _mm256_set1_ps(m_new);
    __m256 sum = _mm256_setzero_ps();
    for (int c0 = 0; c0 < kBK; c0 += 8) {
      __m256 p = _mm256_setzero_ps();
      if (c0 < n)
        p = _mm256_and_ps(exp2_avx2(_mm256_sub_ps(_mm256_load_ps(s + c0), mv)),
                          visible_lanes_avx2(n, c0));
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
  for (int r0 = 0; r0 < kBQ; r0 += 4) {
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

// ---- Driver ----

Path select_path() {
  if (KB_MAX_PATH >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return {16 * KB_QK_NV, pack_keys_avx512, scores_avx512, softmax_avx512, accumulate_avx512};
  if (KB_MAX_PATH >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return {16, pack_keys_scalar, scores_avx2, softmax_avx2, accumulate_avx2};
  return {16, pack_keys_scalar, scores_scalar, softmax_scalar, accumulate_scalar};
}

// One thread's scratch. `packed_call` / `packed_head` name the head whose K and V are in `kt`
// and `v`: packs are reused between query blocks of the same head within one call only.
struct Scratch {
  Buffer kt, v, q, s, o, state;
  std::uint64_t packed_call = 0;
  int64_t packed_head = -1;
};

std::atomic<std::uint64_t> g_call{0};

Scratch& thread_scratch() {
  static thread_local Scratch scratch;
  return scratch;
}

// K of head `bh` by the path's pack_keys, V as dim_pad-wide rows; keys past S and columns past D
// zero.
void pack_head(const Path& path, const Geometry& g, const std::uint16_t* k, const std::uint16_t* v,
               float* kt, float* vp) {
  path.pack_keys(g, k, kt);
  for (int64_t j = 0; j < g.seq; ++j) {
    float* vrow = vp + j * g.dim_pad;
    const std::uint16_t* vs = v + j * g.dim;
    for (int64_t d = 0; d < g.dim; ++d) vrow[d] = kb_bf16_to_f32(vs[d]);
    for (int64_t d = g.dim; d < g.dim_pad; ++d) vrow[d] = 0.0f;
  }
  std::fill(vp + g.seq * g.dim_pad, vp + g.seq_pad * g.dim_pad, 0.0f);
}

// Query block `qb` of head `bh`: all its key blocks, then its output rows.
void run_block(const Path& path, const Geometry& g, const kb_tensor* in, std::uint16_t* out,
               int64_t bh, int64_t qb, std::uint64_t call, Scratch& sc) {
  const int64_t head_offset = bh * g.seq * g.dim;
  float* kt = sc.kt.get(g.seq_pad * g.dim);
  float* v = sc.v.get(g.seq_pad * g.dim_pad);
  if (sc.packed_call != call || sc.packed_head != bh) {
    pack_head(path, g, static_cast<const std::uint16_t*>(in[1].data) + head_offset,
              static_cast<const std::uint16_t*>(in[2].data) + head_offset, kt, v);
    sc.packed_call = call;
    sc.packed_head = bh;
  }
  float* q = sc.q.get(kBQ * g.dim);
  float* s = sc.s.get(kBQ * kBK);
  float* o = sc.o.get(kBQ * g.dim_pad);
  float* state = sc.state.get((2 + kSumLanes) * kBQ);
  float *l = state, *m = state + kSumLanes * kBQ, *alpha = m + kBQ;

  const int64_t i0 = qb * kBQ;
  const int64_t rows = std::min<int64_t>(kBQ, g.seq - i0);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.dim))) * kLog2e;
  const auto* qs = static_cast<const std::uint16_t*>(in[0].data) + head_offset + i0 * g.dim;
  for (int64_t e = 0; e < rows * g.dim; ++e) q[e] = kb_bf16_to_f32(qs[e]) * scale;
  std::fill(q + rows * g.dim, q + kBQ * g.dim, 0.0f);
  std::fill(o, o + kBQ * g.dim_pad, 0.0f);
  std::fill(m, m + kBQ, -INFINITY);
  std::fill(l, l + kSumLanes * kBQ, 0.0f);

  BlockArgs a{q, nullptr, s, nullptr, o, m, l, alpha, g.dim, g.dim_pad, i0, 0, false};
  const int64_t last_row = i0 + rows - 1;
  for (int64_t j0 = 0; j0 <= last_row; j0 += kBK) {
    a.j0 = j0;
    a.kt = kt + j0 * g.dim;
    a.v = v + j0 * g.dim_pad;
    // Rows past S (the zero padding of the last block) are masked like real ones and discarded.
    a.diagonal = j0 + kBK - 1 > i0;
    path.scores(a);
    path.softmax(a);
    path.accumulate(a);
  }

  std::uint16_t* dst = out + head_offset + i0 * g.dim;
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int lane = 0; lane < kSumLanes; ++lane) sum += l[r * kSumLanes + lane];
    const float inv = 1.0f / sum;
    for (int64_t d = 0; d < g.dim; ++d)
      dst[r * g.dim + d] = kb_f32_to_bf16(o[r * g.dim_pad + d] * inv);
  }
}

}  // namespace

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

  static const Path path = select_path();
  const Geometry g{query.shape[0] * query.shape[1],
                   query.shape[2],
                   query.shape[3],
                   round_up(query.shape[2], kBK),
                   round_up(query.shape[3], 16),
                   path.key_panel};
  const std::uint64_t call = ++g_call;
  auto* dst = static_cast<std::uint16_t*>(out[0].data);
  const int64_t blocks = (g.seq + kBQ - 1) / kBQ;
  const int64_t items = g.heads * blocks;
  // Item k: head k / blocks, its query blocks last (the most key blocks) first, so the dynamic
  // schedule hands out the triangle's long items before its short ones.
  const auto item = [&](int64_t k, Scratch& sc) {
    run_block(path, g, in, dst, k / blocks, blocks - 1 - k % blocks, call, sc);
  };
  const int threads = cfg != nullptr ? cfg->num_threads : 1;
  if (threads <= 1) {
    for (int64_t k = 0; k < items; ++k) item(k, thread_scratch());
    return 0;
  }
  if (g.heads % threads == 0) {
    // Whole heads per thread: equal work, and each head's K and V are packed once.
#pragma omp parallel num_threads(threads)
    {
      Scratch& sc = thread_scratch();
#pragma omp for schedule(static)
      for (int64_t k = 0; k < items; ++k) item(k, sc);
    }
  } else {
    // Heads do not divide evenly: items handed out largest first; a thread that moves to another
    // head repacks it (O(S * D) against the item's O(BQ * S * D)).
#pragma omp parallel num_threads(threads)
    {
      Scratch& sc = thread_scratch();
#pragma omp for schedule(dynamic, 1)
      for (int64_t k = 0; k < items; ++k) item(k, sc);
    }
  }
  return 0;
}
