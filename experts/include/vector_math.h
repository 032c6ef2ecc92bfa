// What the attention experts' vector paths share: the ISA switch and target attributes (isa.h),
// 2^x on x <= 0 for AVX-512 and AVX2 (the softmax runs on exp2, its scale folded into the scores),
// and lane masks for a row's first n elements.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "isa.h"

namespace vector_math {

using std::int64_t;

// 2^f on [0, 1): degree-5 polynomial interpolating 2^f at the Chebyshev nodes of [0, 1] (max
// relative error 1.2e-7 in f32, fitted for these kernels); 2^floor(x) goes into the exponent.
constexpr float kExp2C0 = 9.999998808e-01f, kExp2C1 = 6.931545138e-01f, kExp2C2 = 2.401418239e-01f,
                kExp2C3 = 5.586033687e-02f, kExp2C4 = 8.949590847e-03f, kExp2C5 = 1.893754001e-03f;

inline int64_t round_up(int64_t x, int64_t m) {
  return (x + m - 1) / m * m;
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

// The lanes of the 16 elements from c0 that a row of `n` elements holds.
KB_TARGET_AVX512 inline __mmask16 first_lanes(int n, int c0) {
  const int k = std::clamp(n - c0, 0, 16);
  return static_cast<__mmask16>((1u << k) - 1u);
}

// 2^x for x <= 0 (finite): x clamped at -127, where the built exponent field is 0 and the result
// an exact zero (as exp(-1e9 - max) is in f32).
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

// All-ones lanes for the 8 elements from c0 that a row of `n` elements holds.
KB_TARGET_AVX2 inline __m256 first_lanes_avx2(int n, int c0) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(n - c0), lane));
}

// The online softmax's new row maximum: the largest of `m` and row[0, n), the row read in whole
// 32-byte-aligned vectors whose lanes past n are left out.
KB_TARGET_AVX2 inline float row_max_avx2(const float* row, int n, float m) {
  __m256 mx = _mm256_set1_ps(-INFINITY);
  for (int c0 = 0; c0 < n; c0 += 8)
    mx = _mm256_max_ps(mx, _mm256_blendv_ps(_mm256_set1_ps(-INFINITY), _mm256_load_ps(row + c0),
                                            first_lanes_avx2(n, c0)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, mx);
  for (float x : lanes) m = std::max(m, x);
  return m;
}

}  // namespace vector_math
