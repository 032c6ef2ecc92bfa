// Each GEMM library path called directly (bf16 operands, bf16 output) at the shapes of the matmul
// baselines and the probe's library-ceiling shape, with the weight stored (K, N) and (N, K), on one
// thread and on two: the yardstick for "the baseline is within 10% of a direct library call", for
// how far a baseline's GEMMs can scale with its thread budget, and for how the weight's layout
// moves each library. A path this machine cannot run (oneMKL not loaded, no bf16 kernel) is
// reported as skipped. Prints speeds; never passes or fails.
//   build/bench/gemm_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <omp.h>

#include <cstdint>

#include "core/input_gen.h"
#include "core/tensor.h"
#include "ops/gemm.h"

namespace kbench {
namespace {

void gemm_benchmark(benchmark::State& state, ops::GemmPath path) {
  const std::int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int threads = static_cast<int>(state.range(3));
  const bool b_transposed = state.range(4) != 0;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const std::int64_t b_rows = b_transposed ? n : k, b_cols = b_transposed ? k : n;
  HostTensor a({"a", KB_BF16, {m, k}}), b({"b", KB_BF16, {b_rows, b_cols}}),
      c({"c", KB_BF16, {m, n}});
  kb_tensor a_view = a.view(), b_view = b.view();
  fill_input(InitRule::normal(1.0), 1, 0, a_view);
  fill_input(InitRule::normal(0.02), 1, 1, b_view);
  const ops::Matrix ma{a.data(), KB_BF16, m, k, k}, mb{b.data(), KB_BF16, b_rows, b_cols, b_cols};
  const ops::MutableMatrix mc{c.data(), KB_BF16, m, n, n};
  // The first call also creates and caches the primitive (oneDNN) or loads the library (oneMKL).
  if (!ops::gemm_on_path(path, ma, mb, b_transposed, mc)) {
    state.SkipWithError("this path cannot run on this CPU");
    return;
  }
  for (auto _ : state) {
    ops::gemm_on_path(path, ma, mb, b_transposed, mc);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * static_cast<double>(m * n * k),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// (M, N, K, threads, weight stored (N, K)): 8p cpu, 41k cpu, 9p's gate/up and down GEMMs at cpu,
// 32k's two GEMMs at cpu, the probe's ceiling shape; each on one and two threads, with either
// weight layout.
void shapes(benchmark::internal::Benchmark* b) {
  for (const int b_transposed : {0, 1})
    for (const int threads : {1, 2})
      b->Args({768, 2688, 768, threads, b_transposed})
          ->Args({768, 1536, 1536, threads, b_transposed})
          ->Args({512, 1792, 512, threads, b_transposed})
          ->Args({512, 512, 1792, threads, b_transposed})
          ->Args({2048, 1024, 512, threads, b_transposed})
          ->Args({2048, 256, 1024, threads, b_transposed})
          ->Args({2048, 2048, 2048, threads, b_transposed});
  b->ArgNames({"m", "n", "k", "threads", "nt"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace
}  // namespace kbench

int main(int argc, char** argv) {
  for (const kbench::ops::GemmPath path : kbench::ops::kAllGemmPaths)
    benchmark::RegisterBenchmark(kbench::ops::gemm_path_name(path), kbench::gemm_benchmark, path)
        ->Apply(kbench::shapes);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
