// Software model of the five AMX tile instructions experts/8p_GEMM.cpp uses (and of the one
// AVX512-BF16 instruction the AMX paths round with), so its AMX path (packing, tile loop,
// epilogue) can be checked on a CPU without AMX. Include it before the
// expert: the macros below replace the intrinsics. Each pair product is summed in f32; hardware
// rounding may differ in the last bit, which the check's 1-ulp slack allows.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
static thread_local unsigned char emu_tiles[8][16][64];
static thread_local bool emu_configured = false;
static int emu_dp_count = 0;
static void emu_loadconfig(const void* cfg) {
  const unsigned char* c = (const unsigned char*)cfg;
  if (c[0] != 1) __builtin_trap();
  emu_configured = true;
}
static void emu_release() {
  emu_configured = false;
}
static void emu_loadd(int t, const void* base, long stride) {
  if (!emu_configured) __builtin_trap();
  for (int r = 0; r < 16; ++r) memcpy(emu_tiles[t][r], (const char*)base + r * stride, 64);
}
static void emu_stored(int t, void* base, long stride) {
  for (int r = 0; r < 16; ++r) memcpy((char*)base + r * stride, emu_tiles[t][r], 64);
}
static void emu_zero(int t) {
  memset(emu_tiles[t], 0, sizeof emu_tiles[t]);
}
static float bf(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static void emu_dp(int c, int a, int b) {
  __atomic_fetch_add(&emu_dp_count, 1, __ATOMIC_RELAXED);
  float C[16][16];
  memcpy(C, emu_tiles[c], sizeof C);
  uint16_t A[16][32], B[16][32];
  memcpy(A, emu_tiles[a], sizeof A);
  memcpy(B, emu_tiles[b], sizeof B);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float s = C[m][n];
      for (int q = 0; q < 16; ++q)
        s += bf(A[m][2 * q]) * bf(B[q][2 * n]) + bf(A[m][2 * q + 1]) * bf(B[q][2 * n + 1]);
      C[m][n] = s;
    }
  memcpy(emu_tiles[c], C, sizeof C);
}
// vcvtneps2bf16, which the AMX paths round with (every AMX CPU has AVX512-BF16; the CPU running
// the model may not): to nearest even, f32 subnormals flushed to zero, as the instruction does.
__attribute__((target("avx512f"))) static __m256bh emu_cvtneps_pbh(__m512 x) {
  alignas(64) float in[16];
  alignas(32) uint16_t out[16];
  _mm512_store_ps(in, x);
  for (int i = 0; i < 16; ++i) {
    uint32_t b;
    memcpy(&b, &in[i], 4);
    if ((b & 0x7f800000u) == 0) b &= 0x80000000u;
    out[i] = (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
  }
  __m256bh r;
  memcpy(&r, out, sizeof r);
  return r;
}
#define _mm512_cvtneps_pbh(x) emu_cvtneps_pbh(x)
#undef _tile_loadd
#undef _tile_stored
#undef _tile_zero
#undef _tile_dpbf16ps
#define _tile_loadconfig emu_loadconfig
#define _tile_release emu_release
#define _tile_loadd emu_loadd
#define _tile_stored emu_stored
#define _tile_zero emu_zero
#define _tile_dpbf16ps emu_dp
