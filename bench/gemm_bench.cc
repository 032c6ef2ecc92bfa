// Each GEMM library path called directly (bf16 operands, bf16 output) at the shapes of the matmul
// baselines and the probe's library-ceiling shape, on one thread and on two: the yardstick for "the
// baseline is within 10% of a direct library call" and for how far a baseline's GEMMs can scale
// with its thread budget. Prints speeds; never passes or fails.
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
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  HostTensor a({"a", KB_BF16, {m, k}}), b({"b", KB_BF16, {k, n}}), c({"c", KB_BF16, {m, n}});
  kb_tensor a_view = a.view(), b_view = b.view();
  fill_input(InitRule::normal(1.0), 1, 0, a_view);
  fill_input(InitRule::normal(0.02), 1, 1, b_view);
  const ops::Matrix ma{a.data(), KB_BF16, m, k, k}, mb{b.data(), KB_BF16, k, n, n};
  const ops::MutableMatrix mc{c.data(), KB_BF16, m, n, n};
  if (!ops::gemm_on_path(path, ma, mb, false, mc)) {  // also creates and caches the primitive
    state.SkipWithError("this path cannot run on this CPU");
    return;
  }
  for (auto _ : state) {
    ops::gemm_on_path(path, ma, mb, false, mc);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2e-9 * static_cast<double>(m * n * k),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// (M, N, K, threads): 8p cpu, 41k cpu, 9p's gate/up and down GEMMs at cpu, the probe's ceiling
// shape; each on one and two threads.
void shapes(benchmark::internal::Benchmark* b) {
  for (const int threads : {1, 2})
    b->Args({768, 2688, 768, threads})
        ->Args({768, 1536, 1536, threads})
        ->Args({512, 1792, 512, threads})
        ->Args({512, 512, 1792, threads})
        ->Args({2048, 2048, 2048, threads});
  b->ArgNames({"m", "n", "k", "threads"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK_CAPTURE(gemm_benchmark, onednn_bf16, ops::GemmPath::kOnednnBf16)->Apply(shapes);
BENCHMARK_CAPTURE(gemm_benchmark, onednn_f32, ops::GemmPath::kOnednnF32)->Apply(shapes);
BENCHMARK_CAPTURE(gemm_benchmark, openblas_sgemm, ops::GemmPath::kOpenblasSgemm)->Apply(shapes);

}  // namespace
}  // namespace kbench

BENCHMARK_MAIN();
