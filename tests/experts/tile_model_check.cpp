// Checks the software model's stand-in for vcvtneps2bf16 (tests/experts/amx_tile_model.h) against
// the instruction itself, where this CPU has AVX512-BF16 (elsewhere: skipped, CTest's
// SKIP_RETURN_CODE 77). The AMX paths' correctness on the model rests on it rounding exactly as
// the hardware does: to nearest even, ties included, subnormal inputs flushed to zero. Inputs are
// finite, as the probabilities the AMX paths round are.
#include "amx_tile_model.h"

#include <cstdio>
#include <random>

// 16 values rounded by the model (into `model`) and by the instruction (into `real`).
__attribute__((target("avx512f,avx512bf16"))) static void round_both(const float* in,
                                                                     uint16_t* model,
                                                                     uint16_t* real) {
  const __m512 x = _mm512_loadu_ps(in);
  const __m256bh m = emu_cvtneps_pbh(x);
  const __m256bh r = (_mm512_cvtneps_pbh)(x);  // parenthesized: the instruction, not the model
  memcpy(model, &m, 32);
  memcpy(real, &r, 32);
}

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

int main() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) return 77;
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> bits;
  int checked = 0, bad = 0;
  for (int round = 0; round < 200000; ++round) {
    float in[16];
    for (int i = 0; i < 16; ++i) {
      uint32_t b = bits(rng);
      switch (i % 4) {
        case 0:  // a tie: the dropped half exactly 0x8000
          b = (b & 0xffff0000u) | 0x8000u;
          break;
        case 1:  // a subnormal
          b &= 0x807fffffu;
          break;
        default:
          break;
      }
      if ((b & 0x7f800000u) == 0x7f800000u) b &= 0xbfffffffu;  // finite only
      in[i] = from_bits(b);
    }
    uint16_t m[16], r[16];
    round_both(in, m, r);
    for (int i = 0; i < 16; ++i, ++checked)
      if (m[i] != r[i] && bad++ < 5) {
        uint32_t b;
        memcpy(&b, &in[i], 4);
        std::printf("input 0x%08x: model 0x%04x, instruction 0x%04x\n", b, m[i], r[i]);
      }
  }
  std::printf("%d values, %d differ\n", checked, bad);
  return bad == 0 ? 0 : 1;
}
