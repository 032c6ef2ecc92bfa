// The AMX tile conventions the experts share: every tile is 16 rows of 64 bytes (16 x 32 bf16 for
// the A and B operands, 16 x 16 f32 for the accumulators), so one configuration serves every
// product and the software model of the tile instructions (tests/experts/amx_tile_model.h, which
// knows only that shape) runs the same code. A thread configures the tiles once before its tile
// work and releases them after, since a configured tile state makes every context switch save
// and restore 8 KiB more.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "isa.h"

namespace amx_tiles {

constexpr int kRows = 16;               // rows of every tile
constexpr int kRowBytes = 64;           // bytes of every tile row
constexpr int kPairs = kRowBytes / 4;   // bf16 pairs (or f32) per tile row: columns of a B tile
constexpr int kDepth = kRowBytes / 2;   // bf16 per A tile row: the depth of one tdpbf16ps
constexpr int kElems = kRows * kDepth;  // bf16 per A or B tile

// The 64-byte operand of ldtilecfg, palette 1.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytes_per_row[16] = {};
  std::uint8_t rows[16] = {};
};

// Tiles 0-7, each 16 x 64 bytes.
KB_TARGET_AMX __attribute__((noinline)) inline void configure() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) {
    cfg.rows[t] = kRows;
    cfg.bytes_per_row[t] = kRowBytes;
  }
  // GCC 12's tile intrinsics do not declare the memory they read: finish the stores first.
  asm volatile("" : : "r"(&cfg) : "memory");
  _tile_loadconfig(&cfg);
}

KB_TARGET_AMX __attribute__((noinline)) inline void release() {
  _tile_release();
}

// One row of a pair-interleaved B tile from 16 bf16 of row 2p (`even`) and of row 2p + 1 (`odd`):
// (even[0], odd[0], even[1], odd[1], ...), by one vpermt2w (every AMX CPU has AVX-512BW).
KB_TARGET_AVX512 inline __m512i interleave_pairs(__m256i even, __m256i odd) {
  // Word 2i is word i of `even`, word 2i + 1 word i of `odd` (index 32 + i).
  alignas(64) static constexpr std::uint16_t kOrder[32] = {
      0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
      8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  return _mm512_permutex2var_epi16(_mm512_castsi256_si512(even), _mm512_load_si512(kOrder),
                                   _mm512_castsi256_si512(odd));
}

}  // namespace amx_tiles
