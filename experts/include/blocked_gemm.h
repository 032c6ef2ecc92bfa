// blocked_gemm.h: the BLIS-style bf16 GEMM shared by the GEMM-class experts (8p_GEMM,
// 11p_Megablox_GMM): packing, micro-kernels per ISA, the blocked loop nest over a list of products,
// an AMX-BF16 path and the run-time path choice. Tunables stay in the experts (the tuner reads
// their `tune:` lines); everything here takes them as template or call parameters.
//
// One call multiplies a list of independent products C_q = A_q B_q (bf16 in, f32 sums, bf16 out
// rounded once), each operand a row-major view with its own leading dimension, so a product can be
// a sub-matrix (11p: one expert group's rows of lhs against that expert's weight). All products of
// one call share K; M and N may differ.
//
// The vector paths run BLIS's loops (see gemm_blocked):
//   for pc in K step KC:                       pack every product's A[:, pc..] (bf16 -> f32) into
//                                              MR-row panels (all threads; or each thread the
//                                              rows of its own items, Blocking::share_a)
//     for (q, jc in N_q step NC, ic in M_q step MC), split among threads by work:
//                                              pack B_q[pc.., jc..] (bf16 -> f32) into NR-column
//                                              panels, a block that stays in L2
//       for ir, for jr: micro-kernel, a rank-KC update of an MR x NR f32 tile in registers
// Widening while packing pays the bf16 -> f32 conversion once per element per block instead of
// once per use. Keeping B in bf16 and widening in the micro-kernel (kBf16B) halves the bytes
// streamed from L2 but adds two ALU uops per 32 columns on the ports the FMAs use; it measured
// slower in 8p. Per k the micro-kernel does NR/16 aligned B loads, MR broadcasts of A (load-port
// uops) and MR*NR/16 FMAs. When K > KC the partial sums go to an f32 scratch of C; the last K
// block rounds to bf16 (round to nearest even, as kb_f32_to_bf16) in the micro-kernel's store, so
// the result is rounded exactly once.
//
// Edges: packing zero-pads A rows and B columns to whole tiles, so the micro-kernel always runs
// full tiles; a partial tile of C is stored to a temporary tile and its valid part copied out.
//
// kbench expands this header into the expert that includes it (`#include
// "include/blocked_gemm.h"`), so the candidate is still one translation unit; everything has
// internal linkage.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "amx_tiles.h"
#include "isa.h"
#include "kbench/kernel.h"

// GCC 12 flags its own _mm512_undefined_*() placeholders inside the conversion intrinsics as
// "maybe uninitialized" under -Wall (a false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace {
namespace blocked_gemm {

using std::int64_t;

// ---- Operands, scratch ----

// One product C = A B: A (m x k), B (k x n), C (m x n), row-major with leading dimensions lda,
// ldb, ldc (elements), all bf16. C must not overlap A, B or another product's C.
struct Gemm {
  const uint16_t* a;
  int64_t lda;
  const uint16_t* b;
  int64_t ldb;
  uint16_t* c;
  int64_t ldc;
  int64_t m, k, n;
};

inline float widen(uint16_t h) {
  return kb_bf16_to_f32(h);
}

constexpr int64_t ceil_div(int64_t x, int64_t d) {
  return (x + d - 1) / d;
}

constexpr int64_t round_down_to(int64_t x, int64_t unit) {
  return std::max(unit, x / unit * unit);
}

// ---- Splitting work among threads ----

// Thread t of `threads` takes the items whose work midpoint falls in [t, t+1) * total / threads:
// contiguous runs (so a thread packs a B block once for the row blocks that follow it), each
// within half an item of an equal share, however uneven the items are (11p's groups).
// `cost` holds each item's work; returns the first item of each thread, and the end, in `first`.
inline void split_by_work(const std::vector<int64_t>& cost, int threads,
                          std::vector<int64_t>& first) {
  first.assign(static_cast<size_t>(threads) + 1, static_cast<int64_t>(cost.size()));
  int64_t total = 0;
  for (int64_t c : cost) total += c;
  first[0] = 0;
  int64_t before = 0;
  int t = 0;
  for (size_t i = 0; i < cost.size(); ++i) {
    // Twice the midpoint, to stay in integers: the item's thread is floor(mid * threads / total).
    const int64_t mid2 = 2 * before + cost[i];
    const int owner =
        total > 0 ? static_cast<int>(std::min<int64_t>(threads - 1, mid2 * threads / (2 * total)))
                  : 0;
    while (t < owner) first[static_cast<size_t>(++t)] = static_cast<int64_t>(i);
    before += cost[i];
  }
}

// ---- Packing ----

// Micro-panel `panel` of A (rows panel*MR.., k p0..p0+kc) as f32, k-major: element (i, p) at
// dst[p*MR + i], rows past M zero. The micro-kernel then broadcasts MR consecutive floats per k.
template <int MR>
void pack_a_panel(const Gemm& g, int64_t panel, int64_t p0, int64_t kc, float* dst) {
  const int64_t i0 = panel * MR, valid = std::min<int64_t>(MR, g.m - i0);
  for (int64_t i = 0; i < valid; ++i) {
    const uint16_t* src = g.a + (i0 + i) * g.lda + p0;
    for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = widen(src[p]);
  }
  for (int64_t i = valid; i < MR; ++i)
    for (int64_t p = 0; p < kc; ++p) dst[p * MR + i] = 0.0f;
}

// pack_a_panel with 8x8 transposes in ymm registers, for the vector paths (every CPU they run on
// has AVX2): 8 k of up to 8 rows are widened, transposed and stored as 8 runs of the rows' floats,
// so a panel costs ~0.5 shuffle-port cycles per element instead of a scalar load and store each.
KB_TARGET_AVX2 __attribute__((always_inline)) inline __m256 widen8_avx2(const uint16_t* src) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

KB_TARGET_AVX2 __attribute__((always_inline)) inline void transpose8x8_avx2(__m256 (&v)[8]) {
  __m256 t[8], u[8];
  for (int r = 0; r < 8; r += 2) {
    t[r] = _mm256_unpacklo_ps(v[r], v[r + 1]);
    t[r + 1] = _mm256_unpackhi_ps(v[r], v[r + 1]);
  }
  for (int r = 0; r < 8; r += 4) {
    u[r] = _mm256_shuffle_ps(t[r], t[r + 2], 0x44);
    u[r + 1] = _mm256_shuffle_ps(t[r], t[r + 2], 0xee);
    u[r + 2] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0x44);
    u[r + 3] = _mm256_shuffle_ps(t[r + 1], t[r + 3], 0xee);
  }
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    v[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

template <int MR>
KB_TARGET_AVX2 void pack_a_panel_avx2(const Gemm& g, int64_t panel, int64_t p0, int64_t kc,
                                      float* dst) {
  const int64_t i0 = panel * MR, valid = std::min<int64_t>(MR, g.m - i0);
  for (int r0 = 0; r0 < MR; r0 += 8) {
    const int rows = std::min(8, MR - r0);  // of the panel, in this group of 8
    const uint16_t* src[8];
    for (int r = 0; r < 8; ++r)
      src[r] = r < rows && r0 + r < valid ? g.a + (i0 + r0 + r) * g.lda + p0 : nullptr;
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), lanes);
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      __m256 v[8];
      for (int r = 0; r < 8; ++r) v[r] = src[r] ? widen8_avx2(src[r] + p) : _mm256_setzero_ps();
      transpose8x8_avx2(v);  // v[j]: k p+j of the 8 rows
      for (int j = 0; j < 8; ++j) _mm256_maskstore_ps(dst + (p + j) * MR + r0, mask, v[j]);
    }
    for (; p < kc; ++p)
      for (int r = 0; r < rows; ++r) dst[p * MR + r0 + r] = src[r] ? widen(src[r][p]) : 0.0f;
  }
}

// B (k p0..p0+kc, columns j0..j0+cols) as f32 micro-panels of NR columns: element (p, j) of
// panel q at dst[q*kc*NR + p*NR + j], columns past `cols` zero. Rows of B are read in order (one
// contiguous run of `cols` per k), which the hardware prefetchers follow; gathering one panel at
// a time instead reads a 64-byte piece per row of B, ldb*2 bytes apart, and stalls on L3 latency.
template <int NR>
void pack_b_block(const Gemm& g, int64_t p0, int64_t kc, int64_t j0, int64_t cols, float* dst) {
  const int64_t full = cols / NR;
  constexpr int64_t kAhead = 4;  // rows: runs of `cols` bf16 rarely span a whole page, so the
                                 // hardware prefetcher restarts on each; fetch a few rows ahead
  for (int64_t p = 0; p < kc; ++p) {
    const uint16_t* src = g.b + (p0 + p) * g.ldb + j0;
    if (p + kAhead < kc)
      for (int64_t j = 0; j < cols; j += 32)
        _mm_prefetch(reinterpret_cast<const char*>(src + kAhead * g.ldb + j), _MM_HINT_T0);
    for (int64_t q = 0; q < full; ++q) {
      float* d = dst + q * kc * NR + p * NR;
      const uint16_t* s = src + q * NR;
      for (int j = 0; j < NR; ++j) d[j] = widen(s[j]);
    }
    if (full * NR < cols) {
      float* d = dst + full * kc * NR + p * NR;
      const int64_t rest = cols - full * NR;
      for (int j = 0; j < NR; ++j) d[j] = j < rest ? widen(src[full * NR + j]) : 0.0f;
    }
  }
}

// The bf16 form of pack_b_block (kBf16B): the same panels, 2 bytes per element, with the columns
// of each 32-column group paired so that one 32-bit lane j holds column j (low half) and column
// j+16 (high half). The micro-kernel then widens a 64-byte load into two 16-column f32 vectors
// with one shift and one AND, no shuffle.
template <int NR>
void pack_b_block_bf16(const Gemm& g, int64_t p0, int64_t kc, int64_t j0, int64_t cols,
                       uint16_t* dst) {
  const int64_t panels = ceil_div(cols, NR);
  for (int64_t p = 0; p < kc; ++p) {
    const uint16_t* src = g.b + (p0 + p) * g.ldb + j0;
    for (int64_t q = 0; q < panels; ++q) {
      uint16_t* d = dst + q * kc * NR + p * NR;
      const int64_t base = q * NR;
      if (base + NR <= cols) {
        for (int z = 0; z < NR / 32; ++z)
          for (int j = 0; j < 16; ++j) {
            d[32 * z + 2 * j] = src[base + 32 * z + j];
            d[32 * z + 2 * j + 1] = src[base + 32 * z + 16 + j];
          }
      } else {
        for (int z = 0; z < NR / 32; ++z)
          for (int j = 0; j < 16; ++j) {
            const int64_t lo = base + 32 * z + j, hi = lo + 16;
            d[32 * z + 2 * j] = lo < cols ? src[lo] : 0;
            d[32 * z + 2 * j + 1] = hi < cols ? src[hi] : 0;
          }
      }
    }
  }
}

// What the micro-kernel does with its tile after the rank-kc update.
struct TileIo {
  const float* acc_in;  // partial sums to add (ld_acc apart), or null for the first K block
  float* acc_out;       // where to leave f32 partial sums, or null on the last K block
  int64_t ld_acc;
  uint16_t* c;  // the bf16 result (ldc apart) on the last K block
  int64_t ldc;
  // Only for a packing micro-kernel (kPackB): the B panel's bf16 source (b_cols valid columns,
  // rows ldb apart), read instead of a packed panel and left packed at b_dst.
  const uint16_t* b_src = nullptr;
  int64_t ldb = 0, b_cols = 0;
  float* b_dst = nullptr;
};

using UkernelFn = void (*)(int64_t, const float*, const void*, const TileIo&);

// ---- AVX-512: MR x NR micro-kernel, NR/16 zmm columns ----

// f32 -> bf16 bits, round to nearest even, NaN -> quiet NaN: kb_f32_to_bf16 on 16 lanes.
KB_TARGET_AVX512 __attribute__((always_inline)) inline __m256i bf16_avx512(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  __m512i r =
      _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

// PF, PFA: how many k steps ahead B and A are prefetched. kBf16B: B panels are bf16 (see
// pack_b_block_bf16), widened here. kPackB: the B panel is read from its bf16 source
// (io.b_src), widened, used and stored packed at io.b_dst, so that packing B overlaps with the
// FMAs instead of waiting on memory by itself; the widening costs 2 ALU uops per vector on the
// FMA ports, so only the first row panel of a B block runs this way (see gemm_blocked).
template <int MR, int NR, int PF, int PFA, bool kBf16B, bool kPackB = false>
KB_TARGET_AVX512 __attribute__((noinline)) void ukernel_avx512(int64_t kc,
                                                               const float* __restrict a,
                                                               const void* __restrict b_packed,
                                                               const TileIo& io) {
  constexpr int NV = NR / 16;
  // 32 zmm registers: the accumulators, NV B vectors, and at least one spare; 4-cycle FMA latency
  // on two FMA ports needs at least 8 independent accumulators.
  static_assert(NR % 16 == 0 && NR >= 16, "NR: whole zmm vectors");
  static_assert(MR >= 1 && MR * NV <= 28, "MR x NR: at most 28 accumulators");
  static_assert(MR * NV >= 8, "MR x NR: at least 8 accumulators");
  static_assert(!kBf16B || NR % 32 == 0, "bf16 B panels: whole 32-column bf16 vectors");
  static_assert(!(kBf16B && kPackB), "a packing micro-kernel packs f32 panels");
  const float* __restrict b = static_cast<const float*>(b_packed);
  const uint16_t* __restrict bh = static_cast<const uint16_t*>(b_packed);
  __mmask16 b_mask[NV];  // kPackB: the valid columns of each vector (the rest are packed as 0)
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t valid = std::clamp<int64_t>(io.b_cols - 16 * v, 0, 16);
    b_mask[v] = static_cast<__mmask16>((1u << valid) - 1);
  }
  // Partial sums from earlier K blocks are added after the k loop, not loaded before it: they come
  // from L3 (C's scratch is M x N), and the loop hides the prefetches' latency.
  __m512 acc[MR][NV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i) {
    if (io.acc_in)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        _mm_prefetch(reinterpret_cast<const char*>(io.acc_in + i * io.ld_acc + 16 * v),
                     _MM_HINT_T0);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  }
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    // Fetch B's lines PF k ahead and A's PFA k ahead: each new A micro-panel comes from the
    // packed A in L3, and without the A prefetch the micro-kernel waited on it (2-6% in 8p).
    _mm_prefetch(reinterpret_cast<const char*>(a + (p + PFA) * MR), _MM_HINT_T0);
    __m512 bv[NV];
    if constexpr (kBf16B) {
#pragma GCC unroll 4
      for (int z = 0; z < NV / 2; ++z) {
        _mm_prefetch(reinterpret_cast<const char*>(bh + (p + PF) * NR + 32 * z), _MM_HINT_T0);
        const __m512i w = _mm512_load_si512(bh + p * NR + 32 * z);
        bv[2 * z] = _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
        bv[2 * z + 1] = _mm512_castsi512_ps(_mm512_and_si512(w, _mm512_set1_epi32(-65536)));
      }
    } else if constexpr (kPackB) {
      // The source rows are ldb apart: fetch them kSourceAhead rows ahead (~L3 latency).
      constexpr int64_t kSourceAhead = 24;
      const uint16_t* src = io.b_src + p * io.ldb;
#pragma GCC unroll 4
      for (int z = 0; z < NR * 2; z += 64)
        _mm_prefetch(reinterpret_cast<const char*>(src + kSourceAhead * io.ldb) + z, _MM_HINT_T0);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const __m256i h = _mm256_maskz_loadu_epi16(b_mask[v], src + 16 * v);
        bv[v] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        _mm512_store_ps(io.b_dst + p * NR + 16 * v, bv[v]);
      }
    } else {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        _mm_prefetch(reinterpret_cast<const char*>(b + (p + PF) * NR + 16 * v), _MM_HINT_T0);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + p * NR + 16 * v);
    }
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const __m512 ai = _mm512_set1_ps(a[p * MR + i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(ai, bv[v], acc[i][v]);
    }
  }
  if (io.acc_in) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] = _mm512_add_ps(acc[i][v], _mm512_loadu_ps(io.acc_in + i * io.ld_acc + 16 * v));
  }
  if (io.acc_out) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(io.acc_out + i * io.ld_acc + 16 * v, acc[i][v]);
  } else {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(io.c + i * io.ldc + 16 * v),
                            bf16_avx512(acc[i][v]));
  }
}

// ---- AVX2: 6x16 micro-kernel (12 ymm accumulators, 2 B vectors, 1 broadcast) ----

constexpr int kMrAvx2 = 6;
constexpr int kNrAvx2 = 16;

template <int MR, int NR, int PF, int PFA>
KB_TARGET_AVX2 __attribute__((noinline)) void ukernel_avx2(int64_t kc, const float* __restrict a,
                                                           const void* __restrict b_packed,
                                                           const TileIo& io) {
  static_assert(MR == kMrAvx2 && NR == kNrAvx2, "the AVX2 tile is 6x16");
  const float* __restrict b = static_cast<const float*>(b_packed);
  __m256 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v)
      acc[i][v] =
          io.acc_in ? _mm256_loadu_ps(io.acc_in + i * io.ld_acc + 8 * v) : _mm256_setzero_ps();
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    _mm_prefetch(reinterpret_cast<const char*>(b + (p + PF) * NR), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(a + (p + PFA) * MR), _MM_HINT_T0);
    const __m256 b0 = _mm256_load_ps(b + p * NR), b1 = _mm256_load_ps(b + p * NR + 8);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + p * MR + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
    }
  }
  if (io.acc_out) {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (int v = 0; v < 2; ++v) _mm256_storeu_ps(io.acc_out + i * io.ld_acc + 8 * v, acc[i][v]);
  } else {
    // The rounding runs once per tile per call: scalar is plenty.
    alignas(32) float tile[MR][NR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (int v = 0; v < 2; ++v) _mm256_store_ps(&tile[i][8 * v], acc[i][v]);
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) io.c[i * io.ldc + j] = kb_f32_to_bf16(tile[i][j]);
  }
}

// ---- The blocked loop nest shared by the vector paths ----
//
// BLIS's loop order, with the roles of its operands mapped onto row-major C = A B (the vector
// side of the tile is a row of B, the broadcast side a column of A):
//   for pc in K step KC:                    pack all of every A_q[:, pc..] once (shared)
//     for q, jc in N step NC (threads):      pack B_q[pc.., jc..] once (private, L2-resident)
//       for ic in M step MC (threads):
//         for ir in MC step MR:              one A micro-panel (MR x KC) for the whole jr loop
//           for jr in NC step NR:            B micro-panels stream from the L2 block
//             micro-kernel
// At 6x64 the micro-kernel reads 256 bytes of B per k against 768 flops (~21 bytes per cycle);
// in isolation it ran as fast streaming a 672 KiB B block from L2 as re-reading one panel, so
// the block only has to fit L2 (KC x NC x 4 bytes <= ~0.75 MiB on a 1.25 MiB L2).

// Cache blocking of the vector paths; NC and MC are rounded down to whole tiles.
//   share_a true: every product's A block is packed once per K block by all threads together
//     and read by every thread (8p: one product whose rows all threads need);
//   share_a false: each thread packs the A rows of its own items when it reaches them, into a
//     private MC x KC buffer that stays in L2, and keeps them for the items after (11p: each
//     group's rows are needed only by the items of that group, so the packed A of all groups
//     (8 MiB at the cpu size) never has to be written out to L3 and read back).
struct Blocking {
  int64_t kc, mc, nc;
  bool share_a = true;
};

// C_q = A_q B_q for the `count` products `g` (which share K; none empty) with the MR x NR
// micro-kernel `ukernel` on `threads` OpenMP threads. `packing_ukernel`, when given (the kPackB
// form of `ukernel`), runs the first row panel of each B block and packs the block as it goes,
// in place of pack_b_block. False when scratch could not be allocated.
template <int MR, int NR, bool kBf16B>
bool gemm_blocked(const Gemm* g, int64_t count, const Blocking& blocking, int threads,
                  UkernelFn ukernel, UkernelFn packing_ukernel = nullptr) {
  if (count == 0) return true;
  const int64_t mc = round_down_to(blocking.mc, MR), nc = round_down_to(blocking.nc, NR);
  const int64_t k = g[0].k, kc = std::min<int64_t>(blocking.kc, k);
  const bool multi_pass = k > kc;

  // Per product: its first A panel and its partial-sum block (rows padded to MR, columns to NR).
  // Work items, in order (q, column block, row block), with their cost in padded tile flops.
  struct Item {
    int64_t q, i0, rows, j0, cols;
  };
  std::vector<int64_t> panel_start(static_cast<size_t>(count) + 1, 0),
      acc_start(static_cast<size_t>(count) + 1, 0);
  std::vector<Item> items;
  std::vector<int64_t> cost;
  for (int64_t q = 0; q < count; ++q) {
    const int64_t m_panels = ceil_div(g[q].m, MR), n_pad = ceil_div(g[q].n, NR) * NR;
    panel_start[q + 1] = panel_start[q] + m_panels;
    acc_start[q + 1] = acc_start[q] + (multi_pass ? m_panels * MR * n_pad : 0);
    for (int64_t j0 = 0; j0 < g[q].n; j0 += nc)
      for (int64_t i0 = 0; i0 < g[q].m; i0 += mc) {
        const int64_t rows = std::min(mc, g[q].m - i0), cols = std::min(nc, g[q].n - j0);
        items.push_back({q, i0, rows, j0, cols});
        cost.push_back(ceil_div(rows, MR) * MR * ceil_div(cols, NR) * NR);
      }
  }
  const int64_t total_panels = panel_start[count];
  threads = static_cast<int>(std::clamp<int64_t>(threads, 1, static_cast<int64_t>(items.size())));
  std::vector<int64_t> first;
  split_by_work(cost, threads, first);

  // Scratch: packed A (all panels x kc, or one MC x KC block per thread), one packed B block per
  // thread (kc x nc), f32 partial sums of every C only when K takes several passes. Each region
  // starts on a 64-byte line, as the micro-kernel's aligned B loads need.
  static AlignedBuffer pool;
  const bool share_a = blocking.share_a;
  const int64_t a_elems = ceil_div((share_a ? total_panels * MR : mc) * kc, 16) * 16;
  const int64_t a_copies = share_a ? 1 : threads;
  const int64_t b_elems = ceil_div(kc * nc, 16) * 16;
  float* ap_all = pool.get<float>(a_copies * a_elems + threads * b_elems + acc_start[count]);
  if (!ap_all) return false;
  float* bp_all = ap_all + a_copies * a_elems;
  float* cacc_all = bp_all + threads * b_elems;
#pragma omp parallel num_threads(threads)
  {
    int thread = 0;
#ifdef _OPENMP
    thread = omp_get_thread_num();
#endif
    float* bp = bp_all + thread * b_elems;
    float* ap = ap_all + (share_a ? 0 : thread * a_elems);
    alignas(64) uint16_t edge[MR * NR];
    for (int64_t p0 = 0; p0 < k; p0 += kc) {
      const int64_t kcur = std::min(kc, k - p0);
      const bool first_pass = p0 == 0, last_pass = p0 + kcur == k;
      if (share_a) {
#pragma omp for schedule(static)
        for (int64_t panel = 0; panel < total_panels; ++panel) {
          const int64_t q = std::upper_bound(panel_start.begin(), panel_start.end(), panel) -
                            panel_start.begin() - 1;
          pack_a_panel_avx2<MR>(g[q], panel - panel_start[q], p0, kcur, ap + panel * MR * kcur);
        }
        // (implicit barrier: A is packed before anyone multiplies)
      }
      // Column blocks outer, row blocks inner: each thread takes a contiguous run of items, so it
      // packs a B block once and reuses it for every MC-row block after it, while only that B
      // block and one MC x KC block of A compete for L2. A thread's items keep the same threads
      // in every K pass, so its partial sums are its own.
      int64_t packed_q = -1, packed_j0 = -1, packed_aq = -1, packed_ai0 = -1;
      for (int64_t it = first[thread]; it < first[thread + 1]; ++it) {
        const auto [q, i0, rows, j0, cols] = items[static_cast<size_t>(it)];
        const Gemm& gq = g[q];
        bool pack_in_kernel = false;  // this item's first row panel packs the B block
        if (q != packed_q || j0 != packed_j0) {
          if (!kBf16B && packing_ukernel)
            pack_in_kernel = true;
          else if constexpr (kBf16B)
            pack_b_block_bf16<NR>(gq, p0, kcur, j0, cols, reinterpret_cast<uint16_t*>(bp));
          else
            pack_b_block<NR>(gq, p0, kcur, j0, cols, bp);
          packed_q = q;
          packed_j0 = j0;
        }
        // The item's rows of A, i0 / MR panels into the product's (i0 is a multiple of MC).
        const float* a_block = ap + (panel_start[q] * MR + i0) * kcur;
        if (!share_a) {
          a_block = ap;
          if (q != packed_aq || i0 != packed_ai0)
            for (int64_t panel = 0; panel < ceil_div(rows, MR); ++panel)
              pack_a_panel_avx2<MR>(gq, i0 / MR + panel, p0, kcur, ap + panel * MR * kcur);
          packed_aq = q;
          packed_ai0 = i0;
        }
        const int64_t n_pad = ceil_div(gq.n, NR) * NR;
        float* cacc = cacc_all + acc_start[q];
        for (int64_t ir = 0; ir < rows; ir += MR) {
          const int64_t tile_rows = std::min<int64_t>(MR, rows - ir);
          const float* a_panel = a_block + ir * kcur;
          for (int64_t jr = 0; jr < cols; jr += NR) {
            const int64_t tile_cols = std::min<int64_t>(NR, cols - jr);
            const bool full = tile_rows == MR && tile_cols == NR;
            float* acc = cacc + (i0 + ir) * n_pad + j0 + jr;
            TileIo io{first_pass ? nullptr : acc, last_pass ? nullptr : acc, n_pad, nullptr, 0};
            uint16_t* c = gq.c + (i0 + ir) * gq.ldc + j0 + jr;
            if (last_pass) {
              io.c = full ? c : edge;
              io.ldc = full ? gq.ldc : NR;
            }
            const void* b_panel =
                kBf16B ? static_cast<const void*>(reinterpret_cast<const uint16_t*>(bp) + jr * kcur)
                       : static_cast<const void*>(bp + jr * kcur);
            if (pack_in_kernel && ir == 0) {
              io.b_src = gq.b + p0 * gq.ldb + j0 + jr;
              io.ldb = gq.ldb;
              io.b_cols = tile_cols;
              io.b_dst = bp + jr * kcur;
              packing_ukernel(kcur, a_panel, nullptr, io);
            } else {
              ukernel(kcur, a_panel, b_panel, io);
            }
            if (last_pass && !full)
              for (int64_t i = 0; i < tile_rows; ++i)
                std::memcpy(c + i * gq.ldc, edge + i * NR, tile_cols * sizeof(uint16_t));
          }
        }
      }
      // This pass's shared A is used up before the next pass repacks it.
      if (share_a) {
#pragma omp barrier
      }
    }
  }
  return true;
}

// ---- AMX-BF16: a K-blocked tile GEMM ----
//
// Eight tiles hold one 32x32 block of C (four f32 tiles), two A tiles (16 rows x 32 k, bf16) and
// two B tiles (32 k x 16 columns, pair-interleaved: tile row p holds (B[2p][n], B[2p+1][n]) for
// 16 columns n). Per 32-k step, four tile loads feed four tdpbf16ps of 16384 flops each, about 64
// cycles of the tile unit: 4 KiB of operands per 64 cycles, more than L2 sustains. So one operand
// comes from L1: a 32-row strip of A, KC deep (KC * 64 bytes), stays in L1 while it meets every
// 32-column block of a packed B panel (KC x NC, from L2). B is packed one NC-column panel at a
// time by the thread that multiplies it, just before, so the panel is still in L2 when it is used.
//   for each NC-column panel of each product (split among threads by work):
//     on the thread's first panel of a product: pack its A into 16-row tiles over all of K (tiles
//       read from A in place, rows 1.5 KiB apart at 8p's cpu size, measured 16% slower; packing
//       all products' A up front, through L3, left 11p 4-5% slower than each just before use)
//     pack B[:, panel] into 16-column tiles over all of K
//     for ib in M step 32:
//       for pc in K step KC:            the strip A[ib.., pc..] stays in L1
//         for jb in panel step 32:      tdpbf16ps over the KC / 32 steps on tmm0-3
// When K > KC, a block's sums leave the tiles between K passes for the strip's f32 scratch
// (32 x NC) and come back in the next pass; the last pass rounds them to bf16 (round to nearest
// even, as kb_f32_to_bf16) on the way to C, so C is rounded once, and a block is rounded while the
// tiles compute the next. Packing zero-pads A rows, B columns and K to whole tiles: the tile loop
// never branches on edges.

constexpr int64_t kTile = amx_tiles::kRows;    // rows of A and C tiles, columns of B and C tiles
constexpr int64_t kTileK = amx_tiles::kDepth;  // bf16 k per tile row (64 bytes)
constexpr int64_t kTileElems = amx_tiles::kElems;
constexpr int64_t kBlock = 2 * kTile;  // rows and columns of the C block held in tmm0-3

// The AMX path's tunables: K per pass (rounded down to whole 32-k steps) and the packed B panel's
// columns (rounded down to whole 32-column blocks). Software prefetch of the next k steps' B tiles
// measured slower than the hardware prefetchers alone.
struct AmxBlocking {
  int64_t kc = 256, nc = 256;
};

// The 32x32 f32 block at c (rows ldc floats apart) = (accumulate ? c : 0) + row tiles a0, a1 times
// column tiles b0, b1 over `k_tiles` 32-k steps; consecutive steps of a strip are kTileElems apart.
KB_TARGET_AMX __attribute__((noinline)) inline void amx_block(
    const uint16_t* a0, const uint16_t* a1, const uint16_t* b0, const uint16_t* b1, int64_t k_tiles,
    bool accumulate, float* c, int64_t ldc) {
  constexpr long kStride = kTileK * sizeof(uint16_t);
  const long c_stride = static_cast<long>(ldc * sizeof(float));
  float* c_low = c + kTile * ldc;   // rows 16..31
  asm volatile("" : : : "memory");  // the packed tiles and c were stored before this call
  if (accumulate) {
    _tile_loadd(0, c, c_stride);
    _tile_loadd(1, c + kTile, c_stride);
    _tile_loadd(2, c_low, c_stride);
    _tile_loadd(3, c_low + kTile, c_stride);
  } else {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  }
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    _tile_loadd(4, a0 + kt * kTileElems, kStride);
    _tile_loadd(6, b0 + kt * kTileElems, kStride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(7, b1 + kt * kTileElems, kStride);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a1 + kt * kTileElems, kStride);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, c_stride);
  _tile_stored(1, c + kTile, c_stride);
  _tile_stored(2, c_low, c_stride);
  _tile_stored(3, c_low + kTile, c_stride);
  asm volatile("" : : : "memory");  // the stores above precede the caller's reads of c
}

// Row tile mt of A over all k tiles into `strip` (k_tiles consecutive tiles), zero outside A.
inline void amx_pack_a(const Gemm& g, int64_t mt, int64_t k_tiles, uint16_t* strip) {
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    uint16_t* tile = strip + kt * kTileElems;
    std::memset(tile, 0, kTileElems * sizeof(uint16_t));
    const int64_t k0 = kt * kTileK, width = std::min(kTileK, g.k - k0);
    for (int64_t r = 0; r < kTile && mt * kTile + r < g.m; ++r)
      std::memcpy(tile + r * kTileK, g.a + (mt * kTile + r) * g.lda + k0, width * sizeof(uint16_t));
  }
}

// Elements of product g's packed A: 2 row tiles per 32-row block, each over all k tiles.
inline int64_t amx_packed_a_elems(const Gemm& g) {
  return 2 * ceil_div(g.m, kBlock) * ceil_div(g.k, kTileK) * kTileElems;
}

// Every row tile of product g's A into `a_packed` (amx_packed_a_elems), one after the other.
inline void amx_pack_a_all(const Gemm& g, uint16_t* a_packed) {
  const int64_t k_tiles = ceil_div(g.k, kTileK);
  for (int64_t mt = 0; mt < 2 * ceil_div(g.m, kBlock); ++mt)
    amx_pack_a(g, mt, k_tiles, a_packed + mt * k_tiles * kTileElems);
}

// The valid rows x cols of an f32 block (rows ld floats apart) rounded to bf16 into C.
KB_TARGET_AVX512 inline void amx_store_block(const float* block, int64_t ld, int64_t rows,
                                             int64_t cols, uint16_t* c, int64_t ldc) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; j += kTile) {
      const __mmask16 mask = static_cast<__mmask16>((1u << std::min<int64_t>(kTile, cols - j)) - 1);
      _mm256_mask_storeu_epi16(c + r * ldc + j, mask,
                               bf16_avx512(_mm512_load_ps(block + r * ld + j)));
    }
}

// The same with AVX512-BF16, which every AMX CPU has: one vcvtne2ps2bf16 rounds a 32-column row
// (to nearest even, as kb_f32_to_bf16; it differs only on f32 subnormals, which it flushes to
// zero), against about twenty integer instructions.
__attribute__((target("avx512f,avx512bw,avx512bf16"))) inline void amx_store_block_bf16(
    const float* block, int64_t ld, int64_t rows, int64_t cols, uint16_t* c, int64_t ldc) {
  const __mmask32 mask = cols >= kBlock ? ~__mmask32{0} : (__mmask32{1} << cols) - 1;
  for (int64_t r = 0; r < rows; ++r) {
    const __m512bh row =
        _mm512_cvtne2ps_pbh(_mm512_load_ps(block + r * ld + kTile), _mm512_load_ps(block + r * ld));
    _mm512_mask_storeu_epi16(c + r * ldc, mask, reinterpret_cast<const __m512i&>(row));
  }
}

// One thread's scratch for the AMX path: the packed A of its current product, the packed B panel
// and the f32 sums of C on their way to bf16.
struct AmxScratch {
  AlignedBuffer a, b_panel, sums;
};

// Elements of a packed panel of `cols` columns of product g's B.
inline int64_t amx_panel_elems(const Gemm& g, int64_t cols) {
  return 2 * ceil_div(cols, kBlock) * ceil_div(g.k, kTileK) * kTileElems;
}

// Product g's columns [j0, j0 + cols) of B packed into `panel`: 16-column tile strips over all k
// tiles, each tile row interleaving 16 columns of rows 2p and 2p+1 of B into (B[2p][n],
// B[2p+1][n]) pairs, zero outside B. B is read down its rows kPackBlocks 32-column blocks at a
// time: whole 64-byte lines of each row, each line feeding one row of two tile strips, so the
// writes run along kPackBlocks pairs of strips. On the AMX Xeon at 8p's cpu size (NC 672) this
// took 0.25 ms for all of B against 0.31 ms reading each row pair along the whole panel (writes
// scattered over every strip) and 0.36-0.39 ms one block at a time; reading B alone takes 0.13 ms.
// Where the panel is all of B's columns and at most kWholeRowBlocks blocks, B's rows are read
// whole instead: B is then one sequential stream. At 11p's cpu size (panels of all 384 columns)
// the call took 1.90-1.94 ms (best of 60, five runs) against 2.03-2.10 ms with 4 blocks at a time;
// 8p's 672-column panels of 2688-column rows took 4% longer 12 blocks at a time than 4.
// A whole panel at a time, before its products: packing tile by tile between the tile products
// instead (its reads of B from L3 beside their reads of the panel from L2) measured 1.5x slower,
// and packing the next panel a few units between the tile calls of this one 1.2-1.4x slower.
constexpr int64_t kPackBlocks = 4;
constexpr int64_t kWholeRowBlocks = 12;
KB_TARGET_AVX512 inline void amx_pack_panel(const Gemm& g, int64_t j0, int64_t cols,
                                            uint16_t* panel) {
  const int64_t k_tiles = ceil_div(g.k, kTileK), n_blocks = ceil_div(cols, kBlock);
  const int64_t strip = k_tiles * kTileElems;  // one 16-column tile strip over all k tiles
  const bool whole_rows = j0 == 0 && cols == g.n && n_blocks <= kWholeRowBlocks;
  const int64_t blocks_at_a_time = whole_rows ? n_blocks : kPackBlocks;
  const __m512i zero = _mm512_setzero_si512();
  for (int64_t jb0 = 0; jb0 < n_blocks; jb0 += blocks_at_a_time) {
    const int64_t jb_end = std::min(n_blocks, jb0 + blocks_at_a_time);
    for (int64_t k0 = 0; k0 < k_tiles * kTileK; k0 += 2) {
      const int64_t row_offset = k0 / kTileK * kTileElems + k0 % kTileK / 2 * kTileK;
      for (int64_t jb = jb0; jb < jb_end; ++jb) {
        const int64_t n0 = j0 + jb * kBlock, width = std::clamp<int64_t>(g.n - n0, 0, kBlock);
        const __mmask32 mask = width == kBlock ? ~__mmask32{0} : (__mmask32{1} << width) - 1;
        const __m512i even =
            k0 < g.k ? _mm512_maskz_loadu_epi16(mask, g.b + k0 * g.ldb + n0) : zero;
        const __m512i odd =
            k0 + 1 < g.k ? _mm512_maskz_loadu_epi16(mask, g.b + (k0 + 1) * g.ldb + n0) : zero;
        uint16_t* row = panel + 2 * jb * strip + row_offset;  // row of strip 2jb's tile
        _mm512_store_si512(row, amx_tiles::interleave_pairs(_mm512_castsi512_si256(even),
                                                            _mm512_castsi512_si256(odd)));
        _mm512_store_si512(row + strip,
                           amx_tiles::interleave_pairs(_mm512_extracti64x4_epi64(even, 1),
                                                       _mm512_extracti64x4_epi64(odd, 1)));
      }
    }
  }
}

// A finished f32 block waiting to be rounded into C: converted after the next block's tile
// instructions are issued, so the conversion overlaps them instead of waiting for their stores.
struct PendingBlock {
  const float* block = nullptr;
  int64_t ld = 0, rows = 0, cols = 0;
  uint16_t* c = nullptr;
  int64_t ldc = 0;
  void flush() {
    if (block != nullptr) {
      static const bool bf16 = __builtin_cpu_supports("avx512bf16");
      if (bf16)
        amx_store_block_bf16(block, ld, rows, cols, c, ldc);
      else
        amx_store_block(block, ld, rows, cols, c, ldc);
    }
    block = nullptr;
  }
};

// The row stride and size of the f32 sums that amx_panel_blocks keeps for a panel of `cols`
// columns: two halves, so that the block waiting to be rounded is never the one the tiles fill
// next (a single pass alternates 32x32 blocks, several passes alternate 32-row strips of sums).
inline int64_t amx_sums_ld(const Gemm& g, int64_t cols, const AmxBlocking& blocking) {
  const int64_t k_tiles = ceil_div(g.k, kTileK);
  const int64_t kc_tiles = std::clamp<int64_t>(blocking.kc / kTileK, 1, k_tiles);
  return kc_tiles >= k_tiles ? kBlock : ceil_div(cols, kBlock) * kBlock;
}

inline int64_t amx_sums_elems(const Gemm& g, int64_t cols, const AmxBlocking& blocking) {
  return 2 * kBlock * amx_sums_ld(g, cols, blocking);
}

// Product g's columns [j0, j0 + cols) (j0 a multiple of 32) from its packed A (`a_packed`, row
// tiles over all k tiles) and its packed B panel `b` (amx_pack_panel): strip by strip of 32 rows,
// the K passes over the strip's 32x32 blocks, the sums between passes in `sums`
// (amx_sums_elems), which stay in L1 or L2.
inline void amx_panel_blocks(const Gemm& g, const uint16_t* a_packed, const uint16_t* b, int64_t j0,
                             int64_t cols, const AmxBlocking& blocking, float* sums) {
  const int64_t k_tiles = ceil_div(g.k, kTileK);
  const int64_t kc_tiles = std::clamp<int64_t>(blocking.kc / kTileK, 1, k_tiles);
  const int64_t passes = ceil_div(k_tiles, kc_tiles);
  const int64_t m_blocks = ceil_div(g.m, kBlock), n_blocks = ceil_div(cols, kBlock);
  const int64_t strip = k_tiles * kTileElems;  // one packed 16-row or 16-column tile strip
  const int64_t ld = amx_sums_ld(g, cols, blocking);
  PendingBlock pending;
  int64_t calls = 0;
  for (int64_t ib = 0; ib < m_blocks; ++ib) {
    const int64_t rows = std::min(kBlock, g.m - ib * kBlock);
    for (int64_t pc = 0; pc < k_tiles; pc += kc_tiles) {
      const int64_t steps = std::min(kc_tiles, k_tiles - pc);
      const bool last = pc + steps == k_tiles;
      const uint16_t* a0 = a_packed + 2 * ib * strip + pc * kTileElems;
      for (int64_t jb = 0; jb < n_blocks; ++jb, ++calls) {
        const uint16_t* b0 = b + 2 * jb * strip + pc * kTileElems;
        float* block = passes == 1 ? sums + (calls % 2) * kBlock * ld
                                   : sums + (ib % 2) * kBlock * ld + jb * kBlock;
        amx_block(a0, a0 + strip, b0, b0 + strip, steps, pc > 0, block, ld);
        pending.flush();
        if (last)
          pending = {block,
                     ld,
                     rows,
                     std::min(kBlock, cols - jb * kBlock),
                     g.c + ib * kBlock * g.ldc + j0 + jb * kBlock,
                     g.ldc};
      }
    }
  }
  pending.flush();
}

// Product g's columns [j0, j0 + cols): packs the B panel, then its blocks (amx_panel_blocks).
inline bool amx_panel(const Gemm& g, const uint16_t* a_packed, int64_t j0, int64_t cols,
                      const AmxBlocking& blocking, AmxScratch& scratch) {
  float* sums = scratch.sums.get<float>(amx_sums_elems(g, cols, blocking));
  uint16_t* b = scratch.b_panel.get<uint16_t>(amx_panel_elems(g, cols));
  if (sums == nullptr || b == nullptr) return false;
  amx_pack_panel(g, j0, cols, b);
  amx_panel_blocks(g, a_packed, b, j0, cols, blocking, sums);
  return true;
}

// C_q = A_q B_q for the `count` products `g` (none empty) on AMX tiles: the NC-column panels of all
// products are split by work, and a thread packs a product's A before its first panel of it (two
// threads sharing a product's panels both pack its A, at the same time).
inline bool gemm_amx(const Gemm* g, int64_t count, const AmxBlocking& blocking, int threads) {
  if (count == 0) return true;
  const int64_t nc = std::max(kBlock, blocking.nc / kBlock * kBlock);
  int64_t a_elems = 0;  // the largest product's packed A
  struct Panel {
    int64_t q, j0;
  };
  std::vector<Panel> panels;
  std::vector<int64_t> cost;
  for (int64_t q = 0; q < count; ++q) {
    const int64_t m_blocks = ceil_div(g[q].m, kBlock), k_tiles = ceil_div(g[q].k, kTileK);
    a_elems = std::max(a_elems, amx_packed_a_elems(g[q]));
    for (int64_t j0 = 0; j0 < g[q].n; j0 += nc) {
      panels.push_back({q, j0});
      cost.push_back(m_blocks * ceil_div(std::min(nc, g[q].n - j0), kBlock) * k_tiles);
    }
  }
  threads = static_cast<int>(std::clamp<int64_t>(threads, 1, static_cast<int64_t>(panels.size())));
  std::vector<int64_t> first;
  split_by_work(cost, threads, first);
  bool ok = true;
#pragma omp parallel num_threads(threads) reduction(&& : ok)
  {
    int thread = 0;
#ifdef _OPENMP
    thread = omp_get_thread_num();
#endif
    static thread_local AmxScratch scratch;
    uint16_t* a_packed = scratch.a.get<uint16_t>(a_elems);
    ok = a_packed != nullptr;
    amx_tiles::configure();  // per thread
    int64_t packed_q = -1;
    for (int64_t i = first[thread]; i < first[thread + 1] && ok; ++i) {
      const auto [q, j0] = panels[static_cast<size_t>(i)];
      if (q != packed_q) {  // this thread's first panel of product q: its A, into L2
        amx_pack_a_all(g[q], a_packed);
        packed_q = q;
      }
      ok = amx_panel(g[q], a_packed, j0, std::min(nc, g[q].n - j0), blocking, scratch);
    }
    amx_tiles::release();  // back to the init state: context switches then save no tile data
  }
  return ok;
}

// ---- Scalar (pre-AVX2 x86-64) ----

// One row of C at a time, an f32 row accumulator, i-k-j order.
inline bool gemm_scalar(const Gemm* g, int64_t count) {
  static AlignedBuffer pool;
  for (int64_t q = 0; q < count; ++q) {
    const Gemm& gq = g[q];
    float* row = pool.get<float>(gq.n);
    if (!row) return false;
    for (int64_t i = 0; i < gq.m; ++i) {
      std::fill(row, row + gq.n, 0.0f);
      for (int64_t p = 0; p < gq.k; ++p) {
        const float a = widen(gq.a[i * gq.lda + p]);
        const uint16_t* b = gq.b + p * gq.ldb;
        for (int64_t j = 0; j < gq.n; ++j) row[j] += a * widen(b[j]);
      }
      for (int64_t j = 0; j < gq.n; ++j) gq.c[i * gq.ldc + j] = kb_f32_to_bf16(row[j]);
    }
  }
  return true;
}

// ---- Dispatch ----

using isa::Isa;

// The path this CPU takes: every ISA up to AMX has one.
inline Isa select_path() {
  return isa::best_isa(Isa::kAmx);
}

}  // namespace blocked_gemm
}  // namespace
