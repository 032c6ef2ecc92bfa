// 12p_RMSNorm, fast candidate: out (B,S,D) bf16 = bf16(x * rsqrt(mean(x^2) + eps)) * scale, with
// the normalization and the scale multiply both done in f32 (MaxText: normalize in f32, cast back
// to x.dtype, multiply by the bf16 scale).
//
// The kernel is memory-bound (5 flops per 4 bytes moved), so the design goal is to touch DRAM once
// per element: each row (D bf16 = 8 KiB at D = 4096) is read for the sum of squares and read again
// for the normalization while it is still in L1, so the second pass costs no DRAM traffic. Four
// accumulator vectors in the first pass keep the FMA latency off the critical path of the sum. The
// scale vector is converted to f32 once per call rather than once per row. (Non-temporal stores
// for the output were tried and gave no measurable gain, so the plain stores stay.)
//
// Threads: rows are independent, so when cfg->num_threads > 1 they are split across OpenMP threads.
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "kbench/kernel.h"

namespace {

using std::int64_t;

#if defined(__AVX512F__)
using vec = __m512;
constexpr int64_t kVecLen = 16;
inline vec vzero() {
  return _mm512_setzero_ps();
}
inline vec vset1(float f) {
  return _mm512_set1_ps(f);
}
inline vec vloadu(const float* p) {
  return _mm512_loadu_ps(p);
}
inline void vstoreu(float* p, vec v) {
  _mm512_storeu_ps(p, v);
}
inline vec vmul(vec a, vec b) {
  return _mm512_mul_ps(a, b);
}
inline vec vadd(vec a, vec b) {
  return _mm512_add_ps(a, b);
}
inline vec vfma(vec a, vec b, vec c) {
  return _mm512_fmadd_ps(a, b, c);
}
inline float vsum(vec v) {
  return _mm512_reduce_add_ps(v);
}
inline vec vload_bf16(const uint16_t* p) {
  __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
// Round-to-nearest-even to bf16; the bf16 bits are returned in the low half of each 32-bit lane.
// Unlike kb_f32_to_bf16 there is no NaN special case (dropping it, together with the four
// accumulators of pass 1, took the cpu-size call from ~45 to ~37 ms here). It is not needed: every
// NaN that can reach this rounding carries the payload of a bf16 input or is x86's default NaN
// (0xffc00000), so its low half is zero and adding the rounding bias cannot carry into the
// exponent: NaN stays NaN, +-Inf stays +-Inf.
inline __m512i vround_bf16(vec v) {
  __m512i bits = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  return _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))),
                           16);
}
// The f32 value a bf16 tensor would hold.
inline vec vto_bf16_value(vec v) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(vround_bf16(v), 16));
}
inline void vstore_bf16(uint16_t* p, vec v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(vround_bf16(v)));
}
#define KB_RMS_SIMD 1
#elif defined(__AVX2__) && defined(__FMA__)
using vec = __m256;
constexpr int64_t kVecLen = 8;
inline vec vzero() {
  return _mm256_setzero_ps();
}
inline vec vset1(float f) {
  return _mm256_set1_ps(f);
}
inline vec vloadu(const float* p) {
  return _mm256_loadu_ps(p);
}
inline void vstoreu(float* p, vec v) {
  _mm256_storeu_ps(p, v);
}
inline vec vmul(vec a, vec b) {
  return _mm256_mul_ps(a, b);
}
inline vec vadd(vec a, vec b) {
  return _mm256_add_ps(a, b);
}
inline vec vfma(vec a, vec b, vec c) {
  return _mm256_fmadd_ps(a, b, c);
}
inline float vsum(vec v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}
inline vec vload_bf16(const uint16_t* p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
// As above: round-to-nearest-even without a NaN special case.
inline __m256i vround_bf16(vec v) {
  __m256i bits = _mm256_castps_si256(v);
  __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  return _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))),
                           16);
}
inline vec vto_bf16_value(vec v) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(vround_bf16(v), 16));
}
inline void vstore_bf16(uint16_t* p, vec v) {
  __m256i r = vround_bf16(v);
  // Lanes are < 2^16, so unsigned-saturating packing keeps them intact.
  __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), packed);
}
#define KB_RMS_SIMD 1
#else
#define KB_RMS_SIMD 0
#endif

inline float to_bf16_value(float f) {
  return kb_bf16_to_f32(kb_f32_to_bf16(f));
}

// One row: x (d bf16) -> out (d bf16), with scale already converted to f32.
void rmsnorm_row(const uint16_t* __restrict x, const float* __restrict scale, int64_t d, float eps,
                 uint16_t* __restrict out) {
  // Pass 1: sum of squares in f32. Four independent accumulators so consecutive FMAs do not wait
  // on each other's latency; the loads, not the FMAs, are then the limit.
  int64_t j = 0;
  float sum_sq = 0.0f;
#if KB_RMS_SIMD
  vec acc0 = vzero(), acc1 = vzero(), acc2 = vzero(), acc3 = vzero();
  for (; j + 4 * kVecLen <= d; j += 4 * kVecLen) {
    vec x0 = vload_bf16(x + j), x1 = vload_bf16(x + j + kVecLen);
    vec x2 = vload_bf16(x + j + 2 * kVecLen), x3 = vload_bf16(x + j + 3 * kVecLen);
    acc0 = vfma(x0, x0, acc0);
    acc1 = vfma(x1, x1, acc1);
    acc2 = vfma(x2, x2, acc2);
    acc3 = vfma(x3, x3, acc3);
  }
  for (; j + kVecLen <= d; j += kVecLen) {
    vec x0 = vload_bf16(x + j);
    acc0 = vfma(x0, x0, acc0);
  }
  sum_sq = vsum(vadd(vadd(acc0, acc1), vadd(acc2, acc3)));
#endif
  for (; j < d; ++j) {  // tail: d need not be a multiple of the vector length
    float v = kb_bf16_to_f32(x[j]);
    sum_sq += v * v;
  }
  // Exact f32 sqrt and divide, not the ~12-bit rsqrt estimate: one per row costs nothing.
  const float inv_rms = 1.0f / std::sqrt(sum_sq / static_cast<float>(d) + eps);

  // Pass 2: the row is back from L1. The normalized value is rounded to bf16 before the scale
  // multiply, as the reference casts back to x.dtype first.
  j = 0;
#if KB_RMS_SIMD
  const vec inv = vset1(inv_rms);
  for (; j + kVecLen <= d; j += kVecLen) {
    vec normed = vto_bf16_value(vmul(vload_bf16(x + j), inv));
    vstore_bf16(out + j, vmul(normed, vloadu(scale + j)));
  }
#endif
  for (; j < d; ++j) {
    float normed = to_bf16_value(kb_bf16_to_f32(x[j]) * inv_rms);
    out[j] = kb_f32_to_bf16(normed * scale[j]);
  }
}

}  // namespace

extern "C" int kb_run(const kb_config* cfg, const kb_tensor* inputs, int32_t num_inputs,
                      kb_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1) return 1;
  const kb_tensor& tx = inputs[0];
  const kb_tensor& ts = inputs[1];
  kb_tensor& to = outputs[0];
  if (tx.rank < 1 || ts.rank != 1 || tx.dtype != KB_BF16 || ts.dtype != KB_BF16 ||
      to.dtype != KB_BF16 || kb_numel(&to) != kb_numel(&tx))
    return 1;
  const int64_t d = tx.shape[tx.rank - 1];
  if (ts.shape[0] != d) return 1;
  if (d == 0) return 0;
  const int64_t rows = kb_numel(&tx) / d;
  const auto* x = static_cast<const uint16_t*>(tx.data);
  const auto* scale_bf16 = static_cast<const uint16_t*>(ts.data);
  auto* out = static_cast<uint16_t*>(to.data);
  const float eps = static_cast<float>(kb_param_or(cfg, "epsilon", 1e-5));

  // aligned_alloc wants a size that is a multiple of the alignment.
  auto* scale =
      static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>((d * 4 + 63) / 64 * 64)));
  if (!scale) return 2;
  for (int64_t j = 0; j < d; ++j) scale[j] = kb_bf16_to_f32(scale_bf16[j]);

  // Below ~64K elements per thread (tens of microseconds) waking threads costs more than it saves.
  constexpr int64_t kMinElementsPerThread = int64_t{1} << 16;
  const int64_t useful_threads = std::max<int64_t>(1, rows * d / kMinElementsPerThread);
  const int nthreads = static_cast<int>(std::clamp<int64_t>(cfg->num_threads, 1, useful_threads));
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
  for (int64_t r = 0; r < rows; ++r) rmsnorm_row(x + r * d, scale, d, eps, out + r * d);

  std::free(scale);
  return 0;
}
