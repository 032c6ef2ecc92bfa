// Time per value of input generation, the vector path (what kbench runs before every timed call)
// against the scalar reference, on a 12p_RMSNorm-sized bf16 normal fill at 1 and 2 threads.
//   build/bench/input_gen_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstdint>

#include "core/input_gen.h"
#include "core/input_gen_internal.h"
#include "core/tensor.h"

namespace kbench {
namespace {

// 12p_RMSNorm's x at the cpu size: 67,108,864 bf16 values.
constexpr std::int64_t kValues = std::int64_t{1} << 26;

using Fill = void (*)(const InitRule&, std::uint64_t, std::uint32_t, kb_tensor&);

void fill_benchmark(benchmark::State& state, Fill fill) {
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(static_cast<int>(state.range(0)));
  HostTensor t(TensorSpec{"x", KB_BF16, {kValues}});
  kb_tensor view = t.view();
  fill(InitRule::normal(), 1, 0, view);  // first touch of the pages, outside the timing
  std::uint64_t seed = 2;
  for (auto _ : state) {
    fill(InitRule::normal(), seed++, 0, view);
    benchmark::DoNotOptimize(t.data());
    benchmark::ClobberMemory();
  }
  omp_set_num_threads(saved_threads);
  // Seconds per value, printed with an SI prefix (n = ns).
  state.counters["per_value"] = benchmark::Counter(
      static_cast<double>(kValues),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_FillNormalBf16Vector(benchmark::State& state) {
  fill_benchmark(state, fill_input);
}
void BM_FillNormalBf16Scalar(benchmark::State& state) {
  fill_benchmark(state, input_gen_detail::fill_input_scalar);
}

BENCHMARK(BM_FillNormalBf16Vector)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FillNormalBf16Scalar)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kbench

BENCHMARK_MAIN();
