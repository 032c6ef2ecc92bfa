// 8p_GEMM, fast candidate: out (M,N) bf16 = A (M,K) bf16 @ B (K,N) bf16, accumulated in f32.
//
// A hand-written BLIS-style GEMM (no BLAS call):
//   for jc in N step NC:          B block (KC x NC) lives in L3
//     for pc in K step KC:        pack the B block (bf16 -> f32) into NR-wide micro-panels
//       for ic in M step MC:      pack the A block (bf16 -> f32) into MR-tall micro-panels; in L2
//         for jr in NC step NR:   B micro-panel (KC x NR) stays in L1 across the ir loop
//           for ir in MC step MR: micro-kernel: MR x NR tile of C in registers, rank-KC update
// Packing makes the micro-kernel's loads unit-stride and aligned, zero-pads the M and N edges so
// the micro-kernel always runs full tiles, and pays the bf16 -> f32 conversion once per element
// instead of once per use. Partial sums over K blocks go to an f32 scratch block of C; only the
// last K block rounds to bf16, so the result is rounded exactly once, like an f32-accumulating bf16
// matmul.
//
// Threads: when cfg->num_threads > 1, C is split by columns (whole NR panels) across OpenMP
// threads; each runs the loops above on its slice with private buffers (see kb_run).
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kbench/kernel.h"

namespace {

using std::int64_t;

// ---- ISA layer: one vector type, a few operations, and the tile shape it supports ----
#if defined(__AVX512F__)
// 8x32: 16 zmm accumulators hide the 4-cycle FMA latency on two FMA ports (needs >= 8 in flight)
// while leaving registers for the two B vectors and the A broadcast.
using vec = __m512;
constexpr int kVecLen = 16;
constexpr int kMR = 8;
constexpr int kNR = 32;
inline vec vzero() {
  return _mm512_setzero_ps();
}
inline vec vload(const float* p) {
  return _mm512_load_ps(p);
}
inline vec vloadu(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void vstore(float* p, vec v) {
  _mm512_store_ps(p, v);
}
inline void vstoreu(float* p, vec v) {
  _mm512_storeu_ps(p, v);
}
inline vec vbroadcast(const float* p) {
  return _mm512_set1_ps(*p);
}
inline vec vfma(vec a, vec b, vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline vec vadd(vec a, vec b) {
  return _mm512_add_ps(a, b);
}
// bf16 -> f32 is a 16-bit left shift of the widened bits.
inline vec vload_bf16(const uint16_t* p) {
  __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
// Round-to-nearest-even f32 -> bf16, bit-identical to kb_f32_to_bf16 (NaN kept quiet).
inline void vstore_bf16(uint16_t* p, vec v) {
  __m512i bits = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
  __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(0x40));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7fffffff)),
                                          _mm512_set1_epi32(0x7f800000));
  rounded = _mm512_mask_mov_epi32(rounded, nan, quiet);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(rounded));
}
#define KB_GEMM_SIMD 1
#elif defined(__AVX2__) && defined(__FMA__)
// 6x16: 12 ymm accumulators + 2 B vectors + 1 A broadcast = 15 of 16 registers. 12 independent
// FMA chains cover Zen3/Haswell's 2 ports x 4-cycle latency, and per k the kernel issues 2 loads
// and 6 broadcasts for 12 FMAs, which the two load ports sustain.
using vec = __m256;
constexpr int kVecLen = 8;
constexpr int kMR = 6;
constexpr int kNR = 16;
inline vec vzero() {
  return _mm256_setzero_ps();
}
inline vec vload(const float* p) {
  return _mm256_load_ps(p);
}
inline vec vloadu(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstore(float* p, vec v) {
  _mm256_store_ps(p, v);
}
inline void vstoreu(float* p, vec v) {
  _mm256_storeu_ps(p, v);
}
inline vec vbroadcast(const float* p) {
  return _mm256_broadcast_ss(p);
}
inline vec vfma(vec a, vec b, vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline vec vadd(vec a, vec b) {
  return _mm256_add_ps(a, b);
}
inline vec vload_bf16(const uint16_t* p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
inline void vstore_bf16(uint16_t* p, vec v) {
  __m256i bits = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
  __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  // |bits| > 0x7f800000 as a signed compare is safe: the sign bit is cleared first.
  __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)),
                                   _mm256_set1_epi32(0x7f800000));
  rounded = _mm256_blendv_epi8(rounded, quiet, nan);
  // Values are < 2^16 now, so unsigned-saturating packing keeps them intact.
  __m128i packed =
      _mm_packus_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
}
#define KB_GEMM_SIMD 1
#else
// Portable fallback: small tile, plain loops the compiler may vectorize.
constexpr int kMR = 4;
constexpr int kNR = 8;
#define KB_GEMM_SIMD 0
#endif

// ---- Cache blocking ----
// KC: one B micro-panel (KC x NR f32 = 16 KiB for AVX2) plus one A micro-panel (6 KiB) fit in a
//     32 KiB L1d together, and KC is long enough to amortize loading and storing the C tile.
// MC: the packed A block (MC x KC f32 = 144 KiB) sits comfortably in a 512 KiB-1 MiB L2 next to
//     the B micro-panels streaming through it. A multiple of both MR values (6 and 8).
// NC: the packed B block (KC x NC f32 = 4 MiB) fits in the shared L3 and covers N up to 4096 in
//     one block (the cpu-size N is 2688), so A is packed only once per K block.
// (Tried KC 192-1024 and MC 48-288 at M = K = 1024, N = 3584: 256/144 was as fast as any, within
// the noise of a shared machine.)
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 144;
constexpr int64_t kNC = 4096;
static_assert(kMC % kMR == 0 && kNC % kNR == 0, "blocks must hold whole micro-tiles");

inline int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
}

// Packs B[pc:pc+kc, j0:j0+nc] into NR-wide micro-panels: panel p holds columns [p*NR, p*NR+NR) as
// kc rows of NR contiguous floats. Columns past N are zero so edge tiles need no special kernel.
void pack_b_panel(const uint16_t* b, int64_t ldb, int64_t kc, int64_t nr_valid, float* dst) {
  if (nr_valid == kNR) {
    for (int64_t k = 0; k < kc; ++k) {
#if KB_GEMM_SIMD
      for (int v = 0; v < kNR / kVecLen; ++v)
        vstore(dst + k * kNR + v * kVecLen, vload_bf16(b + k * ldb + v * kVecLen));
#else
      for (int j = 0; j < kNR; ++j) dst[k * kNR + j] = kb_bf16_to_f32(b[k * ldb + j]);
#endif
    }
    return;
  }
  for (int64_t k = 0; k < kc; ++k) {
    int64_t j = 0;
    for (; j < nr_valid; ++j) dst[k * kNR + j] = kb_bf16_to_f32(b[k * ldb + j]);
    for (; j < kNR; ++j) dst[k * kNR + j] = 0.0f;
  }
}

// Packs A[i0:i0+MR, pc:pc+kc] as kc columns of MR contiguous floats (the order the micro-kernel
// broadcasts them in). Rows past M are zero.
void pack_a_panel(const uint16_t* a, int64_t lda, int64_t kc, int64_t mr_valid, float* dst) {
  for (int64_t i = 0; i < kMR; ++i) {
    if (i < mr_valid) {
      const uint16_t* row = a + i * lda;
      for (int64_t k = 0; k < kc; ++k) dst[k * kMR + i] = kb_bf16_to_f32(row[k]);
    } else {
      for (int64_t k = 0; k < kc; ++k) dst[k * kMR + i] = 0.0f;
    }
  }
}

// The rank-kc update of one MR x NR tile: tile = A_panel (MR x kc) @ B_panel (kc x NR), written to
// a contiguous, aligned MR x NR buffer. The accumulators are plain arrays with compile-time bounds;
// full unrolling keeps every one in a register.
#if KB_GEMM_SIMD
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                  float* __restrict tile) {
  constexpr int kNV = kNR / kVecLen;
  vec acc[kMR][kNV];
#pragma GCC unroll 16
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) acc[i][v] = vzero();
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    vec bv[kNV];
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) bv[v] = vload(b + v * kVecLen);
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i) {
      vec av = vbroadcast(a + i);
#pragma GCC unroll 4
      for (int v = 0; v < kNV; ++v) acc[i][v] = vfma(av, bv[v], acc[i][v]);
    }
    a += kMR;
    b += kNR;
  }
#pragma GCC unroll 16
  for (int i = 0; i < kMR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kNV; ++v) vstore(tile + i * kNR + v * kVecLen, acc[i][v]);
}
#else
void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                  float* __restrict tile) {
  float acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k)
    for (int i = 0; i < kMR; ++i)
      for (int j = 0; j < kNR; ++j) acc[i][j] += a[k * kMR + i] * b[k * kNR + j];
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNR; ++j) tile[i * kNR + j] = acc[i][j];
}
#endif

// Where a finished tile goes, depending on which K block produced it.
enum class Phase {
  kOnly,    // single K block: round straight to bf16 output
  kFirst,   // first of several: overwrite the f32 scratch
  kMiddle,  // add into the f32 scratch
  kLast,    // add the f32 scratch, round to bf16 output
};

// Writes the valid mr x nr corner of a tile. Tiles cut by the N edge (nr < NR) take the scalar
// path; the M edge only shortens the row loop.
void store_tile(const float* tile, int64_t mr, int64_t nr, Phase phase, float* acc, int64_t ldacc,
                uint16_t* out, int64_t ldout) {
#if KB_GEMM_SIMD
  if (nr == kNR) {
    for (int64_t i = 0; i < mr; ++i) {
      for (int v = 0; v < kNR / kVecLen; ++v) {
        const int64_t j = v * kVecLen;
        vec t = vload(tile + i * kNR + j);
        switch (phase) {
          case Phase::kOnly:
            vstore_bf16(out + i * ldout + j, t);
            break;
          case Phase::kFirst:
            vstoreu(acc + i * ldacc + j, t);
            break;
          case Phase::kMiddle:
            vstoreu(acc + i * ldacc + j, vadd(t, vloadu(acc + i * ldacc + j)));
            break;
          case Phase::kLast:
            vstore_bf16(out + i * ldout + j, vadd(t, vloadu(acc + i * ldacc + j)));
            break;
        }
      }
    }
    return;
  }
#endif
  for (int64_t i = 0; i < mr; ++i) {
    for (int64_t j = 0; j < nr; ++j) {
      float t = tile[i * kNR + j];
      switch (phase) {
        case Phase::kOnly:
          out[i * ldout + j] = kb_f32_to_bf16(t);
          break;
        case Phase::kFirst:
          acc[i * ldacc + j] = t;
          break;
        case Phase::kMiddle:
          acc[i * ldacc + j] += t;
          break;
        case Phase::kLast:
          out[i * ldout + j] = kb_f32_to_bf16(t + acc[i * ldacc + j]);
          break;
      }
    }
  }
}

// The C rows a tile lands in are usually not cached (the scratch block is larger than L2). Asking
// for them before the micro-kernel's few hundred cycles of FMAs hides that miss instead of
// stalling on it in store_tile (measured: store_tile ~9% of the time without it).
void prefetch_tile_dst(int64_t mr, Phase phase, const float* acc, int64_t ldacc,
                       const uint16_t* out, int64_t ldout) {
  const bool reads_acc = phase == Phase::kMiddle || phase == Phase::kLast;
  const bool writes_out = phase == Phase::kOnly || phase == Phase::kLast;
  for (int64_t i = 0; i < mr; ++i) {
    if (reads_acc) __builtin_prefetch(acc + i * ldacc, /*rw=*/0, /*locality=*/3);
    if (writes_out) __builtin_prefetch(out + i * ldout, /*rw=*/1, /*locality=*/3);
  }
}

float* alloc_floats(int64_t n) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  size_t bytes = static_cast<size_t>(round_up(std::max<int64_t>(n, 1) * 4, 64));
  return static_cast<float*>(std::aligned_alloc(64, bytes));
}

// The whole blocked GEMM, single-threaded, for the output columns [j_begin, j_end) of C. Returns
// false when its scratch buffers cannot be allocated.
bool gemm_columns(const uint16_t* A, const uint16_t* B, uint16_t* C, int64_t M, int64_t K,
                  int64_t N, int64_t j_begin, int64_t j_end) {
  const int64_t width = j_end - j_begin;
  const int64_t nc_max = std::min(kNC, round_up(width, kNR));
  const int64_t kc_max = std::min(kKC, K);
  const int64_t mc_max = std::min(kMC, round_up(M, kMR));
  const bool multi_k = K > kKC;
  const int64_t ld_acc = nc_max;  // the scratch holds one M x NC column block of C

  float* b_pack = alloc_floats(kc_max * nc_max);
  float* a_pack = alloc_floats(mc_max * kc_max);
  float* c_acc = multi_k ? alloc_floats(M * nc_max) : nullptr;
  const bool ok = b_pack && a_pack && (c_acc || !multi_k);
  alignas(64) float tile[kMR * kNR];

  for (int64_t jc = j_begin; ok && jc < j_end; jc += kNC) {
    const int64_t nc = std::min(kNC, j_end - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const Phase phase = !multi_k       ? Phase::kOnly
                          : pc == 0      ? Phase::kFirst
                          : pc + kc == K ? Phase::kLast
                                         : Phase::kMiddle;
      for (int64_t jr = 0; jr < nc; jr += kNR) {
        pack_b_panel(B + pc * N + jc + jr, N, kc, std::min<int64_t>(kNR, nc - jr),
                     b_pack + jr * kc);
      }

      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = std::min(kMC, M - ic);
        for (int64_t ir = 0; ir < mc; ir += kMR) {
          pack_a_panel(A + (ic + ir) * K + pc, K, kc, std::min<int64_t>(kMR, mc - ir),
                       a_pack + ir * kc);
        }

        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t nr = std::min<int64_t>(kNR, nc - jr);
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t mr = std::min<int64_t>(kMR, mc - ir);
            const int64_t row = ic + ir;
            float* acc = c_acc ? c_acc + row * ld_acc + jr : nullptr;
            uint16_t* out = C + row * N + jc + jr;
            prefetch_tile_dst(mr, phase, acc, ld_acc, out, N);
            micro_kernel(kc, a_pack + ir * kc, b_pack + jr * kc, tile);
            store_tile(tile, mr, nr, phase, acc, ld_acc, out, N);
          }
        }
      }
    }
  }

  std::free(b_pack);
  std::free(a_pack);
  std::free(c_acc);
  return ok;
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& ta = inputs[0];
  const kb_tensor& tb = inputs[1];
  kb_tensor& tc = outputs[0];
  if (ta.rank != 2 || tb.rank != 2 || tc.rank != 2 || ta.dtype != KB_BF16 || tb.dtype != KB_BF16 ||
      tc.dtype != KB_BF16)
    return 1;
  const int64_t M = ta.shape[0], K = ta.shape[1], N = tb.shape[1];
  if (tb.shape[0] != K || tc.shape[0] != M || tc.shape[1] != N) return 1;
  const auto* A = static_cast<const uint16_t*>(ta.data);
  const auto* B = static_cast<const uint16_t*>(tb.data);
  auto* C = static_cast<uint16_t*>(tc.data);
  if (M == 0 || N == 0) return 0;
  if (K == 0) {  // empty sum: every element is +0 (bf16 bits 0)
    std::memset(C, 0, static_cast<size_t>(M * N) * sizeof(uint16_t));
    return 0;
  }

  // Threads own disjoint column ranges of C, whole NR panels each, so they never synchronize:
  // every thread runs the full blocked algorithm on its slice with private packing buffers. The
  // price is that each thread packs all of A, which is small next to its share of the FLOPs.
  // Below a few MFLOP (well under a millisecond) waking a second thread costs more than it saves.
  constexpr int64_t kMinMacsPerThread = int64_t{1} << 22;
  const int64_t panels = (N + kNR - 1) / kNR;
  const int64_t useful_threads = std::max<int64_t>(1, M * N * K / kMinMacsPerThread);
  const int nthreads =
      static_cast<int>(std::clamp<int64_t>(cfg->num_threads, 1, std::min(panels, useful_threads)));
  bool ok = true;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static, 1) \
    reduction(&& : ok)
  for (int t = 0; t < nthreads; ++t) {
    const int64_t j_begin = std::min(N, panels * t / nthreads * kNR);
    const int64_t j_end = std::min(N, panels * (t + 1) / nthreads * kNR);
    if (j_begin < j_end) ok = gemm_columns(A, B, C, M, K, N, j_begin, j_end) && ok;
  }
  return ok ? 0 : 2;
}
