// Checks and times experts/8p_GEMM.cpp outside kbench: every output at small shapes (a sample at
// large ones) against a double-precision reference rounded to bf16, allowing 1 bf16 ulp; prints
// the best CPU time of a few calls and an in-L1 micro-kernel rate for comparison.
//
//   g++ -std=c++20 -O2 -march=native -fopenmp -Iinclude [-DKB_MR=8 -DKB_NR=48 ...]
//       [-DKB_MAX_ISA=0|1|2] tests/experts/8p_GEMM_check.cpp -o /tmp/check
//   /tmp/check M K N [calls [threads]]
// With -DKB_AMX_MODEL (and -DKB_MAX_ISA=3) the AMX path runs on the software tile model.
#ifdef KB_AMX_MODEL
#include "amx_tile_model.h"
#endif
#include <time.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
#include "../../experts/8p_GEMM.cpp"
static double cpu_now() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char** argv) {
  // The path asked for (KB_MAX_ISA) must be the one this CPU takes, or the test is skipped (CTest's
  // SKIP_RETURN_CODE): the AVX-512 path, and the AMX path's AVX-512 epilogue on the tile model,
  // need the CPU's AVX-512.
  if (blocked_gemm::select_path() != static_cast<isa::Isa>(KB_MAX_ISA)) return 77;
  int64_t M = argc > 1 ? atol(argv[1]) : 768, K = argc > 2 ? atol(argv[2]) : 768,
          N = argc > 3 ? atol(argv[3]) : 2688;
  int reps = argc > 4 ? atoi(argv[4]) : 10;
  int thr = argc > 5 ? atoi(argv[5]) : 1;
  std::mt19937 rng(1);
  std::normal_distribution<float> d(0, 1);
  std::vector<uint16_t> a(M * K), b(K * N), c(M * N);
  for (auto& x : a) x = kb_f32_to_bf16(d(rng));
  for (auto& x : b) x = kb_f32_to_bf16(0.02f * d(rng));
  kb_tensor ta{a.data(), KB_BF16, 2, {M, K}}, tb{b.data(), KB_BF16, 2, {K, N}},
      tc{c.data(), KB_BF16, 2, {M, N}};
  kb_tensor in[2] = {ta, tb};
  kb_config cfg{thr, 0, nullptr};
  double best = 1e9, bestpk = 1e9;
  static AlignedBuffer q1, q2, q3;
  float* pa = q1.get<float>(256 * KB_MR);
  float* pb = q2.get<float>(300 * KB_NR);
  float* pc = q3.get<float>(KB_MR * KB_NR);
  for (int i = 0; i < 256 * KB_MR; ++i) pa[i] = 0.001f;
  for (int i = 0; i < 256 * KB_NR; ++i) pb[i] = 0.001f;
  TileIo io{nullptr, pc, KB_NR, nullptr, 0};
  for (int r = 0; r < reps; ++r) {
    // The in-L1 rate of the AVX-512 micro-kernel, for comparison: only where this path runs on
    // AVX-512 (the AVX-512 path, and the AMX path's epilogue), which the CPU then has.
    if (KB_MAX_ISA >= static_cast<int>(isa::Isa::kAvx512)) {
      auto t0 = cpu_now();
      for (int q = 0; q < 2000; ++q) ukernel_avx512<KB_MR, KB_NR>(256, pa, (const void*)pb, io);
      double s = (cpu_now() - t0);
      bestpk = std::min(bestpk, s);
    }
    auto t0 = cpu_now();
    kb_run(&cfg, in, 2, &tc, 1);
    double s = (cpu_now() - t0);
    best = std::min(best, s);
  }
  // check: all elements for small, sample otherwise
  double maxerr = 0;
  int64_t bad = 0, checked = 0;
  for (int64_t i = 0; i < M; i += (M > 100 ? 7 : 1))
    for (int64_t j = 0; j < N; j += (N > 100 ? 13 : 1)) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p)
        s += (double)kb_bf16_to_f32(a[i * K + p]) * kb_bf16_to_f32(b[p * N + j]);
      uint16_t want = kb_f32_to_bf16((float)s);
      float got = kb_bf16_to_f32(c[i * N + j]);
      double e = fabs(got - kb_bf16_to_f32(want));
      maxerr = std::max(maxerr, e / (fabs(s) + 1e-3));
      ++checked;
      if (std::abs((int)c[i * N + j] - (int)want) > 1) ++bad;
    }
  if (bestpk < 1e9)
    printf("ukernel in L1: %.1f GFLOP/s\n", 2000.0 * 2 * 256 * KB_MR * KB_NR / bestpk / 1e9);
  printf("M=%ld K=%ld N=%ld best %.3f ms  %.1f GFLOP/s  checked %ld bad(>1ulp) %ld maxrel %.2e\n",
         M, K, N, best * 1e3, 2.0 * M * K * N / best / 1e9, checked, bad, maxerr);
#ifdef KB_AMX_MODEL
  // The check means nothing for AMX unless the tile model actually computed the products.
  if (emu_dp_count == 0) {
    printf("the AMX path did not run\n");
    return 1;
  }
#endif
  return bad == 0 && checked > 0 ? 0 : 1;
}
