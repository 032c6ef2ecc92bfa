// 8p_GEMM on AMX tiles: out (M,N) bf16 = A (M,K) bf16 @ B (K,N) bf16, accumulated in f32.
//
// Where the CPU has AMX-BF16 (Sapphire Rapids and later Xeons) and the kernel grants the tile-data
// permission, the products run on tdpbf16ps; everywhere else a plain f32 loop computes the same
// result, so the candidate is correct on every x86-64 machine. The choice is made once, at the
// first call, from cpuid and arch_prctl.
//
// The AMX path:
//   pack A into 16 x 32 bf16 tiles (16 rows, 32 consecutive k), zero padded to whole tiles;
//   pack B into the pair-interleaved ("VNNI") tiles tdpbf16ps reads its second operand from:
//     tile row p holds (B[2p][n], B[2p+1][n]) for 16 columns n, zero padded;
//   for each 32 x 32 block of C (2 x 2 tiles, held in tmm0-3), for each 32-deep slice of K:
//     load two A tiles (tmm4, tmm5) and two B tiles (tmm6, tmm7), then four tdpbf16ps;
//   store the four f32 tiles to a scratch block and round its valid part to bf16, once.
// Padding makes every tile full, so the tile loop never branches on the M, N or K edges: the
// zeros add nothing to the sums. Column blocks are the outer loop, so one column pair of B
// (2 KiB per 32 of K) stays in L1 while every row block of A streams past it from L2.
//
// Threads: OpenMP threads share the packing, then take disjoint blocks of C. The tile
// configuration is per thread, so each thread loads it before its first tile instruction.
//
// Build (kbench does this): the fixed candidate command with -march=native. The AMX functions carry
// target attributes, so the file compiles on machines without AMX and never runs them there.
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kbench/kernel.h"

namespace {

using std::int64_t;

constexpr int64_t kTileRows = 16;  // rows of an A or C tile; columns of a C or B tile
constexpr int64_t kTileK = 32;     // bf16 elements of K per tile row (64 bytes)
constexpr int64_t kTileElems = kTileRows * kTileK;
constexpr int64_t kBlock = 2 * kTileRows;  // a block of C is 2 x 2 tiles

// ---- Detection: hardware (cpuid) and the kernel's permission (arch_prctl) ----

bool cpu_reports_amx_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 22)) && (edx & (1u << 24));  // AMX-BF16 and AMX-TILE
}

// Linux 5.16+: ask for XFEATURE_XTILEDATA (18); without it the first tile instruction is SIGILL.
// kbench's worker has usually asked already (the permission is process-wide), and asking again is
// harmless.
bool amx_permitted() {
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023;
  constexpr int kXtileData = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXtileData) != 0) return false;
  unsigned long permitted = 0;
  return syscall(SYS_arch_prctl, kArchGetXcompPerm, &permitted) == 0 &&
         (permitted & (1ul << kXtileData));
}

bool use_amx() {
  static const bool available = cpu_reports_amx_bf16() && amx_permitted();
  return available;
}

// ---- AMX: tile configuration and the 32 x 32 micro-kernel ----

// The 64-byte operand of ldtilecfg, palette 1: rows and bytes per row of each tile register.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

__attribute__((target("amx-tile"))) void tiles_configure() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {  // every register 16 rows of 64 bytes
    config.rows[t] = kTileRows;
    config.bytes_per_row[t] = kTileK * sizeof(uint16_t);
  }
  // GCC's tile intrinsics do not declare the memory they read: complete the stores first.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void tiles_release() {
  _tile_release();
}

// c (32 x 32 f32, row stride 32) = A row tiles a0, a1 times B column tiles b0, b1 over k_tiles
// slices of K; consecutive K slices of one tile row or column are kTileElems apart.
__attribute__((target("amx-tile,amx-bf16"), noinline)) void tile_block_32x32(
    const uint16_t* a0, const uint16_t* a1, const uint16_t* b0, const uint16_t* b1, int64_t k_tiles,
    float* c) {
  constexpr long kStride = kTileK * sizeof(uint16_t);  // bytes between rows of a packed tile
  constexpr long kCStride = kBlock * sizeof(float);    // bytes between rows of the scratch block
  asm volatile("" : : : "memory");  // the packed tiles were written before this call
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    _tile_loadd(4, a0 + kt * kTileElems, kStride);
    _tile_loadd(5, a1 + kt * kTileElems, kStride);
    _tile_loadd(6, b0 + kt * kTileElems, kStride);
    _tile_loadd(7, b1 + kt * kTileElems, kStride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, kCStride);
  _tile_stored(1, c + kTileRows, kCStride);
  _tile_stored(2, c + kTileRows * kBlock, kCStride);
  _tile_stored(3, c + kTileRows * kBlock + kTileRows, kCStride);
}

// Tile (mt, kt) of packed A: rows 16*mt.., k 32*kt.., zero outside A.
void pack_a_row_tiles(const uint16_t* A, int64_t M, int64_t K, int64_t mt, int64_t k_tiles,
                      uint16_t* packed) {
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    uint16_t* tile = packed + (mt * k_tiles + kt) * kTileElems;
    std::memset(tile, 0, kTileElems * sizeof(uint16_t));
    const int64_t k0 = kt * kTileK, width = std::min(kTileK, K - k0);
    for (int64_t r = 0; r < kTileRows && mt * kTileRows + r < M; ++r)
      std::memcpy(tile + r * kTileK, A + (mt * kTileRows + r) * K + k0, width * sizeof(uint16_t));
  }
}

// Tile (nt, kt) of packed B: row p holds (B[k0+2p][n], B[k0+2p+1][n]) for n = 16*nt.., zero
// outside B.
void pack_b_column_tiles(const uint16_t* B, int64_t K, int64_t N, int64_t nt, int64_t k_tiles,
                         uint16_t* packed) {
  const int64_t n0 = nt * kTileRows, width = std::min(kTileRows, N - n0);
  for (int64_t kt = 0; kt < k_tiles; ++kt) {
    uint16_t* tile = packed + (nt * k_tiles + kt) * kTileElems;
    std::memset(tile, 0, kTileElems * sizeof(uint16_t));
    for (int64_t kk = 0; kk < kTileK && kt * kTileK + kk < K; ++kk) {
      const uint16_t* row = B + (kt * kTileK + kk) * N + n0;
      uint16_t* dst = tile + (kk / 2) * kTileK + (kk % 2);
      for (int64_t n = 0; n < width; ++n) dst[2 * n] = row[n];
    }
  }
}

void gemm_amx(const uint16_t* A, const uint16_t* B, uint16_t* C, int64_t M, int64_t K, int64_t N,
              int threads) {
  const int64_t m_blocks = (M + kBlock - 1) / kBlock, n_blocks = (N + kBlock - 1) / kBlock;
  const int64_t k_tiles = (K + kTileK - 1) / kTileK;
  const int64_t m_tiles = 2 * m_blocks, n_tiles = 2 * n_blocks;
  std::vector<uint16_t> a_packed(m_tiles * k_tiles * kTileElems);
  std::vector<uint16_t> b_packed(n_tiles * k_tiles * kTileElems);
  threads = static_cast<int>(std::clamp<int64_t>(threads, 1, m_blocks * n_blocks));
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static) nowait
    for (int64_t mt = 0; mt < m_tiles; ++mt)
      pack_a_row_tiles(A, M, K, mt, k_tiles, a_packed.data());
#pragma omp for schedule(static)
    for (int64_t nt = 0; nt < n_tiles; ++nt)
      pack_b_column_tiles(B, K, N, nt, k_tiles, b_packed.data());
    // (the implicit barrier above: every tile is packed before any thread multiplies)
    tiles_configure();
    alignas(64) float block[kBlock * kBlock];
#pragma omp for collapse(2) schedule(static)
    for (int64_t jb = 0; jb < n_blocks; ++jb) {
      for (int64_t ib = 0; ib < m_blocks; ++ib) {
        const uint16_t* a = a_packed.data() + 2 * ib * k_tiles * kTileElems;
        const uint16_t* b = b_packed.data() + 2 * jb * k_tiles * kTileElems;
        tile_block_32x32(a, a + k_tiles * kTileElems, b, b + k_tiles * kTileElems, k_tiles, block);
        const int64_t i0 = ib * kBlock, j0 = jb * kBlock;
        const int64_t rows = std::min(kBlock, M - i0), cols = std::min(kBlock, N - j0);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            C[(i0 + r) * N + j0 + c] = kb_f32_to_bf16(block[r * kBlock + c]);
      }
    }
    tiles_release();  // back to the init state: context switches save no tile data
  }
}

// ---- Fallback: one row of C at a time, an f32 row accumulator, i-k-j order (vectorizes) ----

void gemm_rows_f32(const uint16_t* A, const uint16_t* B, uint16_t* C, int64_t M, int64_t K,
                   int64_t N, int threads) {
  threads = static_cast<int>(std::clamp<int64_t>(threads, 1, M));
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> acc(N);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < M; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t k = 0; k < K; ++k) {
        const float a = kb_bf16_to_f32(A[i * K + k]);
        const uint16_t* b = B + k * N;
        for (int64_t j = 0; j < N; ++j) acc[j] += a * kb_bf16_to_f32(b[j]);
      }
      for (int64_t j = 0; j < N; ++j) C[i * N + j] = kb_f32_to_bf16(acc[j]);
    }
  }
}

}  // namespace

// Not part of the ABI: lets tests ask which path this machine takes (1: AMX tiles, 0: fallback).
extern "C" int gemm_amx_example_uses_tiles(void) {
  return use_amx() ? 1 : 0;
}

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
  if (use_amx())
    gemm_amx(A, B, C, M, K, N, cfg->num_threads);
  else
    gemm_rows_f32(A, B, C, M, K, N, cfg->num_threads);
  return 0;
}
