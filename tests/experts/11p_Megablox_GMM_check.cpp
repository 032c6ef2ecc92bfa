// Checks experts/11p_Megablox_GMM.cpp outside kbench on what the workload's inputs never hold:
// groups longer than max_expert_size (only their first max_expert_size rows are computed), rows
// no group covers (zero), and empty groups between full ones. Every checked output is compared
// with a double-precision reference rounded to bf16, allowing 1 bf16 ulp.
//
//   11p_check M K N G max_expert_size threads seed
// With -DKB_MAX_ISA=0..3 a path is forced (0 scalar, 1 AVX2, 2 AVX-512, 3 AMX on the software tile
// model, -DKB_AMX_MODEL).
#ifdef KB_AMX_MODEL
#include "amx_tile_model.h"
#endif
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "../../experts/11p_Megablox_GMM.cpp"

int main(int argc, char** argv) {
  // The path asked for (KB_MAX_ISA) must be the one this CPU takes, or the test is skipped (CTest's
  // SKIP_RETURN_CODE): the AVX-512 path, and the AMX path's AVX-512 epilogue on the tile model,
  // need the CPU's AVX-512.
  if (blocked_gemm::select_path() != static_cast<isa::Isa>(KB_MAX_ISA)) return 77;
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s M K N G max_expert_size threads seed\n", argv[0]);
    return 2;
  }
  const int64_t M = std::atol(argv[1]), K = std::atol(argv[2]), N = std::atol(argv[3]),
                G = std::atol(argv[4]), max_size = std::atol(argv[5]);
  const int threads = std::atoi(argv[6]);
  std::mt19937 rng(static_cast<unsigned>(std::atoi(argv[7])));
  std::normal_distribution<float> normal(0, 1);
  std::vector<uint16_t> a(M * K), b(G * K * N), c(M * N, 0x7fc0);  // outputs start as NaN
  for (auto& x : a) x = kb_f32_to_bf16(normal(rng));
  for (auto& x : b) x = kb_f32_to_bf16(0.02f * normal(rng));

  // Sizes summing to at most M (a tail uncovered), every fifth group empty, some over the clamp.
  std::vector<int32_t> sizes(G, 0);
  int64_t left = M - static_cast<int64_t>(rng() % (M / 8 + 1));
  for (int64_t g = 0; g < G && left > 0; ++g) {
    int64_t size = g == G - 1 ? left : static_cast<int64_t>(rng() % (2 * M / G + 2));
    if (rng() % 5 == 0) size = 0;
    sizes[g] = static_cast<int32_t>(std::min(size, left));
    left -= sizes[g];
  }
  kb_tensor in[3] = {{a.data(), KB_BF16, 2, {M, K}},
                     {b.data(), KB_BF16, 3, {G, K, N}},
                     {sizes.data(), KB_I32, 1, {G}}};
  kb_tensor out{c.data(), KB_BF16, 2, {M, N}};
  kb_param param{"max_expert_size", static_cast<double>(max_size)};
  kb_config cfg{threads, 1, &param};
  if (kb_run(&cfg, in, 3, &out, 1) != 0) {
    std::printf("kb_run failed\n");
    return 1;
  }

  std::vector<int64_t> owner(M, -1);
  int64_t start = 0, clamped = 0;
  for (int64_t g = 0; g < G; ++g) {
    const int64_t rows = std::min<int64_t>(sizes[g], max_size);
    clamped += sizes[g] - rows;
    for (int64_t i = start; i < start + rows; ++i) owner[i] = g;
    start += sizes[g];
  }
  int64_t bad = 0, checked = 0;
  const int64_t row_step = M * N > 200000 ? 3 : 1, col_step = M * N > 200000 ? 7 : 1;
  for (int64_t i = 0; i < M; i += row_step) {
    for (int64_t j = 0; j < N; j += col_step) {
      uint16_t want = 0;
      if (owner[i] >= 0) {
        const uint16_t* w = b.data() + owner[i] * K * N;
        double sum = 0;
        for (int64_t p = 0; p < K; ++p)
          sum += static_cast<double>(kb_bf16_to_f32(a[i * K + p])) * kb_bf16_to_f32(w[p * N + j]);
        want = kb_f32_to_bf16(static_cast<float>(sum));
      }
      ++checked;
      if (std::abs(static_cast<int>(c[i * N + j]) - static_cast<int>(want)) > 1 && bad++ < 5)
        std::printf("(%ld, %ld): got %04x, want %04x (group %ld)\n", static_cast<long>(i),
                    static_cast<long>(j), c[i * N + j], want, static_cast<long>(owner[i]));
    }
  }
  std::printf(
      "M=%ld K=%ld N=%ld G=%ld max %ld threads %d: %ld rows clamped, %ld uncovered; "
      "checked %ld, bad %ld\n",
      static_cast<long>(M), static_cast<long>(K), static_cast<long>(N), static_cast<long>(G),
      static_cast<long>(max_size), threads, static_cast<long>(clamped),
      static_cast<long>(M - start), static_cast<long>(checked), static_cast<long>(bad));
#ifdef KB_AMX_MODEL
  if (emu_dp_count == 0) {
    std::printf("the AMX path did not run\n");
    return 1;
  }
#endif
  return bad == 0 ? 0 : 1;
}
